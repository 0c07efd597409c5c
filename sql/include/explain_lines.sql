-- explain_lines(query, pattern): the lines of query's EXPLAIN ANALYZE (no
-- costs, timings or summary) that match pattern, each time in them
-- written "N ms".
CREATE OR REPLACE FUNCTION explain_lines(query text, pattern text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line ~ pattern THEN
      RETURN NEXT regexp_replace(line, '[0-9.]+ ms', 'N ms');
    END IF;
  END LOOP;
END
$$;
