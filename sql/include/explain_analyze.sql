-- explain_analyze(query): EXPLAIN ANALYZE without timings and without the
-- consumed capacity, which depends on which shards rows fell in.
CREATE OR REPLACE FUNCTION explain_analyze(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || query LOOP
    IF line !~ 'Consumed Capacity' THEN
      RETURN NEXT line;
    END IF;
  END LOOP;
END
$$;
