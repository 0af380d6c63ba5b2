-- pg_idempotency 0.2.0 -> 0.3.0: the transactional outbox (docs/outbox.md). idem.emit writes an
-- event in the caller's transaction; at its commit the event's (tenant, topic) group is sequenced
-- under a lock held until the commit is visible, so positions are commit order; consumers claim
-- a group's events in that order without blocking, apply each effect once (consume_once) and ack.
\echo Use "ALTER EXTENSION pg_idempotency UPDATE TO '0.3.0'" to load this file. \quit

-- ---------------------------------------------------------------------------------------------
-- Registry: topics and the consumers (named subscriptions, each with any number of workers).

CREATE TABLE idem.outbox_topics (
  topic       text COLLATE "C" PRIMARY KEY CHECK (topic ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$'),
  description text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE idem.outbox_topics IS 'Outbox topics; idem.emit refuses any other (ERR_OUTBOX_TOPIC_UNKNOWN). Add with idem.create_topic.';

CREATE TABLE idem.outbox_consumers (
  consumer     text COLLATE "C" PRIMARY KEY CHECK (consumer ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$'),
  max_attempts integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 1000),
  created_at   timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE idem.outbox_consumers IS
  'Outbox consumers: every consumer gets every event of its topics; its workers share them (one claim per group at a time). Add with idem.create_consumer.';

CREATE TABLE idem.outbox_subscriptions (
  consumer text COLLATE "C" NOT NULL REFERENCES idem.outbox_consumers ON DELETE CASCADE,
  topic    text COLLATE "C" NOT NULL REFERENCES idem.outbox_topics,
  PRIMARY KEY (consumer, topic)
);

-- Event ids and commit positions are drawn from one sequence. CACHE must stay 1: a backend's
-- cached values would let a later committer draw a lower position.
CREATE SEQUENCE idem.outbox_seq AS bigint CACHE 1;
-- The emitting transactions' outbox ids: unique, never reused (an xid is, in a cluster restored
-- from a dump), in no particular order.
CREATE SEQUENCE idem.outbox_txn_seq AS bigint;

-- ---------------------------------------------------------------------------------------------
-- The log. Events are never updated; a transaction's events of one group share the commit row
-- drawn at its commit, and (position, event_id) is the group's delivery order.

CREATE TABLE idem.outbox_events (
  tenant_id  text COLLATE "C" NOT NULL,
  topic      text COLLATE "C" NOT NULL,
  txn_id     bigint NOT NULL,                    -- the emitting transaction's outbox id
  event_id   bigint NOT NULL,
  key        text COLLATE "C",
  payload    jsonb NOT NULL,
  emitted_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, topic, txn_id, event_id)
);
CREATE INDEX outbox_events_by_id ON idem.outbox_events (event_id);
COMMENT ON TABLE idem.outbox_events IS 'Outbox events, written by idem.emit in the caller''s transaction; never updated.';

CREATE TABLE idem.outbox_commits (
  tenant_id    text COLLATE "C" NOT NULL,
  topic        text COLLATE "C" NOT NULL,
  position     bigint NOT NULL,
  txn_id       bigint NOT NULL,
  committed_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, topic, position),
  UNIQUE (tenant_id, topic, txn_id)
);
COMMENT ON TABLE idem.outbox_commits IS
  'One row per emitting transaction and group, drawn at its commit under the group''s lock: position order is commit order within (tenant, topic).';

CREATE TABLE idem.outbox_groups (
  tenant_id  text COLLATE "C" NOT NULL,
  topic      text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, topic)
);
COMMENT ON TABLE idem.outbox_groups IS 'Every (tenant, topic) that ever committed an event; claims discover new groups here.';

-- ---------------------------------------------------------------------------------------------
-- Delivery state, per consumer and group. Nothing here is ever updated: outbox_cursors has one
-- row per consumer and group that only serves as its lock (claim takes it FOR UPDATE SKIP LOCKED,
-- ack and nack FOR UPDATE, consume_once FOR SHARE; a row lock writes no new version), and every
-- claim, ack and nack appends the group's whole state to outbox_cursor_states. The newest state
-- is one backward index step away however long another transaction holds the xmin horizon: no
-- lookup walks dead row versions. purge_outbox deletes superseded states.

CREATE TABLE idem.outbox_cursors (
  tenant_id  text COLLATE "C" NOT NULL,
  consumer   text COLLATE "C" NOT NULL,
  topic      text COLLATE "C" NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, consumer, topic)
);
CREATE INDEX outbox_cursors_by_consumer ON idem.outbox_cursors (consumer, topic);
COMMENT ON TABLE idem.outbox_cursors IS 'One row per consumer and (tenant, topic) group: the lock of its delivery state. Never updated.';

-- Versions are drawn under the group's lock; CACHE 1 keeps them increasing across backends.
CREATE SEQUENCE idem.outbox_state_seq AS bigint CACHE 1;

CREATE TABLE idem.outbox_cursor_states (
  tenant_id          text COLLATE "C" NOT NULL,
  consumer           text COLLATE "C" NOT NULL,
  topic              text COLLATE "C" NOT NULL,
  version            bigint NOT NULL,
  acked_position     bigint NOT NULL,             -- the last acked event, (position, event_id)
  acked_event_id     bigint NOT NULL,
  delivered_position bigint NOT NULL,             -- the last event ever handed out
  delivered_event_id bigint NOT NULL,
  claim_token        uuid,                        -- the open claim: its token, deadline and the
  claim_until        timestamptz,                 -- events not yet acked past the prefix, in order
  claim_events       bigint[],
  claim_positions    bigint[],
  claim_acked        bigint[],                    -- acked out of order (the prefix has moved on)
  last_token         uuid,                        -- the newest claim's token (re-acks are no-ops)
  head_event_id      bigint,                      -- the oldest unacked event and its failures
  head_attempts      integer NOT NULL,
  head_error         text,
  not_before         timestamptz,                 -- after a nack: when the group may be claimed
  last_claimed_at    timestamptz,
  written_at         timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, consumer, topic, version),
  CHECK ((claim_events IS NULL) = (claim_token IS NULL)),
  CHECK ((claim_events IS NULL) = (claim_until IS NULL))
);
COMMENT ON TABLE idem.outbox_cursor_states IS
  'Append-only: the delivery state of a consumer and group after each claim, ack and nack; the newest version is the state.';

CREATE TABLE idem.outbox_dead_letters (
  tenant_id           text COLLATE "C" NOT NULL,
  consumer            text COLLATE "C" NOT NULL,
  event_id            bigint NOT NULL,
  topic               text COLLATE "C" NOT NULL,
  key                 text COLLATE "C",
  payload             jsonb NOT NULL,
  position            bigint NOT NULL,
  emitted_at          timestamptz NOT NULL,
  committed_at        timestamptz NOT NULL,
  attempts            integer NOT NULL,
  last_error          text,
  dead_at             timestamptz NOT NULL,
  replay_requested_at timestamptz,
  claim_token         uuid,
  claim_until         timestamptz,
  resolved_at         timestamptz,
  resolution          text CHECK (resolution IN ('replayed', 'discarded')),
  resolution_note     text,
  PRIMARY KEY (tenant_id, consumer, event_id),
  CHECK ((resolved_at IS NULL) = (resolution IS NULL))
);
CREATE INDEX outbox_dead_letters_replays ON idem.outbox_dead_letters (consumer, topic)
  WHERE replay_requested_at IS NOT NULL AND resolved_at IS NULL;
