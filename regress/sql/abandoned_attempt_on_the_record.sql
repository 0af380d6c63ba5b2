-- Bug regression (review of 0.3.4): acquired and resumed write no audit row, so a holder that
-- called the processor and died before its checkpoint left no trace once the record was history;
-- a takeover showed only as an attempt number jumping. Now the attempt that takes over (resume,
-- or a new generation after expiry) appends a row for the attempt it supersedes: outcome
-- abandoned, its attempt, its lease end, its last recovery point, handler_called true (a
-- checkpoint said so) or NULL (unknown).
\set SHOW_CONTEXT never
-- A new key writes no audit row (acquired is not on the record until the holder acts).
SELECT handle AS h, attempt AS a FROM idem.acquire('t-ab', 'abandoned-key-0001', '{"n":1}'::jsonb, lease => '20 milliseconds') \gset
SELECT count(*) AS rows_for_a_new_key FROM idem.mutations WHERE tenant_id = 't-ab';
-- The holder dies without a checkpoint; the next request takes over.
SELECT pg_sleep(0.05);
SELECT outcome, attempt AS a2, handle AS h2 FROM idem.acquire('t-ab', 'abandoned-key-0001', '{"n":1}'::jsonb) \gset
SELECT :'outcome' AS outcome;
SELECT outcome, attempt = :a AS the_dead_attempt, handler_called, recovery_point, completed_at IS NOT NULL AS lease_end_kept,
       error_message LIKE 'lease ran out at %; taken over by attempt ' || :a2 AS says_who_took_over
  FROM idem.mutations WHERE tenant_id = 't-ab' ORDER BY mutation_id;
-- A holder that checkpointed "charged" and died: the row says the handler ran, with its data.
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-ab', 'abandoned-key-0003', '{"n":3}'::jsonb, lease => '20 milliseconds') \gset
SELECT idem.checkpoint(:'h3', :a3, 'charged', '{"charge_id":"ch_3"}') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.05);
SELECT outcome, recovery_point FROM idem.acquire('t-ab', 'abandoned-key-0003', '{"n":3}'::jsonb);
SELECT outcome, attempt = :a3 AS the_dead_attempt, handler_called, recovery_point, handler_response
  FROM idem.mutations WHERE tenant_id = 't-ab' AND client_key = 'abandoned-key-0003' ORDER BY mutation_id;
-- A checkpoint before the call (handler_called => false), then death: unknown.
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-ab', 'abandoned-key-0004', '{"n":4}'::jsonb, lease => '20 milliseconds') \gset
SELECT idem.checkpoint(:'h4', :a4, 'about_to_charge', NULL, handler_called => false) IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.05);
SELECT outcome FROM idem.acquire('t-ab', 'abandoned-key-0004', '{"n":4}'::jsonb);
SELECT outcome, handler_called FROM idem.mutations WHERE tenant_id = 't-ab' AND client_key = 'abandoned-key-0004' ORDER BY mutation_id;
-- An abandoned lease that became history: the new generation puts the old attempt on the record.
SELECT handle AS h5, attempt AS a5 FROM idem.acquire('t-ab', 'abandoned-key-0005', '{"n":5}'::jsonb, lease => '20 milliseconds', ttl => '20 milliseconds') \gset
SELECT pg_sleep(0.1);
SELECT outcome, generation FROM idem.acquire('t-ab', 'abandoned-key-0005', '{"n":5}'::jsonb);
SELECT outcome, generation, attempt = :a5 AS the_dead_attempt, handler_called FROM idem.mutations
 WHERE tenant_id = 't-ab' AND client_key = 'abandoned-key-0005' ORDER BY mutation_id;
-- key_history shows it. Beside the charge the resumed attempt recorded (under the same processor
-- key), the abandoned attempt is not listed as a double charge; a generation whose abandoned and
-- released attempts may both have charged, with no charge recorded, is.
SELECT idem.complete(:'h2', :a2, 201, '{}', 'ok', 'ord-ab-1', '{"charge_id":"ch_ab_1"}');
SELECT outcome, attempt = :a AS first_attempt FROM idem.key_history('t-ab', 'abandoned-key-0001');
SELECT handle AS h9, attempt AS a9 FROM idem.acquire('t-ab', 'abandoned-key-0009', '{"n":9}'::jsonb, lease => '20 milliseconds') \gset
SELECT pg_sleep(0.05);
SELECT handle AS h9b, attempt AS a9b FROM idem.acquire('t-ab', 'abandoned-key-0009', '{"n":9}'::jsonb) \gset
SELECT idem.release(:'h9b', :a9b, 'processor timeout');
SELECT client_key, executions, uncertain, charge_ids FROM idem.double_charges() WHERE tenant_id = 't-ab' ORDER BY client_key;
-- A released attempt is already on the record: its takeover adds no abandoned row.
SELECT handle AS h6, attempt AS a6 FROM idem.acquire('t-ab', 'abandoned-key-0006', '{"n":6}'::jsonb) \gset
SELECT idem.checkpoint(:'h6', :a6, 'charged', '{"charge_id":"ch_6"}') IS NOT NULL AS checkpointed;
SELECT idem.release(:'h6', :a6, 'processor timeout after the charge');
SELECT outcome FROM idem.acquire('t-ab', 'abandoned-key-0006', '{"n":6}'::jsonb);
SELECT outcome FROM idem.mutations WHERE tenant_id = 't-ab' AND client_key = 'abandoned-key-0006' ORDER BY mutation_id;
