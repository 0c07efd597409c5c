-- Capacity budgets: max_read_units_per_second and max_write_units_per_second
-- on a server or a table (the table's wins); EXPLAIN ANALYZE shows the time
-- waited for them.  test/scripts/test_budget.py measures the pace against
-- the capacity DynamoDB reports.
\ir sql/include/server.sql
\ir sql/include/explain_lines.sql
SELECT ddb_create_table('budget_tab', 'k') AS status;
ALTER SERVER ddb OPTIONS (ADD max_read_units_per_second '0');
ALTER SERVER ddb OPTIONS (ADD max_write_units_per_second 'fast');
CREATE USER MAPPING FOR PUBLIC SERVER ddb OPTIONS (max_read_units_per_second '5');
ALTER SERVER ddb OPTIONS (ADD max_read_units_per_second '1000', ADD max_write_units_per_second '1000');
CREATE FOREIGN TABLE budget_kv (k text, v int)
  SERVER ddb OPTIONS (table 'budget_tab', partition_key 'k', max_write_units_per_second '2');
-- five 1-unit writes at 2 units a second take about two seconds
SELECT clock_timestamp() AS started \gset
INSERT INTO budget_kv SELECT 'k' || i, i FROM generate_series(1, 5) i;
SELECT clock_timestamp() - :'started' BETWEEN interval '1.5 s' AND interval '8 s' AS paced;
-- EXPLAIN ANALYZE shows the wait, of reads and of writes, when there is a budget
SELECT explain_lines('SELECT * FROM budget_kv', 'Budget') AS budget_lines;
SELECT explain_lines($$INSERT INTO budget_kv VALUES ('k9', 9)$$, 'Budget') AS budget_lines;
ALTER SERVER ddb OPTIONS (DROP max_read_units_per_second);
SELECT explain_lines('SELECT * FROM budget_kv', 'Budget') AS budget_lines;
SELECT count(*) FROM budget_kv;
SELECT ddb_delete_table('budget_tab');
DROP SERVER ddb CASCADE;