COMMENT ON TABLE idem.outbox_dead_letters IS
  'Events a consumer failed max_attempts times, with the last error; the group moved on past them. idem.outbox_replay hands one out again, idem.outbox_discard closes it.';

CREATE TABLE idem.outbox_consumed (
  tenant_id   text COLLATE "C" NOT NULL,
  consumer    text COLLATE "C" NOT NULL,
  event_id    bigint NOT NULL,
  consumed_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (tenant_id, consumer, event_id)
);
COMMENT ON TABLE idem.outbox_consumed IS 'One row per event a consumer applied (idem.consume_once), written in the consumer''s own transaction.';

SELECT pg_catalog.pg_extension_config_dump('idem.outbox_topics', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_consumers', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_subscriptions', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_txn_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_events', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_commits', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_groups', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_cursors', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_state_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_cursor_states', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_dead_letters', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_consumed', '');

-- ---------------------------------------------------------------------------------------------
-- C helpers (extension/outbox_functions.cpp).

CREATE FUNCTION idem._outbox_note(tenant text, topic text, key text, payload jsonb) RETURNS bigint
  AS 'MODULE_PATHNAME', 'idem_outbox_note' LANGUAGE C VOLATILE;
COMMENT ON FUNCTION idem._outbox_note(text, text, text, jsonb) IS
  'Checks an event''s tenant, key and payload size, remembers its group for the commit-time sequencing, returns the transaction''s outbox id.';
CREATE FUNCTION idem._outbox_newest_state(tenant text, consumer text, topic text) RETURNS bigint
  AS 'MODULE_PATHNAME', 'idem_outbox_newest_state' LANGUAGE C VOLATILE STRICT;
COMMENT ON FUNCTION idem._outbox_newest_state(text, text, text) IS
  'The newest version of a consumer''s state of a group in the latest committed data (0: none), whatever the caller''s snapshot.';

-- ---------------------------------------------------------------------------------------------
-- Registering topics and consumers.

CREATE FUNCTION idem.create_topic(topic text, description text DEFAULT '') RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  IF topic IS NULL OR topic !~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('topic %s is not a topic name: 1-200 of A-Z a-z 0-9 . _ : -, starting with a letter or digit', coalesce(quote_literal(topic), 'NULL')));
  END IF;
  INSERT INTO idem.outbox_topics AS t (topic, description) VALUES (create_topic.topic, coalesce(description, ''))
    ON CONFLICT ON CONSTRAINT outbox_topics_pkey DO NOTHING;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION idem.create_topic(text, text) IS 'Registers an outbox topic; false when it already exists.';

