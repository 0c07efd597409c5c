-- explain_analyze(query): EXPLAIN ANALYZE without timings, buffers and the
-- consumed capacity (which depends on which shards rows fell in), its row
-- counts printed as every PostgreSQL version prints them (18 writes
-- "rows=3.00") and a sort's memory as "NkB" (it moves by a kB between
-- versions).
CREATE OR REPLACE FUNCTION explain_analyze(query text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, BUFFERS OFF) '
                      || query LOOP
    IF line !~ 'Consumed Capacity' THEN
      RETURN NEXT regexp_replace(regexp_replace(line, 'actual rows=(\d+)\.00 ', 'actual rows=\1 '),
                                 'Memory: \d+kB', 'Memory: NkB', 'g');
    END IF;
  END LOOP;
END
$$;
