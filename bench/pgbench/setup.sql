-- Schema for the pgbench workloads in this folder, in a fresh database that has pg_idempotency.
-- The business table is the same for the idempotent flows and the floor, and so is the payload:
-- every script builds it with bench_payload, so the floor pays for it too.
\set ON_ERROR_STOP 1

CREATE TABLE bench_orders (
  order_id     text PRIMARY KEY,
  tenant_id    text NOT NULL,
  amount_cents bigint NOT NULL,
  payload      jsonb NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- What ceiling_replay.sql writes: the one row an audited replay must add, without indexes.
CREATE TABLE bench_replay_ceiling (client_key text NOT NULL, at timestamptz NOT NULL DEFAULT now());

-- An order request body of about 200 bytes: nested object, an array of line items, non-ASCII,
-- decimal prices. STABLE, not IMMUTABLE: its body uses text || numeric (stable), and the planner
-- inlines a SQL function only when the body is no more volatile than declared. Not inlined, it
-- would be re-planned on every call and dominate the figures of the scripts that call it twice.
CREATE FUNCTION bench_payload(customer text, amount_cents bigint, ref text) RETURNS jsonb
  LANGUAGE sql STABLE PARALLEL SAFE
  RETURN ('{"customer":"' || customer || '","currency":"EUR","amount":' || (amount_cents / 100.0)::numeric(14, 2)
          || ',"items":[{"sku":"SKU-100234","name":"Café crème 250 g","quantity":2,"unit_price":19.99},'
          || '{"sku":"SKU-200345","name":"Müsli","quantity":1,"unit_price":4.5}],'
          || '"shipping":{"method":"express","amount":4.95},"ref":"' || ref || '"}')::jsonb;

-- The replay workload's keys and payloads: the pre-population and the script use the same ones.
CREATE FUNCTION bench_replay_key(k bigint) RETURNS text
  LANGUAGE sql STABLE PARALLEL SAFE RETURN 'replay-key-' || lpad(k::text, 10, '0');
CREATE FUNCTION bench_replay_payload(k bigint) RETURNS jsonb
  LANGUAGE sql STABLE PARALLEL SAFE RETURN bench_payload('cus_' || (k % 1000), 100 + k % 99900, k::text);

-- Resolves keys 1..n of the replay workload, committing every 500 (each acquire holds an
-- advisory lock until commit; one transaction for all of them would fill the lock table).
CREATE PROCEDURE bench_populate_replay(n bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  a idem.acquire_result;
BEGIN
  FOR k IN 1..n LOOP
    a := idem.acquire('acme', bench_replay_key(k), bench_replay_payload(k));
    IF a.outcome <> 'acquired' THEN
      RAISE EXCEPTION 'replay key % was %, not acquired: populate a fresh database', k, a.outcome;
    END IF;
    INSERT INTO bench_orders (order_id, tenant_id, amount_cents, payload)
    VALUES ('ord-replay-' || k, 'acme', 100 + k % 99900, bench_replay_payload(k));
    PERFORM idem.complete(a.handle, a.attempt, 201, '{"content-type":"application/json"}',
                          convert_to('{"order_id":"ord-replay-' || k || '","status":"created"}', 'UTF8'),
                          'ord-replay-' || k);
    IF k % 500 = 0 THEN COMMIT; END IF;
  END LOOP;
END $$;

-- Outcome counters of the contended workload (nextval is not rolled back and costs no row lock).
CREATE SEQUENCE bench_outcome_acquired;
CREATE SEQUENCE bench_outcome_replay;
CREATE SEQUENCE bench_outcome_in_progress;
CREATE SEQUENCE bench_outcome_other;

-- State machine workloads: a machine that cycles a <-> b (forward-only machines cannot be updated
-- back and forth), two tables of 10,000 rows, one with the trigger and one without.
INSERT INTO idem.machine_states VALUES ('bench', 'a', 'bench state a'), ('bench', 'b', 'bench state b');
INSERT INTO idem.machine_transitions VALUES ('bench', 'a', 'b', NULL, NULL), ('bench', 'b', 'a', NULL, NULL);
CREATE TABLE bench_status_plain (id int PRIMARY KEY, status text NOT NULL, note text);
CREATE TABLE bench_status_guarded (id int PRIMARY KEY, tenant_id text NOT NULL DEFAULT 'bench', status text NOT NULL, note text);
SELECT idem.register_machine_table('bench_status_guarded', 'bench', 'status', 'id', 'tenant_id');
CREATE TRIGGER bench_status_guarded_t BEFORE INSERT OR UPDATE OF status ON bench_status_guarded
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions();
INSERT INTO bench_status_plain SELECT i, 'a', 'row ' || i FROM generate_series(1, 10000) i;
INSERT INTO bench_status_guarded (id, status, note) SELECT i, 'a', 'row ' || i FROM generate_series(1, 10000) i;

-- The audit row's cost, measured by swapping the append for a no-op in this database only (the
-- product has no switch to turn the trail off): bench_audit_off() / bench_audit_on().
-- Since 0.3.2 the audit INSERT is C (a kept plan), so the switch is a BEFORE INSERT trigger that
-- skips the row (it fires before mutations_invariants, by name): the heap and index work is gone,
-- a trigger call remains.
CREATE FUNCTION bench_skip_row() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE PROCEDURE bench_audit_off() LANGUAGE plpgsql AS $$
BEGIN
  CREATE TRIGGER bench_skip_audit BEFORE INSERT ON idem.mutations FOR EACH ROW EXECUTE FUNCTION bench_skip_row();
END $$;
CREATE PROCEDURE bench_audit_on() LANGUAGE plpgsql AS $$
BEGIN
  DROP TRIGGER IF EXISTS bench_skip_audit ON idem.mutations;
END $$;

-- Purge under load: n resolved records that expired a second ago, written set-based (as if a day
-- of traffic had aged out), then purged by idem.purge_expired(500) in a loop, a commit per call,
-- as fast as it goes or paced, while the fixed-rate new-key run goes on. bench_purge_runs keeps how many and how fast.
CREATE TABLE bench_purge_runs (records bigint, seconds float8);
CREATE PROCEDURE bench_expired_records(n integer) LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id,
                         resource, client_key, lease_interval, ttl, created_at, resolved_at, expires_at, mutation_type,
                         attempted_at, response_status, response_headers, response_body, order_id)
  SELECT 'aged', sha256(convert_to('aged-' || i, 'UTF8')), 'resolved', nextval('idem.fencing_token_seq'), 1,
         sha256(convert_to('payload-' || i, 'UTF8')), idem.fingerprint_scheme(), '', '', 'aged-key-' || lpad(i::text, 10, '0'),
         '30 seconds', '1 day', now() - interval '1 day 1 minute', now() - interval '1 day 1 second',
         now() - interval '1 second', 'create', now() - interval '1 day 1 minute', 201, '{}',
         convert_to('{"order_id":"ord-aged-' || i || '","status":"created"}', 'UTF8'), 'ord-aged-' || i
    FROM generate_series(1, n) i;
