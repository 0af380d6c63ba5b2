-- idem.keys.purge_after (0.3.3): kept by the invariants trigger instead of a generation
-- expression (PostgreSQL parsed that from text in every statement writing the table). The value
-- must be the expression's to the microsecond, on every write, whoever writes the row.
\set SHOW_CONTEXT never
CREATE TEMP VIEW purge_after_check AS
  SELECT k.client_key, k.purge_after,
         k.purge_after IS NOT DISTINCT FROM
           CASE WHEN k.expires_at IS NOT NULL
                THEN to_timestamp(extract(epoch FROM (coalesce(k.attempted_at, k.created_at) - 'epoch'::timestamptz) + k.ttl))
           END AS as_0_3_2_computed
    FROM idem.keys k WHERE k.tenant_id = 't-pa' ORDER BY k.client_key;
-- Written by acquire and complete (the C path), with TTLs of seconds, fractions, days and months.
SELECT outcome FROM idem.acquire('t-pa', 'pa-key-000000000001', '{}'::jsonb, ttl => '1 second');
SELECT outcome FROM idem.acquire('t-pa', 'pa-key-000000000002', '{}'::jsonb, ttl => '2.123457 seconds');
SELECT outcome FROM idem.acquire('t-pa', 'pa-key-000000000003', '{}'::jsonb, ttl => '1 day 3 hours');
SELECT outcome FROM idem.acquire('t-pa', 'pa-key-000000000004', '{}'::jsonb, ttl => '29 days 23:59:59.999999');
SELECT idem.complete(a.handle, a.attempt, 201, '{}', '\x7b7d', 'ord-pa-4')
  FROM idem.acquire('t-pa', 'pa-key-000000000006', '{}'::jsonb, ttl => '7 seconds') a;
SELECT count(*) AS kept FROM purge_after_check WHERE as_0_3_2_computed AND purge_after IS NOT NULL;
-- Written by hand: attempted_at NULL (created_at counts), a month, a value given explicitly (replaced).
INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id,
                       resource, client_key, lease_interval, ttl, response_status, response_headers, response_body,
                       created_at, resolved_at, expires_at, purge_after)
VALUES ('t-pa', idem.scope_digest('t-pa', '', '', 'pa-key-000000000005'), 'resolved', nextval('idem.fencing_token_seq'), 1,
        idem.payload_hash('{}'::jsonb), 1, '', '', 'pa-key-000000000005', '30 seconds', '1 mon 2 days 00:00:00.5', 200, '{}', '',
        '2026-03-29 01:30:00.123456+00', '2026-03-29 01:30:00.123456+00', '2026-05-01 00:00:00+00', '1999-01-01 00:00:00+00');
SELECT client_key, purge_after, as_0_3_2_computed FROM purge_after_check WHERE client_key = 'pa-key-000000000005';
-- Moved when what it is computed from moves; NULL when expires_at is (unresolved work with a checkpoint).
UPDATE idem.keys SET attempted_at = '2026-01-01 00:00:00.000001+00', ttl = '3 days'
 WHERE tenant_id = 't-pa' AND client_key = 'pa-key-000000000001';
UPDATE idem.keys SET purge_after = '2000-01-01 00:00:00+00' WHERE tenant_id = 't-pa' AND client_key = 'pa-key-000000000002';
UPDATE idem.keys SET expires_at = NULL, recovery_point = 'charged' WHERE tenant_id = 't-pa' AND client_key = 'pa-key-000000000003';
SELECT client_key, purge_after IS NULL AS no_purge_after, as_0_3_2_computed FROM purge_after_check;
SELECT purge_after FROM purge_after_check WHERE client_key = 'pa-key-000000000001';
-- It is a plain column now (no generation expression to parse), still indexed for the purge.
SELECT attgenerated = '' AS plain_column FROM pg_attribute WHERE attrelid = 'idem.keys'::regclass AND attname = 'purge_after';
-- A value left stale by a write with the trigger disabled (a superuser's repair) is computed
-- again by the next write of the row, whatever it changes: the purge must not miss a due record
-- (a shortcut that kept the old value when the inputs looked unchanged was reverted in 0.3.3).
SELECT outcome FROM idem.acquire('t-pa', 'pa-key-000000000007', '{}'::jsonb, ttl => '1 second');
ALTER TABLE idem.keys DISABLE TRIGGER keys_invariants;
UPDATE idem.keys SET purge_after = purge_after + interval '10 years' WHERE tenant_id = 't-pa' AND client_key = 'pa-key-000000000007';
ALTER TABLE idem.keys ENABLE ALWAYS TRIGGER keys_invariants;
SELECT as_0_3_2_computed AS matches_before FROM purge_after_check WHERE client_key = 'pa-key-000000000007';
UPDATE idem.keys SET last_error = 'touched' WHERE tenant_id = 't-pa' AND client_key = 'pa-key-000000000007';
SELECT as_0_3_2_computed AS matches_after_a_write FROM purge_after_check WHERE client_key = 'pa-key-000000000007';
-- A row that breaks an invariant and whose value would overflow is refused for the invariant
-- (23514), as the generated column's table did: the rules are checked first.
SELECT expect_error($$UPDATE idem.keys SET status = 'bogus', ttl = '178000000 years' WHERE tenant_id = 't-pa' AND client_key = 'pa-key-000000000007'$$) AS rule_first;
-- complete and release write no column an index of idem.keys covers (purge_after stays), so with
-- room on the page (fillfactor 80) their UPDATEs are HOT: no index entry per resolution
-- (docs/hot-path.md). Each call in a transaction of its own, as a service makes them, so that
-- pruning gives the page its room back.
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE hot_before AS
  SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'idem.keys'::regclass;
DO $$ DECLARE r record; BEGIN
  FOR i IN 1..100 LOOP
    SELECT * INTO r FROM idem.acquire('t-pa', 'pa-hot-key-' || lpad(i::text, 8, '0'), '{}'::jsonb);
    COMMIT;
    IF i % 2 = 0 THEN PERFORM idem.complete(r.handle, r.attempt, 200, '{}', '\x6f6b');
    ELSE PERFORM idem.release(r.handle, r.attempt, 'failed'); END IF;
    COMMIT;
  END LOOP;
END $$;
SELECT pg_stat_force_next_flush();
SELECT s.n_tup_upd - b.n_tup_upd AS updates,
       s.n_tup_hot_upd - b.n_tup_hot_upd >= 0.9 * (s.n_tup_upd - b.n_tup_upd) AS at_least_nine_in_ten_hot
  FROM pg_stat_user_tables s, hot_before b WHERE s.relid = 'idem.keys'::regclass;
DROP TABLE hot_before;
DELETE FROM idem.keys WHERE tenant_id = 't-pa';
