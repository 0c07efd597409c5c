-- same_rows(query, foreign_table, local_table): whether query, a format()
-- string whose %s is a table, gives the same rows in the same order on the
-- foreign table as on its local copy.  A difference is shown in a NOTICE.
CREATE OR REPLACE FUNCTION same_rows(query text, ftable text, ltable text)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  got text[];
  want text[];
BEGIN
  EXECUTE format('SELECT array(SELECT r::text FROM (%s) r)', format(query, ftable)) INTO got;
  EXECUTE format('SELECT array(SELECT r::text FROM (%s) r)', format(query, ltable)) INTO want;
  IF got IS DISTINCT FROM want THEN
    RAISE NOTICE 'foreign: %, local: %', got, want;
  END IF;
  RETURN got IS NOT DISTINCT FROM want AND cardinality(want) > 0;
END
$$;
