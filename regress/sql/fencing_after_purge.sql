-- Bug regression: a stale holder must stay fenced out after its key's record was purged and the
-- key acquired afresh. The fencing token used to be a per-record attempt number (1, 2, ...) that
-- lived in the record; purge deletes the record, so a new record started again at attempt 1 and a
-- holder that lost its lease at attempt 1 (before the purge) could record its result on someone
-- else's request.
-- Fixed: tokens come from one global sequence (idem.fencing_token_seq), so a token is never
-- issued twice, not even to a record created again after a purge. The stale holder gets
-- ERR_LEASE_LOST (IK005) and the new request's record is untouched. Tokens are shown by name
-- (expect_error with tokens, see 00_setup).
\set SHOW_CONTEXT never

--
-- Takeover, result, expiry, purge, new request: the first holder wakes up
--
-- A: short lease; it stalls (say, in a long call to the payment processor).
SELECT handle AS h, attempt AS a_old
  FROM idem.acquire('t-fence', 'fence-key-000001', '{"amount":1}'::jsonb, lease => '50 milliseconds', ttl => '1 hour') \gset
SELECT pg_sleep(0.1);
-- B takes over (resumed, with a short ttl of its own) and completes; the record expires and is
-- purged.
SELECT outcome AS b_outcome, attempt AS b_tok, handle AS h_b_tok
  FROM idem.acquire('t-fence', 'fence-key-000001', '{"amount":1}'::jsonb, ttl => '50 milliseconds') \gset
SELECT :'b_outcome' AS outcome, :b_tok > :a_old AS b_fenced_a;
SELECT idem.complete(:'h_b_tok', :b_tok, 200, '{}', 'B');
SELECT pg_sleep(0.1);
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
SELECT count(*) AS purged_record_left FROM idem.keys WHERE tenant_id = 't-fence';
-- C: a new request with the same key and another payload executes as a new record, in the next
-- generation (idem.retired_keys remembers it), with a token never issued before.
SELECT outcome AS c_outcome, attempt AS c_tok, handle AS h_c_tok, generation AS c_generation, record_of(handle) = record_of(:'h') AS c_same_handle
  FROM idem.acquire('t-fence', 'fence-key-000001', '{"amount":999}'::jsonb) \gset
SELECT :'c_outcome' AS outcome, :c_generation AS generation, :'c_same_handle'::boolean AS same_handle,
       :c_tok > :b_tok AS c_token_new, :c_tok <> :a_old AS a_token_not_reissued;
-- A, whose lease was taken over, cannot record anything on C's record.
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'h', :a_old, 'stale'), jsonb_build_object('a_old', :a_old, 'c_tok', :c_tok)) AS stale_checkpoint;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h', :a_old, '{}', 'A stale'), jsonb_build_object('a_old', :a_old, 'c_tok', :c_tok)) AS stale_complete;
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'h', :a_old), jsonb_build_object('a_old', :a_old, 'c_tok', :c_tok)) AS stale_release;
-- Nor can B, whose record was purged.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h_b_tok', :b_tok, '{}', 'B again'), jsonb_build_object('b_tok', :b_tok, 'c_tok', :c_tok)) AS stale_complete_b;
SELECT status, attempt = :c_tok AS c_token, recovery_point, response_status, response_body,
       payload_hash = idem.payload_hash('{"amount":999}'::jsonb) AS c_payload
  FROM idem.keys WHERE tenant_id = 't-fence' AND client_key = 'fence-key-000001';
-- C completes and its own response replays.
SELECT idem.complete(:'h_c_tok', :c_tok, 201, '{}', 'C');
SELECT outcome, response_status, response_body FROM idem.acquire('t-fence', 'fence-key-000001', '{"amount":999}'::jsonb);

--
-- The same through release: B releases (transient failure) instead of completing
--
SELECT handle AS h2, attempt AS a2_old FROM idem.acquire('t-fence', 'fence-key-000002', '{"amount":2}'::jsonb, lease => '50 milliseconds', ttl => '1 hour') \gset
SELECT pg_sleep(0.1);
SELECT outcome AS b2_outcome, attempt AS b2_tok, handle AS h_b2_tok
  FROM idem.acquire('t-fence', 'fence-key-000002', '{"amount":2}'::jsonb, ttl => '50 milliseconds') \gset
SELECT :'b2_outcome' AS outcome, :b2_tok > :a2_old AS b_fenced_a;
SELECT idem.release(:'h_b2_tok', :b2_tok, 'processor timeout');
SELECT pg_sleep(0.1);
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
SELECT count(*) AS purged_record_left FROM idem.keys WHERE tenant_id = 't-fence' AND client_key = 'fence-key-000002';
SELECT outcome AS c2_outcome, attempt AS c2_tok, handle AS h_c2_tok FROM idem.acquire('t-fence', 'fence-key-000002', '{"amount":2}'::jsonb) \gset
SELECT :'c2_outcome' AS outcome, :c2_tok > :b2_tok AS c_token_new;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h2', :a2_old, '{}', 'A stale'), jsonb_build_object('a2_old', :a2_old, 'c2_tok', :c2_tok)) AS stale_complete;
SELECT status, attempt = :c2_tok AS c_token, response_status FROM idem.keys WHERE tenant_id = 't-fence' AND client_key = 'fence-key-000002';
