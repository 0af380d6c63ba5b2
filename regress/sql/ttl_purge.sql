-- Retention: a resolved record replays until its TTL ends, then the key starts a new generation;
-- a released record is free at once; idem.default_ttl; idem.purge_expired removes expired records
-- in batches, oldest expiry first, never in_progress ones.
\set SHOW_CONTEXT never

-- Start from a store without expired records, so the counts below are exact.
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;

--
-- TTL: after expiry the same key is a new generation (with a new, higher fencing token)
--
SELECT handle AS h1, attempt AS a1 FROM idem.acquire('t-ttl', 'ttl-key-00000001', '{"amount":1}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.complete(:'h1', :a1, 201, '{}', 'first', 'order-1');
SELECT status, generation, ttl, expires_at = resolved_at + ttl AS expires_after_ttl
  FROM idem.keys WHERE tenant_id = 't-ttl' AND client_key = 'ttl-key-00000001';
SELECT pg_sleep(0.1);
-- Another payload is no mismatch once the record has expired.
CREATE TEMP TABLE gen_2 AS SELECT * FROM idem.acquire('t-ttl', 'ttl-key-00000001', '{"amount":2}'::jsonb);
SELECT attempt AS a2, handle AS h_a2 FROM gen_2 \gset
SELECT outcome, attempt > :a1 AS new_token, generation, response_status, response_body, order_id FROM gen_2;
SELECT status, attempt = :a2 AS same_token, generation, ttl, payload_hash = idem.payload_hash('{"amount":2}'::jsonb) AS new_payload,
       response_status, response_headers, response_body, order_id, handler_response,
       resolved_at IS NULL AS unresolved, expires_at IS NULL AS no_expiry
  FROM idem.keys WHERE tenant_id = 't-ttl' AND client_key = 'ttl-key-00000001';
-- The holder of the first generation is fenced out; the new holder completes.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h1', :a1), jsonb_build_object('a1', :a1, 'a2', :a2));
SELECT idem.complete(:'h_a2', :a2, 201, '{}', 'second', 'order-2');
SELECT outcome, generation, response_body, order_id FROM idem.acquire('t-ttl', 'ttl-key-00000001', '{"amount":2}'::jsonb);
SELECT outcome, generation FROM idem.acquire('t-ttl', 'ttl-key-00000001', '{"amount":1}'::jsonb);
-- The same payload after expiry executes again too (a new generation, not a replay).
SELECT handle AS h2, attempt AS tok_gen1 FROM idem.acquire('t-ttl', 'ttl-key-00000002', '{}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.complete(:'h2', :tok_gen1, 200, '{}', 'g1');
SELECT pg_sleep(0.1);
SELECT outcome AS o2, attempt AS tok_gen2, handle AS h_tok_gen2, generation AS gen2 FROM idem.acquire('t-ttl', 'ttl-key-00000002', '{}'::jsonb, ttl => '50 milliseconds') \gset
SELECT :'o2' AS outcome, :tok_gen2 > :tok_gen1 AS new_token, :gen2 AS generation;
SELECT idem.complete(:'h_tok_gen2', :tok_gen2, 200, '{}', 'g2');
SELECT pg_sleep(0.1);
SELECT outcome, attempt > :tok_gen2 AS new_token, generation FROM idem.acquire('t-ttl', 'ttl-key-00000002', '{}'::jsonb);
-- A released record that expires does not start a new generation: nothing was resolved.
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-ttl', 'ttl-key-00000003', '{}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.release(:'h3', :a3, 'transient');
SELECT pg_sleep(0.1);
SELECT outcome, attempt > :a3 AS new_token, generation FROM idem.acquire('t-ttl', 'ttl-key-00000003', '{}'::jsonb);

--
-- idem.default_ttl: fixed at acquire time; an explicit ttl wins
--
SET idem.default_ttl = '1h';
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-ttl', 'ttl-key-00000004', '{}'::jsonb) \gset
SELECT outcome FROM idem.acquire('t-ttl', 'ttl-key-00000005', '{}'::jsonb, ttl => '7 days');
SET idem.default_ttl = 90;
SELECT outcome FROM idem.acquire('t-ttl', 'ttl-key-00000006', '{}'::jsonb);
RESET idem.default_ttl;
SELECT outcome FROM idem.acquire('t-ttl', 'ttl-key-00000007', '{}'::jsonb);
SELECT client_key, ttl FROM idem.keys WHERE tenant_id = 't-ttl' AND client_key BETWEEN 'ttl-key-00000004' AND 'ttl-key-00000007'
 ORDER BY client_key;
-- Completed after the setting changed: the record keeps the ttl it was acquired with.
SELECT idem.complete(:'h4', :a4, 200, NULL, NULL);
SELECT ttl, expires_at - resolved_at AS kept_for FROM idem.keys WHERE tenant_id = 't-ttl' AND client_key = 'ttl-key-00000004';
SELECT expect_error($$SET idem.default_ttl = 0$$);

--
-- purge_expired: exact counts, oldest expiry first, work that may resume never purged
--
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
SELECT idem.purge_expired() AS nothing_expired;
SELECT handle AS p1, attempt AS pa1 FROM idem.acquire('t-purge', 'purge-key-000001', '{}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.complete(:'p1', :pa1, 200, NULL, NULL);
SELECT handle AS p2, attempt AS pa2 FROM idem.acquire('t-purge', 'purge-key-000002', '{}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.release(:'p2', :pa2);
SELECT handle AS p3, attempt AS pa3 FROM idem.acquire('t-purge', 'purge-key-000003', '{}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.complete(:'p3', :pa3, 200, NULL, NULL);
-- Not expired: a long TTL, and a lease that expired less than its TTL ago (an abandoned lease
-- becomes history only a TTL after its lease ran out).
SELECT handle AS p4, attempt AS pa4 FROM idem.acquire('t-purge', 'purge-key-000004', '{}'::jsonb, ttl => '1 hour') \gset
SELECT idem.complete(:'p4', :pa4, 200, NULL, NULL);
SELECT outcome AS o5, attempt AS pa5, handle AS h_pa5 FROM idem.acquire('t-purge', 'purge-key-000005', '{}'::jsonb, lease => '50 milliseconds', ttl => '1 hour') \gset
SELECT :'o5' AS outcome;
SELECT pg_sleep(0.1);
SELECT count(*) AS expired FROM idem.keys WHERE expires_at < clock_timestamp();
SELECT idem.purge_expired(2) AS purged;
SELECT client_key, status FROM idem.keys WHERE tenant_id = 't-purge' ORDER BY client_key;
SELECT idem.purge_expired(2) AS purged;
SELECT idem.purge_expired(2) AS purged;
SELECT client_key, status FROM idem.keys WHERE tenant_id = 't-purge' ORDER BY client_key;
-- A purged record is unknown: its holder's token is refused, and its key starts afresh in the
-- next generation (the high-water mark outlives the record) with a token never issued before.
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'p1', :pa1));
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'p2', :pa2));
SELECT outcome, attempt > :pa5 AS new_token, generation FROM idem.acquire('t-purge', 'purge-key-000001', '{"new":true}'::jsonb);
-- The in_progress record with an expired lease is still there to be resumed.
SELECT outcome, attempt > :pa5 AS new_token FROM idem.acquire('t-purge', 'purge-key-000005', '{}'::jsonb);

--
-- purge_expired: batch must be 1..100000
--
SELECT b AS batch, expect_error(format('SELECT idem.purge_expired(%s)', coalesce(b::text, 'NULL'))) AS error
  FROM unnest(ARRAY[0, -1, NULL, 100001]) AS b;
SELECT idem.purge_expired(1) AS min_batch, idem.purge_expired(100000) AS max_batch;
SELECT error_hint($$SELECT idem.purge_expired(0)$$);

--
-- A record resolved long after its attempt began (a long lease): purge_after, the attempt's start
-- plus the TTL, by which the purge index finds it, passes before expires_at, the resolution plus
-- the TTL. The purge reads it and leaves it (review of 0.3.3's purge_after); it goes once
-- expires_at has passed.
--
DO $$ BEGIN WHILE idem.purge_expired(100000) > 0 LOOP END LOOP; END $$;
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,
                       caller_id, resource, client_key, lease_interval, ttl, response_status,
                       response_headers, response_body, created_at, attempted_at, resolved_at, expires_at)
VALUES ('t-purge', idem.scope_digest('t-purge', '', '', 'late-resolved-key-01'), 'resolved', nextval('idem.fencing_token_seq'),
        1, idem.payload_hash('{}'::jsonb), 1, '', '', 'late-resolved-key-01', '1 hour', '1 second', 200, '{}', '',
        now() - interval '1 hour', now() - interval '1 hour', clock_timestamp(), clock_timestamp() + interval '1 second');
SELECT purge_after < now() AS due_by_purge_after, expires_at > clock_timestamp() AS not_yet_expired
  FROM idem.keys WHERE client_key = 'late-resolved-key-01';
SELECT idem.purge_expired(100) AS purged_before_expiry;
SELECT pg_sleep(1.1);
SELECT idem.purge_expired(100) AS purged_after_expiry;
SELECT count(*) AS left FROM idem.keys WHERE client_key = 'late-resolved-key-01';
