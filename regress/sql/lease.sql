-- Leases: checkpoint, takeover after expiry (resumed, with the recovery point), fencing of the
-- stale holder (ERR_LEASE_LOST on checkpoint/complete/release), on_busy => 'wait', and the
-- settings idem.lease_timeout and idem.retry_after. Single session; concurrency: regress/specs.
\set SHOW_CONTEXT never
\set k1 '''lease-key-000001'''

--
-- A holder checkpoints, then its lease expires and the next acquire takes over (resumed)
--
SELECT handle AS h1, attempt AS a1 FROM idem.acquire('t-lease', :k1, '{"amount":700}'::jsonb, lease => '50 milliseconds') \gset
SELECT lease_interval FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = :k1;
-- checkpoint records progress and extends the lease by lease_interval; it returns the new expiry.
SELECT lease_expires_at AS lease_before FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = :k1 \gset
SELECT idem.checkpoint(:'h1', :a1, 'charge_created', '{"charge_id":"ch_123"}') AS new_expiry \gset
SELECT recovery_point, recovery_data, status, attempt = :a1 AS same_token,
       lease_expires_at = :'new_expiry'::timestamptz AS returns_expiry,
       lease_expires_at > :'lease_before'::timestamptz AS lease_extended
  FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = :k1;
SELECT pg_sleep(0.1);
-- A different payload on an expired lease is a mismatch, and takes nothing over.
SELECT outcome, attempt, generation FROM idem.acquire('t-lease', :k1, '{"amount":701}'::jsonb);
SELECT status, attempt = :a1 AS same_token FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = :k1;
-- The same payload resumes at the recovery point with a new, higher fencing token.
CREATE TEMP TABLE takeover AS SELECT * FROM idem.acquire('t-lease', :k1, '{"amount":700}'::jsonb);
SELECT attempt AS a2, handle AS h_a2 FROM takeover \gset
SELECT outcome, attempt > :a1 AS new_token, generation, recovery_point, recovery_data, response_status, retry_after, record_of(handle) = record_of(:'h1') AS same_handle
  FROM takeover;
SELECT status, attempt = :a2 AS same_token, generation, recovery_point, recovery_data, lease_interval,
       lease_expires_at > created_at AS leased
  FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = :k1;
-- The new holder's lease (default 30 s) is live: others get in_progress.
SELECT outcome, attempt FROM idem.acquire('t-lease', :k1, '{"amount":700}'::jsonb);

--
-- ERR_LEASE_LOST (IK005): the stale holder (token :a1) can record nothing
--
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L, %L)', :'h1', :a1, 'captured', '{"x":1}'), jsonb_build_object('a1', :a1, 'a2', :a2));
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, %L, %L)', :'h1', :a1, '{}', 'stale'), jsonb_build_object('a1', :a1, 'a2', :a2));
SELECT expect_error(format('SELECT idem.release(%L, %s, %L)', :'h1', :a1, 'stale'), jsonb_build_object('a1', :a1, 'a2', :a2));
-- Only the holder's exact token counts: not a higher one (a token is not a "newer wins" counter),
-- not 0 (never issued: the sequence starts at 1).
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h_a2', :a2 + 1), jsonb_build_object('a2', :a2, 'a2_plus_1', :a2 + 1));
SELECT expect_error(format('SELECT idem.complete(%L, 0, 200, NULL, NULL)', :'h1'), jsonb_build_object('a2', :a2));
-- Nothing changed.
SELECT status, attempt = :a2 AS same_token, recovery_point, recovery_data, response_status, last_error
  FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = :k1;

--
-- The new holder (token :a2) checkpoints, completes; the result replays
--
SELECT idem.checkpoint(:'h_a2', :a2, 'charge_captured', '{"charge_id":"ch_123","captured":true}') IS NOT NULL AS checkpointed;
SELECT idem.complete(:'h_a2', :a2, 201, '{"Location":"/payments/p_700"}', 'paid', 'order-700');
SELECT outcome, response_status, response_headers, response_body, order_id
  FROM idem.acquire('t-lease', :k1, '{"amount":700}'::jsonb);
SELECT status, attempt = :a2 AS same_token, recovery_point, recovery_data FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = :k1;
SELECT expect_error(format('SELECT idem.complete(%L, %s, 200, NULL, NULL)', :'h_a2', :a2), jsonb_build_object('a2', :a2));

