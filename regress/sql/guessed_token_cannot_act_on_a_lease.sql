-- Regression (issue 12): the fencing token comes from one global sequence and the plain handle
-- follows from tenant and scope, so before 0.3.1 anyone who could call release/complete could
-- guess both and end another caller's lease. Since 0.3.1 the holder's handle carries the lease's
-- secret and checkpoint/complete/release require it; an operator's resolve_stuck acts without it.
\set SHOW_CONTEXT never
SELECT handle AS h, attempt AS a FROM idem.acquire('t-secret', 'secret-key-0000001', '{}'::jsonb, lease => '1 hour') \gset
-- What a stranger can know: the plain handle (a replay or refusal answers it) and the token.
SELECT handle AS plain FROM idem.acquire('t-secret', 'secret-key-0000001', '{}'::jsonb) \gset
SELECT :'plain' = record_of(:'h') AS refusal_gives_the_plain_handle, :'plain' <> :'h' AS holder_handle_differs;
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'plain', :a), jsonb_build_object('a', :a)) AS guessed_release;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'plain', :a), jsonb_build_object('a', :a)) AS guessed_complete;
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'plain', :a, 'x'), jsonb_build_object('a', :a)) AS guessed_checkpoint;
-- A made-up secret is no better; nor is a malformed one (not a handle at all).
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'plain' || ':' || repeat('0', 32), :a), jsonb_build_object('a', :a)) AS wrong_secret;
SELECT expect_error(format('SELECT idem.release(%L, %s)', :'plain' || ':' || repeat('0', 31), :a)) AS malformed_secret;
-- Nothing changed: the lease is the holder's, unreleased, and the refused calls left no audit row.
SELECT status, attempt = :a AS same_token, recovery_point, last_error FROM idem.keys WHERE tenant_id = 't-secret';
SELECT outcome, count(*) FROM idem.mutations WHERE tenant_id = 't-secret' GROUP BY 1 ORDER BY 1;
-- The holder's own handle works; the secret is not in any message (messages name the record).
SELECT idem.checkpoint(:'h', :a, 'charge_created', '{"charge_id":"ch_1"}') IS NOT NULL AS holder_checkpoint;
SELECT position(right(:'h', 32) IN expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h', :a + 1000000))) AS secret_in_message;
-- An operator resolves stuck work with the plain handle stuck_leases shows.
UPDATE idem.keys SET lease_expires_at = clock_timestamp() - interval '1 second' WHERE tenant_id = 't-secret';
SELECT handle = :'plain' AS stuck_leases_shows_plain_handle FROM idem.stuck_leases WHERE tenant_id = 't-secret';
SELECT expect_error(format('SELECT idem.resolve_stuck(%L, %s, %L, 201)', :'plain', :a, 'charge ch_1 verified')) AS operator_resolved;
SELECT status, response_status FROM idem.keys WHERE tenant_id = 't-secret';
-- A lease taken before 0.3.1 has no secret stored: its plain handle still works.
SELECT handle AS h2, attempt AS a2 FROM idem.acquire('t-secret', 'secret-key-0000002', '{}'::jsonb) \gset
UPDATE idem.keys SET lease_secret_hash = NULL WHERE client_key = 'secret-key-0000002';
SELECT expect_error(format('SELECT idem.complete(%L, %s, 201, %L, %L)', record_of(:'h2'), :a2, '{}', 'old')) AS pre_031_lease_completes;
SELECT status FROM idem.keys WHERE client_key = 'secret-key-0000002';
-- Secrets come from a per-backend pool refilled from the strong random source (review of 0.3.3):
-- across refills and across backends no secret repeats, each record stores the SHA-256 of its
-- handle's secret, and neither the secret nor its raw bytes are kept in any record or audit row.
CREATE TABLE issued_handles (backend int, handle text);
INSERT INTO issued_handles SELECT pg_backend_pid(), a.handle FROM generate_series(1, 600) g,
  LATERAL idem.acquire('t-secret', format('secret-pool-a-%s', lpad(g::text, 6, '0')), '{}'::jsonb) a;
\c idem_regress
INSERT INTO issued_handles SELECT pg_backend_pid(), a.handle FROM generate_series(1, 600) g,
  LATERAL idem.acquire('t-secret', format('secret-pool-b-%s', lpad(g::text, 6, '0')), '{}'::jsonb) a;
CREATE TEMP VIEW issued AS
  SELECT backend, record_of(handle) AS plain, right(handle, 32) AS secret FROM issued_handles;
SELECT count(DISTINCT backend) AS backends, count(*) AS handles, count(DISTINCT secret) AS distinct_secrets,
       bool_and(secret ~ '^[0-9a-f]{32}$') AS all_hex FROM issued;
SELECT count(*) AS records_hashing_their_secret FROM issued i JOIN idem.keys k
    ON i.plain = k.tenant_id || ':' || encode(k.scope_digest, 'hex')
 WHERE k.tenant_id = 't-secret' AND k.lease_secret_hash = sha256(convert_to(i.secret, 'UTF8'));
SELECT count(*) AS secrets_found_in_rows FROM issued i
 WHERE EXISTS (SELECT 1 FROM idem.keys k WHERE strpos(k::text, i.secret) > 0
                  OR position(decode(i.secret, 'hex') IN k.scope_digest || k.payload_hash || coalesce(k.lease_secret_hash, '')) > 0)
    OR EXISTS (SELECT 1 FROM idem.mutations m WHERE strpos(m::text, i.secret) > 0);
DROP VIEW issued;
DROP TABLE issued_handles;
