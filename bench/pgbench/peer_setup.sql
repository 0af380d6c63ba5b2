-- The peer every idempotency figure is measured beside: the table a competent user writes by
-- hand, after brandur's "Implementing Stripe-like Idempotency Keys in Postgres" (2017): a key
-- table unique per (user, key), the request hashed as sha256 of jsonb::text, a transaction-level
-- advisory lock per key, a lease (locked_at), the stored response, and an audit row written with
-- the business write (and, for an audited replay, with the replay). Plain PL/pgSQL, no extension.
\set ON_ERROR_STOP 1

CREATE TABLE peer_idempotency_keys (
  id                  bigserial PRIMARY KEY,
  user_id             text NOT NULL,
  idempotency_key     text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  last_run_at         timestamptz NOT NULL DEFAULT now(),
  locked_at           timestamptz DEFAULT now(),
  request_method      text NOT NULL,
  request_path        text NOT NULL,
  request_params_hash bytea NOT NULL,
  response_code       integer,
  response_body       bytea,
  recovery_point      text NOT NULL,
  UNIQUE (user_id, idempotency_key)
);
CREATE TABLE peer_audit_records (
  id            bigserial PRIMARY KEY,
  action        text NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  data          jsonb NOT NULL,
  resource_id   text NOT NULL,
  resource_type text NOT NULL,
  user_id       text NOT NULL
);

-- acquired (a new key, leased), replay (the stored response, audited), mismatch, in_progress.
CREATE FUNCTION peer_acquire(p_user text, p_key text, p_params jsonb,
                             OUT outcome text, OUT key_id bigint, OUT response_code integer, OUT response_body bytea)
  LANGUAGE plpgsql AS $$
DECLARE
  v_hash bytea := sha256(convert_to(p_params::text, 'UTF8'));
  r peer_idempotency_keys;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(p_user || ':' || p_key, 0));
  SELECT * INTO r FROM peer_idempotency_keys k WHERE k.user_id = p_user AND k.idempotency_key = p_key;
  IF NOT FOUND THEN
    INSERT INTO peer_idempotency_keys (user_id, idempotency_key, request_method, request_path,
                                       request_params_hash, recovery_point)
      VALUES (p_user, p_key, 'POST', '/v1/orders', v_hash, 'started')
      RETURNING id INTO key_id;
    outcome := 'acquired';
  ELSIF r.request_params_hash <> v_hash THEN
    outcome := 'mismatch';
  ELSIF r.response_code IS NOT NULL THEN
    outcome := 'replay';
    key_id := r.id;
    response_code := r.response_code;
    response_body := r.response_body;
    INSERT INTO peer_audit_records (action, data, resource_id, resource_type, user_id)
      VALUES ('order.replayed', jsonb_build_object('idempotency_key', p_key), r.id::text, 'idempotency_key', p_user);
  ELSIF r.locked_at > now() - interval '90 seconds' THEN
    outcome := 'in_progress';
  ELSE
    UPDATE peer_idempotency_keys k SET locked_at = now(), last_run_at = now() WHERE k.id = r.id;
    outcome := 'acquired';
    key_id := r.id;
  END IF;
END $$;

CREATE FUNCTION peer_complete(p_key_id bigint, p_user text, p_order text, p_code integer, p_body bytea) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  UPDATE peer_idempotency_keys k SET response_code = p_code, response_body = p_body, locked_at = NULL,
         recovery_point = 'finished'
   WHERE k.id = p_key_id;
  INSERT INTO peer_audit_records (action, data, resource_id, resource_type, user_id)
    VALUES ('order.created', jsonb_build_object('order_id', p_order), p_order, 'order', p_user);
END $$;

-- The peer's replay keys: the same keys and payloads as bench_populate_replay's.
CREATE PROCEDURE peer_populate_replay(n bigint)
  LANGUAGE plpgsql AS $$
DECLARE
  a record;
BEGIN
  FOR k IN 1..n LOOP
    a := peer_acquire('acme', bench_replay_key(k), bench_replay_payload(k));
    IF a.outcome <> 'acquired' THEN
      RAISE EXCEPTION 'peer replay key % was %, not acquired: populate a fresh database', k, a.outcome;
    END IF;
    PERFORM peer_complete(a.key_id, 'acme', 'ord-replay-' || k, 201,
                          convert_to('{"order_id":"ord-replay-' || k || '","status":"created"}', 'UTF8'));
    IF k % 500 = 0 THEN COMMIT; END IF;
  END LOOP;
END $$;