--
-- Repeated takeovers: each takes the latest recovery point and a new, higher token
--
SELECT handle AS h2, attempt AS t1 FROM idem.acquire('t-lease', 'lease-key-000002', '[1]'::jsonb, lease => '50 milliseconds') \gset
SELECT pg_sleep(0.1);
CREATE TEMP TABLE takeover_2 AS SELECT * FROM idem.acquire('t-lease', 'lease-key-000002', '[1]'::jsonb, lease => '50 milliseconds');
SELECT attempt AS t2, handle AS h_t2 FROM takeover_2 \gset
SELECT outcome, attempt > :t1 AS new_token, recovery_point, recovery_data FROM takeover_2;
-- Checkpoint data may be omitted (NULL), and a later checkpoint replaces the earlier one.
SELECT idem.checkpoint(:'h_t2', :t2, 'step_1') IS NOT NULL AS checkpointed;
SELECT idem.checkpoint(:'h_t2', :t2, 'step_2', '{"n":2}') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.1);
CREATE TEMP TABLE takeover_3 AS SELECT * FROM idem.acquire('t-lease', 'lease-key-000002', '[1]'::jsonb);
SELECT attempt AS t3, handle AS h_t3 FROM takeover_3 \gset
SELECT outcome, attempt > :t2 AS new_token, recovery_point, recovery_data FROM takeover_3;
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'h_t2', :t2, 'step_3'), jsonb_build_object('t2', :t2, 't3', :t3));
SELECT idem.release(:'h_t3', :t3, 'gave up');
-- Released after a checkpoint: the side effect may have happened, so the next acquire resumes at
-- the recovery point (never a fresh attempt that would repeat it), and another payload is refused.
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-000002', '[2]'::jsonb);
SELECT outcome, attempt > :t3 AS new_token, recovery_point, recovery_data FROM idem.acquire('t-lease', 'lease-key-000002', '[1]'::jsonb);

--
-- checkpoint: argument validation
--
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-lease', 'lease-key-000003', '{}'::jsonb) \gset
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, NULL)', :'h3', :a3));
SELECT expect_error(format('SELECT idem.checkpoint(%L, %s, %L)', :'h3', :a3, ''));
SELECT recovery_point FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = 'lease-key-000003';

--
-- on_busy => 'wait': under READ COMMITTED a contender waits for the live lease to end instead
-- of answering in_progress (here the lease expires, so it resumes)
--
SELECT handle AS h4, attempt AS a4 FROM idem.acquire('t-lease', 'lease-key-000004', '{}'::jsonb, lease => '1 second') \gset
SELECT outcome, attempt FROM idem.acquire('t-lease', 'lease-key-000004', '{}'::jsonb, on_busy => 'reject');
SELECT outcome, attempt > :a4 AS new_token FROM idem.acquire('t-lease', 'lease-key-000004', '{}'::jsonb, on_busy => 'wait');
-- Under REPEATABLE READ the snapshot cannot see the lease end: 'wait' answers in_progress at once.
SELECT handle AS h5 FROM idem.acquire('t-lease', 'lease-key-000005', '{}'::jsonb, lease => '1 hour') \gset
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT outcome, attempt, retry_after FROM idem.acquire('t-lease', 'lease-key-000005', '{}'::jsonb, on_busy => 'wait');
COMMIT;
-- 'wait' on a free key acquires as 'reject' does.
SELECT outcome, attempt = (SELECT last_value FROM idem.fencing_token_seq) AS token_from_seq
  FROM idem.acquire('t-lease', 'lease-key-000006', '{}'::jsonb, on_busy => 'wait');

--
-- idem.lease_timeout: the default lease; an explicit lease wins
--
SET idem.lease_timeout = '5s';
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-000007', '{}'::jsonb);
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-000008', '{}'::jsonb, lease => '2 minutes');
SET idem.lease_timeout = '1min';
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-000009', '{}'::jsonb);
RESET idem.lease_timeout;
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-000010', '{}'::jsonb);
SELECT client_key, lease_interval, lease_expires_at = created_at + lease_interval AS lease_from_created
  FROM idem.keys WHERE tenant_id = 't-lease' AND client_key BETWEEN 'lease-key-000007' AND 'lease-key-000010'
 ORDER BY client_key;
-- A resumed attempt gets the lease in force when it takes over.
SELECT handle AS h11, attempt AS a11 FROM idem.acquire('t-lease', 'lease-key-000011', '{}'::jsonb, lease => '50 milliseconds') \gset
SELECT pg_sleep(0.1);
SET idem.lease_timeout = 42;
SELECT outcome, attempt > :a11 AS new_token FROM idem.acquire('t-lease', 'lease-key-000011', '{}'::jsonb);
RESET idem.lease_timeout;
SELECT lease_interval FROM idem.keys WHERE tenant_id = 't-lease' AND client_key = 'lease-key-000011';

