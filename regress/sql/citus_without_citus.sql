-- 0.4.0's Citus functions on a server without Citus: citus_distribute, citus_prepare_node,
-- citus_check_table and the per-node backlog and lag (_outbox_backlog_here, _outbox_lag_here,
-- _citus_ask_each_node) refuse with ERR_CITUS_MISSING and change nothing. The tenant-first forms of complete,
-- checkpoint, release, handler_key, resolve_stuck and retry_stuck (which Citus runs on the
-- tenant's node) work on one node too, and refuse a handle of another tenant, or a NULL tenant,
-- with ERR_ARGUMENT_INVALID.
\set SHOW_CONTEXT never
SELECT expect_error($$SELECT idem.citus_distribute()$$) AS distribute;
SELECT expect_error($$SELECT idem.citus_prepare_node()$$) AS prepare_node;
SELECT expect_error($$SELECT * FROM idem.citus_check_table('idem.keys')$$) AS check_table;
SELECT expect_error($$SELECT * FROM idem._outbox_backlog_here('c', '{t}', now())$$) AS backlog_here;
SELECT expect_error($$SELECT * FROM idem._outbox_lag_here()$$) AS lag_here;
SELECT expect_error($$SELECT * FROM idem._citus_ask_each_node('SELECT 1', 'x', 'y')$$) AS ask_each_node;
SELECT count(*) AS foreign_keys_kept FROM pg_constraint
 WHERE connamespace = 'idem'::regnamespace AND contype = 'f';
SELECT last_value AS audit_sequence_untouched FROM idem.mutations_mutation_id_seq WHERE last_value >= 1 << 48;

-- Tenant first, on one node: acquire, checkpoint, release, acquire again (resumes), complete.
SELECT handle AS h, attempt AS a FROM idem.acquire('t-first', 'tenant-first-key-0001', '{"n":1}'::jsonb) \gset
SELECT idem.checkpoint('t-first', :'h', :a, 'charge_created', '{"charge":"ch_1"}') IS NOT NULL AS checkpointed;
SELECT idem.handler_key('t-first', :'h', :a) = idem.handler_key(:'h', :a) AS handler_key_tenant_first;
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
SELECT expect_error(format($$SELECT idem.handler_key('t-other', %L, %s)$$, :'h3', :a3)) AS handler_key_other_tenant;
SELECT status FROM idem.keys WHERE tenant_id = 't-first' AND client_key = 'tenant-first-key-0002';
-- The operator's tenant-first forms: another tenant's handle refused and nothing changed, then
-- retry_stuck ends the lease and resolve_stuck gives the response the key replays.
SELECT expect_error(format($$SELECT idem.resolve_stuck('t-other', %L, %s, 'verified', 201, ''::bytea, '{}'::jsonb)$$, :'h3', :a3)) AS resolve_other_tenant;
SELECT expect_error(format($$SELECT * FROM idem.retry_stuck('t-other', %L, %s, 'holder gone')$$, :'h3', :a3)) AS retry_other_tenant;
SELECT count(*) AS no_operator_action FROM idem.operator_actions WHERE tenant_id = 't-first';
SELECT status, resumable_at <= clock_timestamp() AS lease_ended
  FROM idem.retry_stuck('t-first', :'h3', :a3, 'holder gone');
SELECT idem.resolve_stuck('t-first', :'h3', :a3, 'charge ch_3 verified at the processor', 201, 'paid'::bytea, '{}'::jsonb);
SELECT outcome, response_status, convert_from(response_body, 'UTF8') AS body
  FROM idem.acquire('t-first', 'tenant-first-key-0002', '{}'::jsonb);
SELECT string_agg(action, ',' ORDER BY action_id) AS operator_actions FROM idem.operator_actions WHERE tenant_id = 't-first';
-- A resolve_stuck call whose arguments are all untyped (a driver's unknown parameters) names the
-- handle form only: the tenant-first form takes every argument.
PREPARE untyped_resolve AS SELECT idem.resolve_stuck($1, $2, $3, $4, $5);
SELECT expect_error(format($$EXECUTE untyped_resolve(%L, NULL, 'r', '201', '\x')$$, :'h3')) AS untyped_resolve;
DEALLOCATE untyped_resolve;
