-- Bug regression (review of 0.3.4): after release (the documented path for a processor timeout)
-- the next attempt of the same generation could carry another body and got the same processor
-- key: a timed-out charge that did go through was matched to another amount, or the processor
-- refused the key forever. Now a release that does not say handler_called => false pins the
-- generation's payload: another body is a mismatch until the record becomes history.
\set SHOW_CONTEXT never
-- A processor timeout: released, handler_called unknown.
SELECT handle AS h, attempt AS a, handler_key AS k FROM idem.acquire('t-pin', 'pinned-key-0000001', '{"amount":100}'::jsonb) \gset
SELECT idem.release(:'h', :a, 'processor timeout');
SELECT status, payload_pinned FROM idem.keys WHERE tenant_id = 't-pin' AND client_key = 'pinned-key-0000001';
-- Another body: refused, by the fast path (no lock) and the general path alike.
SELECT outcome, attempt IS NULL AS runs_nothing, handler_key IS NULL AS no_key
  FROM idem.acquire('t-pin', 'pinned-key-0000001', '{"amount":200}'::jsonb);
SELECT (idem._acquire_general('t-pin', idem.scope_digest('t-pin', '', '', 'pinned-key-0000001'), 'pinned-key-0000001',
                              idem.payload_hash('{"amount":300}'::jsonb), '', '', NULL, NULL, 'reject', 'create', NULL)).outcome AS general_path;
-- The same body: a fresh attempt of the same generation, under the same processor key.
SELECT handle AS h2, attempt AS a2, outcome, generation, handler_key = :'k' AS same_processor_key
  FROM idem.acquire('t-pin', 'pinned-key-0000001', '{"amount":100}'::jsonb) \gset
SELECT :'outcome' AS outcome, :generation AS generation, :'same_processor_key' AS same_processor_key, :a2 > :a AS new_token;
-- Still pinned after the fresh attempt is released saying it did not call the handler.
SELECT idem.release(:'h2', :a2, 'validation failed', handler_called => false);
SELECT outcome FROM idem.acquire('t-pin', 'pinned-key-0000001', '{"amount":200}'::jsonb);
-- A release that says the handler was not called leaves the payload free.
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-pin', 'pinned-key-0000002', '{"amount":100}'::jsonb) \gset
SELECT idem.release(:'h3', :a3, 'card refused by our own checks', handler_called => false);
SELECT payload_pinned FROM idem.keys WHERE tenant_id = 't-pin' AND client_key = 'pinned-key-0000002';
SELECT outcome FROM idem.acquire('t-pin', 'pinned-key-0000002', '{"amount":200}'::jsonb);
-- handler_called => true pins as well.
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-pin', 'pinned-key-0000003', '{"amount":100}'::jsonb) \gset
SELECT idem.release(:'h4', :a4, 'processor answered 500 after charging', handler_called => true);
SELECT outcome FROM idem.acquire('t-pin', 'pinned-key-0000003', '{"amount":200}'::jsonb);
-- A new generation frees it: the pin lasts while the record does.
SELECT handle AS h5, attempt AS a5 FROM idem.acquire('t-pin', 'pinned-key-0000004', '{"amount":100}'::jsonb, ttl => '20 milliseconds') \gset
SELECT idem.release(:'h5', :a5, 'processor timeout');
SELECT pg_sleep(0.05);
SELECT outcome, generation FROM idem.acquire('t-pin', 'pinned-key-0000004', '{"amount":200}'::jsonb);
SELECT payload_pinned FROM idem.keys WHERE tenant_id = 't-pin' AND client_key = 'pinned-key-0000004';
-- The audit trail says what is known: unknown (NULL), false, true.
SELECT client_key, attempt IS NOT NULL AS has_attempt, handler_called, error_message FROM idem.mutations
 WHERE tenant_id = 't-pin' AND outcome = 'released' ORDER BY mutation_id;
-- double_charges counts released attempts that may have called the handler. Beside a recorded
-- charge they are that charge (the same processor key): not listed. Two that may have charged
-- with none recorded: listed, with the processor key to look the charge up under.
SELECT handle AS h6, attempt AS a6, handler_key AS k6 FROM idem.acquire('t-pin', 'pinned-key-0000006', '{"amount":600}'::jsonb) \gset
SELECT idem.release(:'h6', :a6, 'processor timeout');
SELECT handle AS h6b, attempt AS a6b FROM idem.acquire('t-pin', 'pinned-key-0000006', '{"amount":600}'::jsonb) \gset
SELECT idem.complete(:'h6b', :a6b, 201, '{}', 'ok', 'ord-6', '{"charge_id":"ch_6"}');
SELECT handle AS h7, attempt AS a7, handler_key AS k7 FROM idem.acquire('t-pin', 'pinned-key-0000007', '{"amount":700}'::jsonb) \gset
SELECT idem.release(:'h7', :a7, 'processor timeout');
SELECT handle AS h7b, attempt AS a7b FROM idem.acquire('t-pin', 'pinned-key-0000007', '{"amount":700}'::jsonb) \gset
SELECT idem.release(:'h7b', :a7b, 'processor timeout again');
SELECT handle AS h8, attempt AS a8 FROM idem.acquire('t-pin', 'pinned-key-0000008', '{"amount":800}'::jsonb) \gset
SELECT idem.release(:'h8', :a8, 'refused before the call', handler_called => false);
SELECT handle AS h8b, attempt AS a8b FROM idem.acquire('t-pin', 'pinned-key-0000008', '{"amount":800}'::jsonb) \gset
SELECT idem.release(:'h8b', :a8b, 'processor timeout');
SELECT client_key, generation, executions, uncertain, order_ids, charge_ids, processor_key = :'k7' AS processor_key_given
  FROM idem.double_charges() WHERE tenant_id = 't-pin';