--
-- A resumed attempt also gets the ttl it asks for (else idem.default_ttl in force when it takes
-- over), not the ttl of the attempt it replaces: the response it completes lives that long.
--
SELECT handle AS h14, attempt AS a14 FROM idem.acquire('t-lease', 'lease-key-000014', '{}'::jsonb, lease => '50 milliseconds', ttl => '1 minute') \gset
SELECT handle AS h15, attempt AS a15 FROM idem.acquire('t-lease', 'lease-key-000015', '{}'::jsonb, lease => '50 milliseconds', ttl => '1 minute') \gset
SELECT pg_sleep(0.1);
CREATE TEMP TABLE takeover_14 AS SELECT * FROM idem.acquire('t-lease', 'lease-key-000014', '{}'::jsonb, ttl => '1 hour');
SELECT attempt AS a14b, handle AS h_a14b FROM takeover_14 \gset
SELECT outcome, attempt > :a14 AS new_token FROM takeover_14;
SET idem.default_ttl = '2h';
CREATE TEMP TABLE takeover_15 AS SELECT * FROM idem.acquire('t-lease', 'lease-key-000015', '{}'::jsonb);
RESET idem.default_ttl;
SELECT attempt AS a15b, handle AS h_a15b FROM takeover_15 \gset
SELECT outcome, attempt > :a15 AS new_token FROM takeover_15;
SELECT client_key, ttl FROM idem.keys WHERE tenant_id = 't-lease' AND client_key IN ('lease-key-000014', 'lease-key-000015')
 ORDER BY client_key;
SELECT idem.complete(:'h_a14b', :a14b, 200, NULL, NULL);
SELECT idem.complete(:'h_a15b', :a15b, 200, NULL, NULL);
SELECT client_key, status, ttl, expires_at - resolved_at AS kept_for
  FROM idem.keys WHERE tenant_id = 't-lease' AND client_key IN ('lease-key-000014', 'lease-key-000015')
 ORDER BY client_key;
SELECT expect_error($$SET idem.lease_timeout = 0$$);

--
-- idem.retry_after: the Retry-After seconds returned with in_progress
--
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-000013', '{}'::jsonb, lease => '1 hour');
SELECT outcome, retry_after FROM idem.acquire('t-lease', 'lease-key-000013', '{}'::jsonb);
SET idem.retry_after = 7;
SELECT outcome, retry_after FROM idem.acquire('t-lease', 'lease-key-000013', '{}'::jsonb);
SET idem.retry_after = '1min';
SELECT outcome, retry_after FROM idem.acquire('t-lease', 'lease-key-000013', '{}'::jsonb);
SET idem.retry_after = 0;
SELECT outcome, retry_after FROM idem.acquire('t-lease', 'lease-key-000013', '{}'::jsonb);
RESET idem.retry_after;
SELECT outcome, retry_after FROM idem.acquire('t-lease', 'lease-key-000013', '{}'::jsonb);
SELECT expect_error($$SET idem.retry_after = 3601$$);
-- retry_after is only set for in_progress.
SELECT outcome, retry_after FROM idem.acquire('t-lease', :k1, '{"amount":700}'::jsonb);

--
-- Lease arguments
--
SELECT expect_error($$SELECT idem.acquire('t-lease', 'lease-key-000012', '{}'::jsonb, lease => '-5 seconds')$$);
SELECT expect_error($$SELECT idem.acquire('t-lease', 'lease-key-000012', '{}'::jsonb, lease => '0 seconds')$$);
SELECT count(*) AS nothing_recorded FROM idem.keys WHERE client_key = 'lease-key-000012';

--
-- The same transaction meeting its own key again, after its lease ran out, is still executing
-- it: in_progress, never a takeover of itself.
--
BEGIN;
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-same-txn', '{}'::jsonb, lease => '50 milliseconds');
SELECT pg_sleep(0.1);
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-same-txn', '{}'::jsonb);
SAVEPOINT inner_step;
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-same-txn', '{}'::jsonb);
RELEASE SAVEPOINT inner_step;
COMMIT;
-- Another transaction may take it over.
SELECT outcome FROM idem.acquire('t-lease', 'lease-key-same-txn', '{}'::jsonb);

--
-- pg_dump keeps the records and the fencing-token sequence (extension configuration tables).
--
SELECT array_agg(c::regclass::text ORDER BY c::regclass::text) AS dumped
  FROM pg_extension e, unnest(e.extconfig) AS c WHERE e.extname = 'pg_idempotency';
