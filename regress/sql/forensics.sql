-- The runbook's questions, one query each (docs/runbook.md copies these). Plants a double charge,
-- a stuck lease and a reused key next to clean keys, and asserts that each query returns exactly
-- the planted anomaly.
\set SHOW_CONTEXT never
-- A clean key: one create, its replays.
SELECT handle AS hc, attempt AS ac FROM idem.acquire('t-forensic', 'clean-key-0000001', '{"cart":"c1"}'::jsonb) \gset
SELECT idem.complete(:'hc', :ac, 201, '{}', 'order c', 'ord-clean', '{"charge_id":"ch_clean"}', 'paid');
SELECT outcome FROM idem.acquire('t-forensic', 'clean-key-0000001', '{"cart":"c1"}'::jsonb);
SELECT outcome FROM idem.acquire('t-forensic', 'clean-key-0000001', '{"cart":"c1"}'::jsonb);
-- A clean resume: the first attempt charged (checkpoint), died; the second verified and got the
-- same charge back. Two executing attempts, one charge: not a double charge.
SELECT handle AS hr, attempt AS ar FROM idem.acquire('t-forensic', 'resumed-key-00001', '{"cart":"r1"}'::jsonb, lease => '50 milliseconds') \gset
SELECT idem.checkpoint(:'hr', :ar, 'charge_created', '{"charge_id":"ch_r"}') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.1);
SELECT attempt AS ar2, handle AS h_ar2 FROM idem.acquire('t-forensic', 'resumed-key-00001', '{"cart":"r1"}'::jsonb) \gset
SELECT idem.complete(:'h_ar2', :ar2, 201, '{}', 'order r', 'ord-resumed', '{"charge_id":"ch_r"}', 'paid');
-- PLANTED double charge: the first attempt's charge ch_1 was recorded, the resumed attempt
-- charged again (ch_2) instead of verifying.
SELECT handle AS hd, attempt AS ad FROM idem.acquire('t-forensic', 'double-key-000001', '{"cart":"d1"}'::jsonb, lease => '50 milliseconds') \gset
SELECT idem.checkpoint(:'hd', :ad, 'charge_created', '{"charge_id":"ch_1"}') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.1);
SELECT attempt AS ad2, handle AS h_ad2 FROM idem.acquire('t-forensic', 'double-key-000001', '{"cart":"d1"}'::jsonb) \gset
SELECT idem.complete(:'h_ad2', :ad2, 201, '{}', 'order d', 'ord-double', '{"charge_id":"ch_2"}', 'paid');
-- PLANTED stuck lease: checkpointed, then its holder vanished.
SELECT handle AS hs, attempt AS as_ FROM idem.acquire('t-forensic', 'stuck-key-0000001', '{"cart":"s1"}'::jsonb, lease => '50 milliseconds') \gset
SELECT idem.checkpoint(:'hs', :as_, 'charge_created', '{"charge_id":"ch_s"}') IS NOT NULL AS checkpointed;
-- PLANTED reused key: the record expired (ttl 50 ms) and the key made a second order.
SELECT handle AS hu, attempt AS au FROM idem.acquire('t-forensic', 'reused-key-000001', '{"cart":"u1"}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.complete(:'hu', :au, 201, '{}', 'order u1', 'ord-reuse-1', '{"charge_id":"ch_u1"}', 'paid');
SELECT pg_sleep(0.1);
SELECT attempt AS au2, handle AS h_au2, generation FROM idem.acquire('t-forensic', 'reused-key-000001', '{"cart":"u2"}'::jsonb) \gset
SELECT idem.complete(:'h_au2', :au2, 201, '{}', 'order u2', 'ord-reuse-2', '{"charge_id":"ch_u2"}', 'paid');
SELECT pg_sleep(0.1);
-- A client key shared by two scopes (a checkout and a refund endpoint) under the key scope
-- route: two records, one order each, not a double charge; key_reuse lists it (two callers,
-- two routes). Under the default scope the second is refused (key_reused, on the record).
SELECT handle AS h1, attempt AS a1 FROM idem.acquire('t-forensic', 'shared-key-000001', '{}'::jsonb, caller => 'checkout', resource => 'POST /charges') \gset
SELECT idem.complete(:'h1', :a1, 201, '{}', 'charge', 'ord-shared-a', '{"charge_id":"ch_sa"}');
SELECT outcome, key_reuse_differs FROM idem.acquire('t-forensic', 'shared-key-000001', '{}'::jsonb, caller => 'refunds', resource => 'POST /refunds');
SET idem.key_scope = route;
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-forensic', 'shared-key-000001', '{}'::jsonb, caller => 'refunds', resource => 'POST /refunds') \gset
SELECT idem.complete(:'h2', :a2, 201, '{}', 'refund', 'ord-shared-b', '{"refund_id":"re_sb"}');
RESET idem.key_scope;
-- PLANTED unproven repeat: the first attempt called the processor and recorded no charge id,
-- the second charged (ch_p2): nothing shows the two calls were one charge.
SELECT handle AS hp, attempt AS ap FROM idem.acquire('t-forensic', 'unproven-key-0001', '{}'::jsonb, lease => '50 milliseconds') \gset
SELECT idem.checkpoint(:'hp', :ap, 'request_sent', '{"step":"sent"}') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.1);
SELECT attempt AS ap2, handle AS h_ap2 FROM idem.acquire('t-forensic', 'unproven-key-0001', '{}'::jsonb) \gset
SELECT idem.complete(:'h_ap2', :ap2, 201, '{}', 'order p', 'ord-unproven', '{"charge_id":"ch_p2"}');