CREATE FUNCTION idem.create_consumer(consumer text, topics text[], max_attempts integer DEFAULT NULL) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_missing text;
BEGIN
  IF consumer IS NULL OR consumer !~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('consumer %s is not a consumer name: 1-200 of A-Z a-z 0-9 . _ : -, starting with a letter or digit', coalesce(quote_literal(consumer), 'NULL')));
  END IF;
  IF topics IS NULL OR cardinality(topics) = 0 OR array_position(topics, NULL) IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'topics must be a non-empty array without NULLs');
  END IF;
  IF max_attempts IS NOT NULL AND max_attempts NOT BETWEEN 1 AND 1000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('max_attempts must be 1..1000, got %s', coalesce(max_attempts::text, 'NULL')));
  END IF;
  SELECT t INTO v_missing FROM unnest(topics) AS t
   WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_topics o WHERE o.topic = t) LIMIT 1;
  IF v_missing IS NOT NULL THEN
    PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN', format('no outbox topic %L', v_missing),
      'Create it first: SELECT idem.create_topic(''' || v_missing || ''');');
  END IF;
  -- A new consumer gets 5 attempts unless told; an existing one keeps its own unless told.
  INSERT INTO idem.outbox_consumers AS c (consumer, max_attempts)
    VALUES (create_consumer.consumer, coalesce(create_consumer.max_attempts, 5))
    ON CONFLICT ON CONSTRAINT outbox_consumers_pkey
    DO UPDATE SET max_attempts = coalesce(create_consumer.max_attempts, c.max_attempts);
  INSERT INTO idem.outbox_subscriptions (consumer, topic)
    SELECT DISTINCT create_consumer.consumer, t FROM unnest(topics) AS t
    ON CONFLICT DO NOTHING;
END $$;
COMMENT ON FUNCTION idem.create_consumer(text, text[], integer) IS
  'Registers a consumer (or adds topics to it, and sets max_attempts when given; 5 for a new one): it gets every event of its topics, from the oldest one retained.';

-- ---------------------------------------------------------------------------------------------
-- emit, and its commit-time sequencing.

CREATE FUNCTION idem.emit(tenant text, topic text, payload jsonb, key text DEFAULT NULL) RETURNS bigint
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_id bigint;
  v_txn bigint;
BEGIN
  v_txn := idem._outbox_note(tenant, topic, key, payload);  -- tenant, key, payload size; the group
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_topics t WHERE t.topic = emit.topic) THEN
    PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN', format('no outbox topic %L', emit.topic),
      'Create it once with idem.create_topic(topic); topics are registered so a typo cannot emit into nowhere.');
  END IF;
  INSERT INTO idem.outbox_events (tenant_id, topic, txn_id, event_id, key, payload, emitted_at)
    VALUES (tenant, topic, v_txn, nextval('idem.outbox_seq'), key, payload, clock_timestamp())
    RETURNING event_id INTO v_id;
  RETURN v_id;
END $$;
COMMENT ON FUNCTION idem.emit(text, text, jsonb, text) IS
  'Writes an outbox event in the caller''s transaction (it exists if and only if that transaction commits); returns its id.';

-- Called at PRE_COMMIT (or PRE_PREPARE) of an emitting transaction, after every deferred trigger,
-- by the transaction callback in extension/outbox_functions.cpp, once per group the transaction
-- noted, with all of its groups locked (in one global order) until the commit is visible: the
-- position drawn here is therefore the group's commit order. A group noted by an emit that was
-- refused or rolled back with a savepoint has no event here and gets nothing.
CREATE FUNCTION idem._outbox_sequence_group(p_tenant text, p_topic text, p_txn bigint, p_notify boolean) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  v_position bigint;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_events e
                  WHERE e.tenant_id = p_tenant AND e.topic = p_topic AND e.txn_id = p_txn) THEN
    RETURN;
  END IF;
  v_position := nextval('idem.outbox_seq');
  -- Never silent about order: a position at or below the group's newest (outbox_seq moved back)
  -- or a reused transaction id (the commit row's UNIQUE key) fails this commit.
  IF EXISTS (SELECT 1 FROM idem.outbox_commits c
              WHERE c.tenant_id = p_tenant AND c.topic = p_topic AND c.position >= v_position) THEN
    PERFORM idem._raise('ERR_INTERNAL',
      format('outbox position %s of %s/%s is not above the group''s newest: idem.outbox_seq was moved back', v_position, p_tenant, p_topic),
      'Set idem.outbox_seq past max(position) of idem.outbox_commits.');
  END IF;
  INSERT INTO idem.outbox_commits (tenant_id, topic, position, txn_id, committed_at)
    VALUES (p_tenant, p_topic, v_position, p_txn, clock_timestamp());
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_groups g WHERE g.tenant_id = p_tenant AND g.topic = p_topic) THEN
    -- A REPEATABLE READ emitter may not see a group row committed after its snapshot; the row
    -- only has to exist, so a serialization failure of this insert is not one of the emitter.
    BEGIN
      INSERT INTO idem.outbox_groups (tenant_id, topic) VALUES (p_tenant, p_topic) ON CONFLICT DO NOTHING;
    EXCEPTION WHEN serialization_failure THEN
      NULL;
    END;
  END IF;
  IF p_notify THEN
    PERFORM pg_notify('idem_outbox', p_topic);
  END IF;
END $$;

-- ---------------------------------------------------------------------------------------------
-- Shared checks of the consumer calls.

CREATE FUNCTION idem._outbox_consumer(p_consumer text) RETURNS idem.outbox_consumers
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
DECLARE
  r idem.outbox_consumers;
BEGIN
  SELECT * INTO r FROM idem.outbox_consumers c WHERE c.consumer = p_consumer;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_OUTBOX_CONSUMER_UNKNOWN', format('no outbox consumer %s', coalesce(quote_literal(p_consumer), 'NULL')),
      'Register it once with idem.create_consumer(consumer, topics).');
  END IF;
  RETURN r;
END $$;

-- The event p_event_id as (tenant, topic, position), checked to belong to a topic of p_consumer.
CREATE FUNCTION idem._outbox_event(p_consumer text, p_event_id bigint,
                                   OUT tenant_id text, OUT topic text, OUT commit_position bigint)
  LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
BEGIN
  SELECT e.tenant_id, e.topic, c.position INTO tenant_id, topic, commit_position
    FROM idem.outbox_events e
    LEFT JOIN idem.outbox_commits c ON c.tenant_id = e.tenant_id AND c.topic = e.topic AND c.txn_id = e.txn_id
   WHERE e.event_id = p_event_id;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_OUTBOX_EVENT_UNKNOWN', format('no outbox event %s (never emitted, rolled back, or purged)', coalesce(p_event_id::text, 'NULL')));
  END IF;
  IF NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = p_consumer AND s.topic = _outbox_event.topic) THEN
    PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
      format('event %s is on topic %L, which consumer %L does not subscribe to', p_event_id, _outbox_event.topic, p_consumer));
  END IF;
END $$;

-- ---------------------------------------------------------------------------------------------
-- A group's delivery state: read the newest, lock, append.

-- The newest state (version 0 with nothing acked when the group was never claimed).
CREATE FUNCTION idem._outbox_state(p_tenant text, p_consumer text, p_topic text) RETURNS idem.outbox_cursor_states
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.outbox_cursor_states;
BEGIN
  SELECT * INTO r FROM idem.outbox_cursor_states s
   WHERE s.tenant_id = p_tenant AND s.consumer = p_consumer AND s.topic = p_topic
   ORDER BY s.version DESC LIMIT 1;
  IF NOT FOUND THEN
    r.tenant_id := p_tenant; r.consumer := p_consumer; r.topic := p_topic; r.version := 0;
    r.acked_position := 0; r.acked_event_id := 0; r.delivered_position := 0; r.delivered_event_id := 0;
    r.head_attempts := 0;
  END IF;
  RETURN r;
END $$;

-- Locks the group's state for this transaction and returns it; NULL fields when the group has no
-- cursor, or p_mode is 'skip' and another transaction holds it. Modes: 'skip' (claim: FOR UPDATE
-- SKIP LOCKED), 'wait' (ack, nack: FOR UPDATE), 'share' (consume_once's fence: FOR SHARE).
CREATE FUNCTION idem._outbox_lock(p_tenant text, p_consumer text, p_topic text, p_mode text) RETURNS idem.outbox_cursor_states
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  r idem.outbox_cursor_states;
BEGIN
  IF p_mode = 'skip' THEN
    PERFORM 1 FROM idem.outbox_cursors c
     WHERE c.tenant_id = p_tenant AND c.consumer = p_consumer AND c.topic = p_topic FOR UPDATE SKIP LOCKED;
  ELSIF p_mode = 'wait' THEN
    PERFORM 1 FROM idem.outbox_cursors c
     WHERE c.tenant_id = p_tenant AND c.consumer = p_consumer AND c.topic = p_topic FOR UPDATE;
  ELSE
    PERFORM 1 FROM idem.outbox_cursors c
     WHERE c.tenant_id = p_tenant AND c.consumer = p_consumer AND c.topic = p_topic FOR SHARE;
  END IF;
  IF NOT FOUND THEN
    RETURN r;
  END IF;
  -- Read after the lock, in a statement of its own: under READ COMMITTED it sees every state
  -- written by whoever held the lock before. A snapshot older than the newest state (REPEATABLE
  -- READ, SERIALIZABLE) must not act on what it sees.
  r := idem._outbox_state(p_tenant, p_consumer, p_topic);
  IF current_setting('transaction_isolation') <> 'read committed'
     AND idem._outbox_newest_state(p_tenant, p_consumer, p_topic) <> r.version THEN
    RAISE EXCEPTION USING ERRCODE = 'serialization_failure',
      MESSAGE = format('the outbox state of consumer %L for %s/%s changed after this transaction''s snapshot', p_consumer, p_tenant, p_topic),
      HINT = 'Retry the transaction.';
  END IF;
  RETURN r;
END $$;

-- Appends r as the group's newest state; the caller holds the group's lock.
CREATE FUNCTION idem._outbox_write(r idem.outbox_cursor_states) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
BEGIN
  r.version := nextval('idem.outbox_state_seq');
  r.written_at := clock_timestamp();
  INSERT INTO idem.outbox_cursor_states SELECT r.*;
END $$;

-- ---------------------------------------------------------------------------------------------
-- claim: never waits. Replays an operator asked for come first, then groups in the order they
-- were last served; each group's events go out in commit order, to one claim at a time.

CREATE FUNCTION idem.claim(consumer text, topics text[] DEFAULT NULL, batch integer DEFAULT 100,
                           visibility interval DEFAULT '30 seconds')
  RETURNS TABLE (event_id bigint, tenant_id text, topic text, key text, payload jsonb,
                 emitted_at timestamptz, committed_at timestamptz, attempt integer,
                 redelivered boolean, token uuid)
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_consumer idem.outbox_consumers;
  v_topics text[];
  v_unknown text;
  v_now timestamptz := clock_timestamp();
  v_until timestamptz;
  v_token uuid := gen_random_uuid();
  v_left integer;
  cand record;
  cur idem.outbox_cursor_states;
  d record;
  v_ids bigint[];
  v_positions bigint[];
  v_last integer;
  v_taken_over boolean;
  v_seen text[] := '{}';
BEGIN
  v_consumer := idem._outbox_consumer(consumer);
  IF batch IS NULL OR batch NOT BETWEEN 1 AND 10000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..10000, got %s', coalesce(batch::text, 'NULL')));
  END IF;
  IF visibility IS NULL OR visibility <= interval '0' OR visibility > interval '12 hours' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('visibility must be a positive elapsed time of at most 12 hours, got %s', coalesce(visibility::text, 'NULL')));
  END IF;
  v_until := v_now + idem._elapsed(visibility);
  IF topics IS NULL THEN
    SELECT array_agg(s.topic ORDER BY s.topic) INTO v_topics FROM idem.outbox_subscriptions s WHERE s.consumer = claim.consumer;
  ELSE
    SELECT t INTO v_unknown FROM unnest(topics) AS t
     WHERE t IS NULL OR NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = claim.consumer AND s.topic = t)
     LIMIT 1;
    IF FOUND THEN
      PERFORM idem._raise('ERR_OUTBOX_TOPIC_UNKNOWN',
        format('consumer %L does not subscribe to topic %s', claim.consumer, coalesce(quote_literal(v_unknown), 'NULL')),
        'Subscribe with idem.create_consumer(consumer, topics), or pass NULL for all of its topics.');
    END IF;
    v_topics := topics;
  END IF;
  v_left := batch;

  -- New groups get their cursor here, by one claim of the consumer at a time (a try-lock: a
  -- claim never waits for another; the next one picks up what this one skipped).
  IF idem._try_lock_key(hashtextextended('idem.outbox_discover:' || claim.consumer, 0)) THEN
    INSERT INTO idem.outbox_cursors (tenant_id, consumer, topic)
      SELECT g.tenant_id, claim.consumer, g.topic FROM idem.outbox_groups g
       WHERE g.topic = ANY (v_topics)
         AND NOT EXISTS (SELECT 1 FROM idem.outbox_cursors c
                          WHERE c.tenant_id = g.tenant_id AND c.consumer = claim.consumer AND c.topic = g.topic)
      ON CONFLICT DO NOTHING;
  END IF;

  -- Replays of dead letters.
  FOR d IN SELECT * FROM idem.outbox_dead_letters x
            WHERE x.consumer = claim.consumer AND x.topic = ANY (v_topics)
              AND x.replay_requested_at IS NOT NULL AND x.resolved_at IS NULL
              AND (x.claim_until IS NULL OR x.claim_until <= v_now)
            ORDER BY x.replay_requested_at, x.event_id LIMIT v_left
              FOR UPDATE SKIP LOCKED LOOP
    IF d.claim_token IS NOT NULL THEN
      -- Its replay's claim ran out without an ack: the replay failed, like a nack of it, and the
      -- letter is dead again until an operator asks once more.
      UPDATE idem.outbox_dead_letters x
         SET attempts = x.attempts + 1, replay_requested_at = NULL, claim_token = NULL, claim_until = NULL,
             last_error = format('replay claim expired at %s without an ack',
                                 to_char(d.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
       WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
      CONTINUE;
    END IF;
    UPDATE idem.outbox_dead_letters x SET claim_token = v_token, claim_until = v_until
     WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
    event_id := d.event_id; tenant_id := d.tenant_id; topic := d.topic; key := d.key; payload := d.payload;
    emitted_at := d.emitted_at; committed_at := d.committed_at; attempt := d.attempts + 1;
    redelivered := true; token := v_token;
    RETURN NEXT;
    v_left := v_left - 1;
  END LOOP;

  -- Groups with events past their cursor and no live claim, taken one at a time: pick one by its
  -- newest state, lock it without waiting, and decide again on the state read under the lock.
  LOOP
    EXIT WHEN v_left <= 0;
    SELECT c.tenant_id, c.topic INTO cand FROM idem.outbox_cursors c
      LEFT JOIN LATERAL (SELECT * FROM idem.outbox_cursor_states x
                          WHERE x.tenant_id = c.tenant_id AND x.consumer = c.consumer AND x.topic = c.topic
                          ORDER BY x.version DESC LIMIT 1) s ON true
     WHERE c.consumer = claim.consumer AND c.topic = ANY (v_topics)
       AND NOT (c.tenant_id || chr(31) || c.topic = ANY (v_seen))  -- tenants and topics hold no control characters
       AND (s.claim_until IS NULL OR s.claim_until <= v_now)
       AND (s.not_before IS NULL OR s.not_before <= v_now)
       -- Commits past the cursor drive (an index range from the cursor: nothing acked is read).
       -- OFFSET 0 keeps each EXISTS a correlated probe (the planner would otherwise turn it into
       -- a semi-join that reads every commit of the group), ORDER BY makes it walk the position
       -- index from the cursor rather than the txn_id index with a filter.
       AND EXISTS (SELECT 1 FROM idem.outbox_commits m
                    WHERE m.tenant_id = c.tenant_id AND m.topic = c.topic AND m.position >= coalesce(s.acked_position, 0)
                      AND EXISTS (SELECT 1 FROM idem.outbox_events e
                                   WHERE e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                                     AND (m.position, e.event_id) > (coalesce(s.acked_position, 0), coalesce(s.acked_event_id, 0))
                                  OFFSET 0)
                    ORDER BY m.position OFFSET 0)
     ORDER BY s.last_claimed_at NULLS FIRST, c.tenant_id, c.topic
     LIMIT 1;
    EXIT WHEN NOT FOUND;
    v_seen := v_seen || (cand.tenant_id || chr(31) || cand.topic);
    cur := idem._outbox_lock(cand.tenant_id, claim.consumer, cand.topic, 'skip');
    CONTINUE WHEN cur.tenant_id IS NULL;                      -- another claim holds it
    CONTINUE WHEN cur.claim_until > v_now OR cur.not_before > v_now;  -- claimed or nacked meanwhile
    v_taken_over := cur.claim_events IS NOT NULL;
    IF v_taken_over THEN
      -- Taking over a claim whose visibility ran out: it counts as a failure of its oldest event.
      cur := idem._outbox_fail_head(v_consumer, cur, format('claim expired at %s without an ack', to_char(cur.claim_until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')), v_now);
    END IF;
    SELECT array_agg(n.event_id ORDER BY n.position, n.event_id), array_agg(n.position ORDER BY n.position, n.event_id)
      INTO v_ids, v_positions
      FROM (SELECT e.event_id, m.position FROM idem.outbox_commits m
             CROSS JOIN LATERAL (SELECT x.event_id FROM idem.outbox_events x
                                  WHERE x.tenant_id = m.tenant_id AND x.topic = m.topic AND x.txn_id = m.txn_id
                                    AND (m.position, x.event_id) > (cur.acked_position, cur.acked_event_id)
                                  ORDER BY x.event_id OFFSET 0) e
             WHERE m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position >= cur.acked_position
             ORDER BY m.position, e.event_id LIMIT v_left) n;
    IF v_ids IS NULL THEN
      -- Nothing left to hand out (the last event went to the dead letters just now, or another
      -- claim acked it between the pick and the lock): keep a takeover's changes.
      IF v_taken_over THEN
        PERFORM idem._outbox_write(cur);
      END IF;
      CONTINUE;
    END IF;
    v_last := cardinality(v_ids);
    RETURN QUERY
      SELECT e.event_id, e.tenant_id, e.topic, e.key, e.payload, e.emitted_at, m.committed_at,
             CASE WHEN e.event_id = cur.head_event_id THEN cur.head_attempts + 1 ELSE 1 END,
             (m.position, e.event_id) <= (cur.delivered_position, cur.delivered_event_id), v_token
        FROM unnest(v_ids, v_positions) WITH ORDINALITY AS u(id, pos, n)
        JOIN idem.outbox_commits m ON m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position = u.pos
        JOIN idem.outbox_events e ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id AND e.event_id = u.id
       ORDER BY u.n;
    IF (v_positions[v_last], v_ids[v_last]) > (cur.delivered_position, cur.delivered_event_id) THEN
      cur.delivered_position := v_positions[v_last];
      cur.delivered_event_id := v_ids[v_last];
    END IF;
    cur.claim_token := v_token; cur.claim_until := v_until;
    cur.claim_events := v_ids; cur.claim_positions := v_positions; cur.claim_acked := '{}';
    cur.last_token := v_token; cur.not_before := NULL; cur.last_claimed_at := v_now;
    PERFORM idem._outbox_write(cur);
    v_left := v_left - v_last;
  END LOOP;
END $$;
COMMENT ON FUNCTION idem.claim(text, text[], integer, interval) IS
  'Hands out up to batch events of the consumer''s topics, each group''s in commit order, under one token; never waits. Unacked after visibility, they go to the next claim.';

-- A failure of the group's oldest unacked event (nack, or a claim that expired): count it, and
-- past max_attempts move the event to the dead letters and the cursor past it. Returns the
-- cursor as it must be written; the caller writes it.
CREATE FUNCTION idem._outbox_fail_head(p_consumer idem.outbox_consumers, cur idem.outbox_cursor_states, p_error text,
                                       p_now timestamptz) RETURNS idem.outbox_cursor_states
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_head bigint := cur.claim_events[1];
  v_head_position bigint := cur.claim_positions[1];
BEGIN
  IF cur.head_event_id IS DISTINCT FROM v_head THEN
    cur.head_event_id := v_head;
    cur.head_attempts := 0;
  END IF;
  cur.head_attempts := cur.head_attempts + 1;
  cur.head_error := left(p_error, 2000);
  cur.claim_token := NULL; cur.claim_until := NULL;
  cur.claim_events := NULL; cur.claim_positions := NULL; cur.claim_acked := NULL;
  IF cur.head_attempts >= p_consumer.max_attempts THEN
    INSERT INTO idem.outbox_dead_letters (tenant_id, consumer, event_id, topic, key, payload, position,
                                          emitted_at, committed_at, attempts, last_error, dead_at)
      SELECT e.tenant_id, cur.consumer, e.event_id, e.topic, e.key, e.payload, m.position, e.emitted_at,
             m.committed_at, cur.head_attempts, cur.head_error, p_now
        FROM idem.outbox_commits m JOIN idem.outbox_events e
          ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
       WHERE m.tenant_id = cur.tenant_id AND m.topic = cur.topic AND m.position = v_head_position AND e.event_id = v_head;
    cur.acked_position := v_head_position;
    cur.acked_event_id := v_head;
    cur.head_event_id := NULL; cur.head_attempts := 0; cur.head_error := NULL;
    cur.not_before := NULL;
  END IF;
  RETURN cur;
END $$;

-- ---------------------------------------------------------------------------------------------
-- ack / nack.

-- Acks p_ids (all of one group) under p_token: the cursor moves over the acked prefix of the
-- claim; acks beyond it wait in claim_acked. Events already behind the cursor under the newest
-- token are acked again without effect.
CREATE FUNCTION idem._outbox_ack_group(p_consumer text, p_tenant text, p_topic text, p_ids bigint[],
                                       p_positions bigint[], p_token uuid) RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  cur idem.outbox_cursor_states;
  v_acked bigint[];
  v_n integer := 0;
  i integer;
BEGIN
  cur := idem._outbox_lock(p_tenant, p_consumer, p_topic, 'wait');
  FOR i IN 1 .. cardinality(p_ids) LOOP
    IF cur.claim_events IS NOT NULL AND p_ids[i] = ANY (cur.claim_events) THEN
      IF cur.claim_token <> p_token THEN
        PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
          format('event %s is claimed by consumer %L under another token: this claim expired and was taken over, or the token is wrong',
                 p_ids[i], p_consumer),
          'Stop working on this batch and claim again; effects guarded by idem.consume_once are applied once whoever acks.');
      END IF;
      IF NOT (p_ids[i] = ANY (cur.claim_acked)) THEN  -- acked out of order before: not new
        v_n := v_n + 1;
      END IF;
    ELSIF cur.tenant_id IS NOT NULL AND p_positions[i] IS NOT NULL
          AND (p_positions[i], p_ids[i]) <= (cur.acked_position, cur.acked_event_id) AND cur.last_token = p_token THEN
      IF EXISTS (SELECT 1 FROM idem.outbox_dead_letters d
                  WHERE d.tenant_id = p_tenant AND d.consumer = p_consumer AND d.event_id = p_ids[i] AND d.resolved_at IS NULL) THEN
        PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
          format('event %s of consumer %L is a dead letter (its failures reached max_attempts)', p_ids[i], p_consumer),
          'An operator replays it with idem.outbox_replay, or closes it with idem.outbox_discard.');
      END IF;
      -- else: acked before under this same claim
    ELSIF cur.claim_events IS NULL AND cur.last_token = p_token AND p_positions[i] IS NOT NULL
          AND (p_positions[i], p_ids[i]) > (cur.acked_position, cur.acked_event_id) THEN
      PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
        format('event %s is not in the open claim of consumer %L: the claim was given back (nack), taken over, or never held it', p_ids[i], p_consumer),
        'Claim again.');
    ELSE
      PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
        format('event %s is not in an open claim of consumer %L under token %s', p_ids[i], p_consumer, p_token),
        'Ack only events that idem.claim handed out under that token, before another claim takes them over.');
    END IF;
  END LOOP;
  IF v_n = 0 THEN
    RETURN 0;
  END IF;
  v_acked := ARRAY(SELECT DISTINCT x FROM unnest(cur.claim_acked || p_ids) AS x WHERE x = ANY (cur.claim_events));
  i := 1;
  WHILE i <= cardinality(cur.claim_events) AND cur.claim_events[i] = ANY (v_acked) LOOP
    i := i + 1;
  END LOOP;
  IF i > 1 THEN
    cur.acked_position := cur.claim_positions[i - 1];
    cur.acked_event_id := cur.claim_events[i - 1];
    IF cur.head_event_id = ANY (cur.claim_events[1:i - 1]) THEN
      cur.head_event_id := NULL; cur.head_attempts := 0; cur.head_error := NULL;
    END IF;
  END IF;
  IF i > cardinality(cur.claim_events) THEN
    cur.claim_token := NULL; cur.claim_until := NULL;
    cur.claim_events := NULL; cur.claim_positions := NULL; cur.claim_acked := NULL;
  ELSE
    cur.claim_acked := ARRAY(SELECT x FROM unnest(v_acked) AS x WHERE x = ANY (cur.claim_events[i:]));
    cur.claim_events := cur.claim_events[i:];
    cur.claim_positions := cur.claim_positions[i:];
  END IF;
  PERFORM idem._outbox_write(cur);
  RETURN v_n;
END $$;

CREATE FUNCTION idem.ack(consumer text, event_ids bigint[], token uuid) RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  g record;
  v_n integer := 0;
  v_missing bigint;
  v_replays bigint[];
  v_ids bigint[];
  v_positions bigint[];
BEGIN
  PERFORM idem._outbox_consumer(consumer);
  IF token IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'token must be the claim token idem.claim returned');
  END IF;
  IF event_ids IS NULL OR cardinality(event_ids) = 0 OR array_position(event_ids, NULL) IS NOT NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'event_ids must be a non-empty array without NULLs');
  END IF;
  SELECT x INTO v_missing FROM unnest(event_ids) AS x
   WHERE NOT EXISTS (SELECT 1 FROM idem.outbox_events e WHERE e.event_id = x) LIMIT 1;
  IF FOUND THEN
    PERFORM idem._outbox_event(consumer, v_missing);  -- raises ERR_OUTBOX_EVENT_UNKNOWN
  END IF;
  FOR g IN SELECT e.tenant_id, e.topic, array_agg(e.event_id ORDER BY e.event_id) AS ids,
                  array_agg(m.position ORDER BY e.event_id) AS positions
             FROM idem.outbox_events e
             LEFT JOIN idem.outbox_commits m ON m.tenant_id = e.tenant_id AND m.topic = e.topic AND m.txn_id = e.txn_id
            WHERE e.event_id = ANY (event_ids)
            GROUP BY e.tenant_id, e.topic ORDER BY e.tenant_id, e.topic LOOP
    IF NOT EXISTS (SELECT 1 FROM idem.outbox_subscriptions s WHERE s.consumer = ack.consumer AND s.topic = g.topic) THEN
      PERFORM idem._outbox_event(consumer, g.ids[1]);  -- raises ERR_OUTBOX_NOT_CLAIMED
    END IF;
    -- One claim may hold replays of dead letters and the group's own events: each part is acked
    -- where it is kept.
    SELECT coalesce(array_agg(d.event_id), '{}') INTO v_replays FROM idem.outbox_dead_letters d
     WHERE d.tenant_id = g.tenant_id AND d.consumer = ack.consumer AND d.event_id = ANY (g.ids)
       AND ((d.claim_token IS NOT NULL AND d.resolved_at IS NULL) OR (d.resolution = 'replayed' AND d.claim_token = token));
    IF cardinality(v_replays) > 0 THEN
      v_n := v_n + idem._outbox_ack_replays(consumer, g.tenant_id, v_replays, token);
    END IF;
    IF cardinality(v_replays) < cardinality(g.ids) THEN
      SELECT array_agg(u.id ORDER BY u.n), array_agg(u.pos ORDER BY u.n) INTO v_ids, v_positions
        FROM unnest(g.ids, g.positions) WITH ORDINALITY AS u(id, pos, n) WHERE NOT (u.id = ANY (v_replays));
      v_n := v_n + idem._outbox_ack_group(consumer, g.tenant_id, g.topic, v_ids, v_positions, token);
    END IF;
  END LOOP;
  RETURN v_n;
END $$;
COMMENT ON FUNCTION idem.ack(text, bigint[], uuid) IS
  'Acknowledges claimed events (one update per group); returns how many were newly acked. Ack in the transaction of the effect when it is in this database.';

CREATE FUNCTION idem.ack(consumer text, event_id bigint, token uuid) RETURNS void
  LANGUAGE sql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $$
  SELECT FROM idem.ack(consumer, ARRAY[event_id], token) $$;
COMMENT ON FUNCTION idem.ack(text, bigint, uuid) IS 'Acknowledges one claimed event.';

-- Replayed dead letters: acked by closing them.
CREATE FUNCTION idem._outbox_ack_replays(p_consumer text, p_tenant text, p_ids bigint[], p_token uuid) RETURNS integer
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  d record;
  v_n integer := 0;
BEGIN
  FOR d IN SELECT * FROM idem.outbox_dead_letters x
            WHERE x.tenant_id = p_tenant AND x.consumer = p_consumer AND x.event_id = ANY (p_ids)
            ORDER BY x.event_id FOR UPDATE LOOP
    IF d.resolution = 'replayed' AND d.claim_token = p_token THEN
      CONTINUE;  -- acked before under this same claim
    ELSIF d.resolved_at IS NOT NULL OR d.claim_token IS NULL THEN
      PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED', format('dead letter %s of consumer %L is not claimed for replay', d.event_id, p_consumer));
    ELSIF d.claim_token <> p_token THEN
      PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
        format('replay of event %s is claimed by consumer %L under another token', d.event_id, p_consumer), 'Claim again.');
    END IF;
    UPDATE idem.outbox_dead_letters x SET resolved_at = clock_timestamp(), resolution = 'replayed', claim_until = NULL
     WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
    v_n := v_n + 1;
  END LOOP;
  RETURN v_n;
END $$;

CREATE FUNCTION idem.nack(consumer text, event_id bigint, token uuid, error text, retry_in interval DEFAULT NULL) RETURNS text
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  v_consumer idem.outbox_consumers;
  ev record;
  cur idem.outbox_cursor_states;
  d idem.outbox_dead_letters;
  v_now timestamptz := clock_timestamp();
  v_delay interval;
BEGIN
  v_consumer := idem._outbox_consumer(consumer);
  IF token IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'token must be the claim token idem.claim returned');
  END IF;
  IF error IS NULL OR btrim(error) = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'error must say why the event failed (it is kept with a dead letter)');
  END IF;
  IF retry_in IS NOT NULL AND (retry_in < interval '0' OR retry_in > interval '1 day') THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('retry_in must be 0..1 day, got %s', retry_in));
  END IF;
  ev := idem._outbox_event(consumer, event_id);
  SELECT * INTO d FROM idem.outbox_dead_letters x
   WHERE x.tenant_id = ev.tenant_id AND x.consumer = nack.consumer AND x.event_id = nack.event_id FOR UPDATE;
  IF FOUND AND d.claim_token IS NOT NULL AND d.resolved_at IS NULL THEN
    IF d.claim_token <> token THEN
      PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
        format('replay of event %s is claimed by consumer %L under another token', event_id, consumer), 'Claim again.');
    END IF;
    UPDATE idem.outbox_dead_letters x
       SET attempts = x.attempts + 1, last_error = left(error, 2000), replay_requested_at = NULL,
           claim_token = NULL, claim_until = NULL
     WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
    RETURN 'dead_letter';
  END IF;
  cur := idem._outbox_lock(ev.tenant_id, nack.consumer, ev.topic, 'wait');
  IF cur.claim_events IS NULL OR NOT (event_id = ANY (cur.claim_events)) THEN
    PERFORM idem._raise('ERR_OUTBOX_NOT_CLAIMED',
      format('event %s is not in an open claim of consumer %L', event_id, consumer), 'Claim again.');
  END IF;
  IF cur.claim_token <> token THEN
    PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
      format('event %s is claimed by consumer %L under another token: this claim expired and was taken over, or the token is wrong', event_id, consumer),
      'Stop working on this batch and claim again.');
  END IF;
  IF event_id = ANY (cur.claim_acked) OR event_id <> cur.claim_events[1] THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('event %s is not the oldest unacked event of its claim (%s): a group is processed in commit order, so ack or nack %s first',
             event_id, cur.claim_events[1], cur.claim_events[1]));
  END IF;
  cur := idem._outbox_fail_head(v_consumer, cur, error, v_now);
  IF cur.head_event_id IS NOT NULL THEN
    v_delay := coalesce(retry_in, least(interval '1 second' * power(2, cur.head_attempts - 1), interval '5 minutes'));
    cur.not_before := v_now + v_delay;
  END IF;
  PERFORM idem._outbox_write(cur);
  RETURN CASE WHEN cur.head_event_id IS NULL THEN 'dead_letter' ELSE 'retry' END;
END $$;
COMMENT ON FUNCTION idem.nack(text, bigint, uuid, text, interval) IS
  'Gives the claim back: the event failed with error. It is retried after retry_in (default 1 s doubling, at most 5 min); its max_attempts-th failure makes it a dead letter. Returns retry or dead_letter.';

-- ---------------------------------------------------------------------------------------------
-- consume_once: the consumer's own dedupe, in the transaction of its effect.

CREATE FUNCTION idem.consume_once(consumer text, event_id bigint, token uuid DEFAULT NULL) RETURNS boolean
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER
  SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  ev record;
  cur idem.outbox_cursor_states;
BEGIN
  PERFORM idem._outbox_consumer(consumer);
  ev := idem._outbox_event(consumer, event_id);
  IF token IS NOT NULL THEN
    -- Fencing: hold the claim (a share lock until this transaction ends) so it cannot be taken
    -- over while the effect commits; a claim already taken over refuses the effect.
    -- A claimed replay of a dead letter is fenced by its own row; the group's cursor is locked
    -- only for the group's events (two workers each replaying the other's group must not wait on
    -- each other's cursors).
    PERFORM 1 FROM idem.outbox_dead_letters d
     WHERE d.tenant_id = ev.tenant_id AND d.consumer = consume_once.consumer AND d.event_id = consume_once.event_id
       AND d.claim_token = token AND d.resolved_at IS NULL FOR SHARE;
    IF NOT FOUND THEN
      cur := idem._outbox_lock(ev.tenant_id, consume_once.consumer, ev.topic, 'share');
      -- coalesce: a group without an open claim (claim_token NULL) must refuse, not pass.
      IF NOT coalesce(cur.claim_token = token AND event_id = ANY (cur.claim_events), false) THEN
        PERFORM idem._raise('ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
          format('event %s is not claimed by consumer %L under token %s (expired and taken over, or acked)', event_id, consumer, token),
          'Roll back this effect: another worker holds the event now.');
      END IF;
    END IF;
  END IF;
  INSERT INTO idem.outbox_consumed (tenant_id, consumer, event_id) VALUES (ev.tenant_id, consumer, event_id)
    ON CONFLICT DO NOTHING;
  RETURN FOUND;
END $$;
COMMENT ON FUNCTION idem.consume_once(text, bigint, uuid) IS
  'True the first time the consumer applies the event, false for a redelivery; call it in the transaction of the effect. With the claim token it also fences out a worker whose claim was taken over.';

-- ---------------------------------------------------------------------------------------------
-- Operators: dead letters, lag and retention.

-- The consumer's open dead letter p_event_id, locked for the operator's change; refused while a
-- worker holds a claim of its replay (the worker may be applying it right now).
CREATE FUNCTION idem._outbox_open_dead_letter(p_consumer text, p_event_id bigint) RETURNS idem.outbox_dead_letters
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  d idem.outbox_dead_letters;
BEGIN
  PERFORM idem._outbox_consumer(p_consumer);
  SELECT * INTO d FROM idem.outbox_dead_letters x
   WHERE x.consumer = p_consumer AND x.event_id = p_event_id AND x.resolved_at IS NULL FOR UPDATE;
  IF NOT FOUND THEN
    PERFORM idem._raise('ERR_OUTBOX_EVENT_UNKNOWN',
      format('consumer %L has no open dead letter %s', p_consumer, coalesce(p_event_id::text, 'NULL')),
      'SELECT * FROM idem.outbox_dead_letters WHERE resolved_at IS NULL lists them.');
  END IF;
  IF d.claim_until > clock_timestamp() THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID',
      format('dead letter %s of consumer %L is being replayed by a worker right now', p_event_id, p_consumer),
      'Wait for its ack or nack (or its visibility to pass).');
  END IF;
  RETURN d;
END $$;

CREATE FUNCTION idem.outbox_replay(consumer text, event_id bigint) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  d idem.outbox_dead_letters;
BEGIN
  d := idem._outbox_open_dead_letter(consumer, event_id);
  UPDATE idem.outbox_dead_letters x SET replay_requested_at = clock_timestamp(), claim_token = NULL, claim_until = NULL
   WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
END $$;
COMMENT ON FUNCTION idem.outbox_replay(text, bigint) IS 'Hands a dead letter to the consumer again (at its next claim, before other events).';

CREATE FUNCTION idem.outbox_discard(consumer text, event_id bigint, reason text) RETURNS void
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  d idem.outbox_dead_letters;
BEGIN
  PERFORM idem._outbox_consumer(consumer);
  IF reason IS NULL OR btrim(reason) = '' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'reason must say why the dead letter is closed without being applied');
  END IF;
  d := idem._outbox_open_dead_letter(consumer, event_id);
  UPDATE idem.outbox_dead_letters x
     SET resolved_at = clock_timestamp(), resolution = 'discarded', resolution_note = reason, claim_token = NULL, claim_until = NULL
   WHERE x.tenant_id = d.tenant_id AND x.consumer = d.consumer AND x.event_id = d.event_id;
END $$;
COMMENT ON FUNCTION idem.outbox_discard(text, bigint, text) IS 'Closes a dead letter without applying it, with the reason.';

CREATE VIEW idem.outbox_lag AS
SELECT s.consumer, s.topic,
       coalesce(sum(b.backlog), 0)::bigint AS backlog,
       min(b.oldest_committed_at) AS oldest_unacked_committed_at,
       clock_timestamp() - min(b.oldest_committed_at) AS oldest_unacked_age,
       count(c.tenant_id) FILTER (WHERE c.claim_until > clock_timestamp()) AS claimed_groups,
       count(c.tenant_id) FILTER (WHERE c.head_attempts > 0) AS retrying_groups,
       (SELECT count(*) FROM idem.outbox_dead_letters d
         WHERE d.consumer = s.consumer AND d.topic = s.topic AND d.resolved_at IS NULL) AS dead_letters
  FROM idem.outbox_subscriptions s
  LEFT JOIN idem.outbox_groups g ON g.topic = s.topic
  LEFT JOIN LATERAL (SELECT * FROM idem.outbox_cursor_states x
                      WHERE x.tenant_id = g.tenant_id AND x.consumer = s.consumer AND x.topic = s.topic
                      ORDER BY x.version DESC LIMIT 1) c ON true
  LEFT JOIN LATERAL (
    SELECT count(*) AS backlog, min(m.committed_at) AS oldest_committed_at
      FROM (SELECT * FROM idem.outbox_commits y
             WHERE y.tenant_id = g.tenant_id AND y.topic = g.topic AND y.position >= coalesce(c.acked_position, 0)
             ORDER BY y.position OFFSET 0) m  -- the position index from the cursor, not all commits
     CROSS JOIN LATERAL (SELECT x.event_id FROM idem.outbox_events x
                          WHERE x.tenant_id = m.tenant_id AND x.topic = m.topic AND x.txn_id = m.txn_id
                            AND (m.position, x.event_id) > (coalesce(c.acked_position, 0), coalesce(c.acked_event_id, 0))
                          OFFSET 0) e) b ON true
 GROUP BY s.consumer, s.topic;
COMMENT ON VIEW idem.outbox_lag IS
  'Per consumer and topic: committed events not yet acked (backlog), the oldest one''s commit time and age, groups claimed or retrying now, open dead letters.';

CREATE FUNCTION idem.purge_outbox(older_than interval DEFAULT '7 days', batch integer DEFAULT 10000) RETURNS bigint
  LANGUAGE plpgsql VOLATILE SECURITY DEFINER SET search_path = pg_catalog, pg_temp SET enable_seqscan = off AS $$
DECLARE
  g record;
  v_cutoff timestamptz;
  v_consumers text[];
  v_safe bigint;
  v_txns bigint[];
  v_ids bigint[];
  v_n bigint := 0;
BEGIN
  IF older_than IS NULL OR older_than < interval '0' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'older_than must be an elapsed time of 0 or more');
  END IF;
  IF batch IS NULL OR batch NOT BETWEEN 1 AND 100000 THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', format('batch must be 1..100000, got %s', coalesce(batch::text, 'NULL')));
  END IF;
  IF current_setting('transaction_isolation') <> 'read committed' THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'purge_outbox runs in READ COMMITTED',
      'Its snapshot must see every consumer, including one created a moment ago.');
  END IF;
  -- A consumer registered while this runs would not be waited for: create_consumer waits for us
  -- (its INSERT needs ROW EXCLUSIVE), and every statement below sees those registered before.
  LOCK TABLE idem.outbox_subscriptions IN SHARE MODE;
  v_cutoff := clock_timestamp() - older_than;
  FOR g IN SELECT * FROM idem.outbox_groups ORDER BY tenant_id, topic LOOP
    EXIT WHEN v_n >= batch;
    SELECT array_agg(s.consumer) INTO v_consumers FROM idem.outbox_subscriptions s WHERE s.topic = g.topic;
    -- Whole transactions every consumer of the topic has acked (a consumer without a cursor has
    -- acked nothing of the group).
    -- v_safe: the first position some consumer has not fully acked (the commit a consumer's ack
    -- stopped in is done only if its last event is acked).
    SELECT min(CASE WHEN st.acked_event_id >= coalesce(
                       (SELECT max(e.event_id) FROM idem.outbox_commits m JOIN idem.outbox_events e
                            ON e.tenant_id = m.tenant_id AND e.topic = m.topic AND e.txn_id = m.txn_id
                         WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position = st.acked_position), 0)
                    THEN st.acked_position + 1 ELSE st.acked_position END) INTO v_safe
      FROM unnest(coalesce(v_consumers, '{}')) AS s(consumer),
           LATERAL idem._outbox_state(g.tenant_id, s.consumer, g.topic) st;
    -- Superseded delivery states (never the newest: a state newer than this snapshot's newest
    -- is not seen, so what is deleted is older still).
    DELETE FROM idem.outbox_cursor_states x
     WHERE x.tenant_id = g.tenant_id AND x.topic = g.topic AND x.consumer = ANY (coalesce(v_consumers, '{}'))
       AND x.version < (SELECT max(y.version) FROM idem.outbox_cursor_states y
                         WHERE y.tenant_id = x.tenant_id AND y.consumer = x.consumer AND y.topic = x.topic);
    v_safe := coalesce(v_safe, 9223372036854775807);
    -- A transaction with an open dead letter stays: replaying it needs the event (ack, nack and
    -- consume_once look it up) and its consume_once rows.
    SELECT array_agg(m.txn_id) INTO v_txns FROM (
      SELECT m.txn_id FROM idem.outbox_commits m
       WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.position < v_safe AND m.committed_at < v_cutoff
         AND NOT EXISTS (SELECT 1 FROM idem.outbox_dead_letters d
                          WHERE d.tenant_id = m.tenant_id AND d.topic = m.topic AND d.position = m.position
                            AND d.resolved_at IS NULL)
       ORDER BY m.position LIMIT batch - v_n) m;
    CONTINUE WHEN v_txns IS NULL;
    WITH gone AS (
      DELETE FROM idem.outbox_events e
       WHERE e.tenant_id = g.tenant_id AND e.topic = g.topic AND e.txn_id = ANY (v_txns) RETURNING e.event_id)
    SELECT array_agg(event_id) INTO v_ids FROM gone;
    DELETE FROM idem.outbox_consumed k
     WHERE k.tenant_id = g.tenant_id AND k.consumer = ANY (coalesce(v_consumers, '{}')) AND k.event_id = ANY (v_ids);
    DELETE FROM idem.outbox_commits m WHERE m.tenant_id = g.tenant_id AND m.topic = g.topic AND m.txn_id = ANY (v_txns);
    -- An empty commit (its events were rolled back with a savepoint) counts as one row.
    v_n := v_n + coalesce(cardinality(v_ids), 1);
  END LOOP;
  RETURN v_n;
END $$;
COMMENT ON FUNCTION idem.purge_outbox(interval, integer) IS
  'Deletes events (with their commit rows and consume_once rows) that every consumer of their topic has acked and that committed more than older_than ago; at most about batch per call. Returns how many.';

-- ---------------------------------------------------------------------------------------------
-- Privileges.

REVOKE ALL ON ALL TABLES IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON SEQUENCE idem.outbox_seq FROM PUBLIC;
-- Emitting and consuming are separate roles: a role that can only emit cannot claim, ack or mark
-- as applied (consume_once) another service's events.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'idem_consumer') THEN
    CREATE ROLE idem_consumer NOLOGIN;
  END IF;
END $$;
GRANT USAGE ON SCHEMA idem TO idem_consumer;
GRANT EXECUTE ON FUNCTION idem.emit(text, text, jsonb, text) TO idem_service;
GRANT EXECUTE ON FUNCTION
  idem.claim(text, text[], integer, interval),
  idem.ack(text, bigint[], uuid), idem.ack(text, bigint, uuid),
  idem.nack(text, bigint, uuid, text, interval), idem.consume_once(text, bigint, uuid)
  TO idem_consumer;
GRANT EXECUTE ON FUNCTION
  idem.create_topic(text, text), idem.create_consumer(text, text[], integer),
  idem.outbox_replay(text, bigint), idem.outbox_discard(text, bigint, text), idem.purge_outbox(interval, integer)
  TO idem_operator;
GRANT SELECT ON idem.outbox_lag TO idem_service, idem_consumer, idem_auditor, idem_operator;
GRANT SELECT ON ALL TABLES IN SCHEMA idem TO idem_auditor, idem_operator;