END $$;
-- The purge's peer beside traffic: the bare batched DELETE of the same expired records, copied
-- into a plain table with a primary key and an index on expires_at (what a hand-written store
-- has): no lock, no generation kept.
CREATE TABLE bench_expired_peer AS SELECT * FROM idem.keys WHERE false;
ALTER TABLE bench_expired_peer ADD PRIMARY KEY (tenant_id, scope_digest);
CREATE INDEX ON bench_expired_peer (expires_at);
CREATE FUNCTION bench_delete_expired(p_batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE v_n integer; v_now timestamptz := clock_timestamp();  -- a value: the index scan stops at it
BEGIN
  DELETE FROM bench_expired_peer p WHERE p.ctid = ANY (ARRAY(
    SELECT o.ctid FROM bench_expired_peer o WHERE o.expires_at < v_now ORDER BY o.expires_at LIMIT p_batch));
  GET DIAGNOSTICS v_n = ROW_COUNT;
  RETURN v_n;
END $$;
-- p_rate: records per second to keep to (sleeping between calls), NULL for as fast as it goes;
-- p_batch: records per call (each call commits); p_bare: the peer's bare DELETE instead of
-- idem.purge_expired.
CREATE PROCEDURE bench_purge_all(p_rate integer DEFAULT NULL, p_batch integer DEFAULT 500, p_bare boolean DEFAULT false)
  LANGUAGE plpgsql AS $$
DECLARE v_total bigint := 0; v_n integer; v_start timestamptz := clock_timestamp(); v_ahead float8;
BEGIN
  LOOP
    v_n := CASE WHEN p_bare THEN bench_delete_expired(p_batch) ELSE idem.purge_expired(p_batch) END;
    v_total := v_total + v_n;
    COMMIT;
    EXIT WHEN v_n = 0;
    v_ahead := v_total::float8 / p_rate - extract(epoch FROM clock_timestamp() - v_start);
    IF v_ahead > 0 THEN PERFORM pg_sleep(v_ahead); END IF;
  END LOOP;
  INSERT INTO bench_purge_runs VALUES (v_total, extract(epoch FROM clock_timestamp() - v_start));
END $$;
