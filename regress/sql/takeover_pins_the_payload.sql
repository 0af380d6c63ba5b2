-- Bug (review of 0.3.5): a takeover does not pin the generation's payload. Attempt 1 calls the
-- processor under the generation's key and dies; attempt 2 resumes it (the audit says attempt 1
-- was abandoned, handler_called unknown) and releases saying it did not call the handler
-- itself. Nothing is pinned, so the next request with another body is a fresh attempt of the
-- same generation under the same processor key: the charge attempt 1 may have made is matched
-- to another amount (issue 20, item 4: "a checkpoint before the call, a release, a takeover"
-- pin it). Expected: another body is a mismatch, and the same body still gets a fresh attempt.
\set SHOW_CONTEXT never
SELECT handle AS h1, attempt AS a1, handler_key AS k
  FROM idem.acquire('t-tpin', 'takeover-pin-key-001', '{"amount":100}'::jsonb, lease => '100 milliseconds') \gset
-- Attempt 1 sends the charge under :k, then dies before any checkpoint.
SELECT pg_sleep(0.3);
SELECT outcome AS took_over, handle AS h2, attempt AS a2, handler_key = :'k' AS same_processor_key
  FROM idem.acquire('t-tpin', 'takeover-pin-key-001', '{"amount":100}'::jsonb) \gset
SELECT :'took_over' AS took_over, :'same_processor_key' AS same_processor_key;
SELECT idem.release(:'h2', :a2, 'our own check failed before calling the processor', handler_called => false);
SELECT outcome, attempt = :a1 AS first_attempt, handler_called FROM idem.mutations
 WHERE tenant_id = 't-tpin' ORDER BY mutation_id;
SELECT status, payload_pinned FROM idem.keys WHERE tenant_id = 't-tpin' AND client_key = 'takeover-pin-key-001';
-- Another body under the key attempt 1 may have charged: refused.
SELECT outcome, handler_key IS NULL AS no_processor_key
  FROM idem.acquire('t-tpin', 'takeover-pin-key-001', '{"amount":999}'::jsonb);
-- The same body: a fresh attempt under the same key.
SELECT outcome, handler_key = :'k' AS same_processor_key
  FROM idem.acquire('t-tpin', 'takeover-pin-key-001', '{"amount":100}'::jsonb);
