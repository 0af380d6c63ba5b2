-- 0.4.0's Citus functions on a server without Citus: citus_distribute, citus_prepare_node and
-- citus_check_table refuse with ERR_CITUS_MISSING and change nothing. The tenant-first forms of
-- complete, checkpoint and release (which Citus runs on the tenant's node) work on one node too,
-- and refuse a handle of another tenant, or a NULL tenant, with ERR_ARGUMENT_INVALID.
\set SHOW_CONTEXT never
SELECT expect_error($$SELECT idem.citus_distribute()$$) AS distribute;
SELECT expect_error($$SELECT idem.citus_prepare_node()$$) AS prepare_node;
SELECT expect_error($$SELECT * FROM idem.citus_check_table('idem.keys')$$) AS check_table;
SELECT count(*) AS foreign_keys_kept FROM pg_constraint
 WHERE connamespace = 'idem'::regnamespace AND contype = 'f';
SELECT last_value AS audit_sequence_untouched FROM idem.mutations_mutation_id_seq WHERE last_value >= 1 << 48;

-- Tenant first, on one node: acquire, checkpoint, release, acquire again (resumes), complete.
SELECT handle AS h, attempt AS a FROM idem.acquire('t-first', 'tenant-first-key-0001', '{"n":1}'::jsonb) \gset
SELECT idem.checkpoint('t-first', :'h', :a, 'charge_created', '{"charge":"ch_1"}') IS NOT NULL AS checkpointed;
SELECT idem.release('t-first', :'h', :a, 'processor timeout');
SELECT outcome, recovery_point, handle AS h2, attempt AS a2
  FROM idem.acquire('t-first', 'tenant-first-key-0001', '{"n":1}'::jsonb) \gset
\echo :outcome :recovery_point
SELECT idem.complete('t-first', :'h2', :a2, 201, '{}'::jsonb, 'made'::bytea);
SELECT outcome, response_status, convert_from(response_body, 'UTF8') AS body
  FROM idem.acquire('t-first', 'tenant-first-key-0001', '{"n":1}'::jsonb);
-- Another tenant's handle, or no tenant: refused, and the record is left as it was.
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-first', 'tenant-first-key-0002', '{}'::jsonb) \gset
SELECT expect_error(format($$SELECT idem.complete('t-other', %L, %s, 200, '{}'::jsonb, ''::bytea)$$, :'h3', :a3)) AS other_tenant;
SELECT expect_error(format($$SELECT idem.release(NULL, %L, %s)$$, :'h3', :a3)) AS null_tenant;
SELECT expect_error(format($$SELECT idem.checkpoint('t-other', %L, %s, 'x')$$, :'h3', :a3)) AS checkpoint_other_tenant;
SELECT status FROM idem.keys WHERE tenant_id = 't-first' AND client_key = 'tenant-first-key-0002';