-- "Did we charge twice?"
SELECT tenant_id, client_key, caller_id, resource, generation, executions, order_ids, charge_ids FROM idem.double_charges() WHERE tenant_id = 't-forensic';
-- Runbook query 1: the history of one key.
SELECT outcome, mutation_type, generation, handler_called, order_id, handler_response ->> 'charge_id' AS charge, retry_count
  FROM idem.key_history('t-forensic', 'double-key-000001');
-- Runbook query 2: what happened to one order, replays marked.
SELECT source, what, replay FROM idem.order_trail('ord-clean');
-- Runbook query 3: a tenant's recent mutations.
SELECT client_key, outcome FROM idem.recent_mutations('t-forensic', now() - interval '1 hour') ORDER BY client_key, outcome;
-- Stuck leases: the planted one, not the clean or resumed keys.
SELECT client_key, status, recovery_point, recovery_data, why FROM idem.stuck_leases WHERE tenant_id = 't-forensic';
-- The reused-key alert: one key, two orders.
SELECT tenant_id, client_key, order_ids, generations, callers, resources FROM idem.key_reuse('1 hour') WHERE tenant_id = 't-forensic';
-- Auditors may ask all of it.
SELECT f, has_function_privilege('idem_auditor', f, 'EXECUTE') AS auditor_may
  FROM unnest(ARRAY['idem.double_charges(timestamptz)', 'idem.key_history(text,text)', 'idem.order_trail(text)',
                    'idem.recent_mutations(text,timestamptz)', 'idem.key_reuse(interval)']) AS f;
SELECT has_table_privilege('idem_auditor', 'idem.stuck_leases', 'SELECT') AS auditor_reads_stuck_leases;

-- A checkpoint before the processor is called says so (handler_called => false): a resume that
-- then charges once is one execution, not flagged (review of 0.2.0: it was).
SELECT handle AS hn, attempt AS an FROM idem.acquire('t-forensic2', 'step-before-charge', '{}'::jsonb, lease => '50 milliseconds') \gset
SELECT idem.checkpoint(:'hn', :an, 'order_created', '{"order_row":"o1"}', handler_called => false) IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.1);
SELECT attempt AS an2, handle AS h_an2 FROM idem.acquire('t-forensic2', 'step-before-charge', '{}'::jsonb) \gset
SELECT idem.checkpoint(:'h_an2', :an2, 'charge_created', '{"charge_id":"ch_F1"}') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h_an2', :an2, 201, '{}', 'ok', 'ord-f1', '{"charge_id":"ch_F1"}');
SELECT count(*) AS flagged FROM idem.double_charges() WHERE tenant_id = 't-forensic2';
SELECT outcome, handler_called FROM idem.key_history('t-forensic2', 'step-before-charge');
