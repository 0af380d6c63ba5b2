-- The transactional outbox: topics, consumers and their subscriptions, events and their
-- commit order, per-group cursors and their states, dead letters, what was consumed once.

CREATE TABLE idem.outbox_consumers (
    consumer text NOT NULL COLLATE pg_catalog."C",
    max_attempts integer NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT outbox_consumers_consumer_check CHECK ((consumer ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$'::text)),
    CONSTRAINT outbox_consumers_max_attempts_check CHECK (((max_attempts >= 1) AND (max_attempts <= 1000)))
);

ALTER TABLE ONLY idem.outbox_consumers FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_consumers IS 'Outbox consumers: every consumer gets every event of its topics; its workers share them (one claim per group at a time). Add with idem.create_consumer.';

CREATE TABLE idem.outbox_cursor_states (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    consumer text NOT NULL COLLATE pg_catalog."C",
    topic text NOT NULL COLLATE pg_catalog."C",
    version bigint NOT NULL,
    acked_position bigint NOT NULL,
    acked_event_id bigint NOT NULL,
    delivered_position bigint NOT NULL,
    delivered_event_id bigint NOT NULL,
    claim_token uuid,
    claim_until timestamp with time zone,
    claim_events bigint[],
    claim_positions bigint[],
    claim_acked bigint[],
    last_token uuid,
    head_event_id bigint,
    head_attempts integer NOT NULL,
    head_error text,
    not_before timestamp with time zone,
    last_claimed_at timestamp with time zone,
    written_at timestamp with time zone NOT NULL,
    CONSTRAINT outbox_cursor_states_check CHECK (((claim_events IS NULL) = (claim_token IS NULL))),
    CONSTRAINT outbox_cursor_states_check1 CHECK (((claim_events IS NULL) = (claim_until IS NULL)))
);

ALTER TABLE ONLY idem.outbox_cursor_states FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_cursor_states IS 'Append-only: the delivery state of a consumer and group after each claim, ack and nack; the newest version is the state.';

CREATE TABLE idem.outbox_dead_letters (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    consumer text NOT NULL COLLATE pg_catalog."C",
    event_id bigint NOT NULL,
    topic text NOT NULL COLLATE pg_catalog."C",
    key text COLLATE pg_catalog."C",
    payload jsonb NOT NULL,
    "position" bigint NOT NULL,
    emitted_at timestamp with time zone NOT NULL,
    committed_at timestamp with time zone NOT NULL,
    attempts integer NOT NULL,
    last_error text,
    dead_at timestamp with time zone NOT NULL,
    replay_requested_at timestamp with time zone,
    claim_token uuid,
    claim_until timestamp with time zone,
    resolved_at timestamp with time zone,
    resolution text,
    resolution_note text,
    CONSTRAINT outbox_dead_letters_check CHECK (((resolved_at IS NULL) = (resolution IS NULL))),
    CONSTRAINT outbox_dead_letters_resolution_check CHECK ((resolution = ANY (ARRAY['replayed'::text, 'discarded'::text])))
);

ALTER TABLE ONLY idem.outbox_dead_letters FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_dead_letters IS 'Events a consumer failed max_attempts times, with the last error; the group moved on past them. idem.outbox_replay hands one out again, idem.outbox_discard closes it.';

CREATE TABLE idem.outbox_commits (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    topic text NOT NULL COLLATE pg_catalog."C",
    "position" bigint NOT NULL,
    txn_id bigint NOT NULL,
    committed_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY idem.outbox_commits FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_commits IS 'One row per emitting transaction and group, drawn at its commit under the group''s lock: position order is commit order within (tenant, topic).';

CREATE TABLE idem.outbox_consumed (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    consumer text NOT NULL COLLATE pg_catalog."C",
    event_id bigint NOT NULL,
    consumed_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

ALTER TABLE ONLY idem.outbox_consumed FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_consumed IS 'One row per event a consumer applied (idem.consume_once), written in the consumer''s own transaction.';

CREATE TABLE idem.outbox_cursors (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    consumer text NOT NULL COLLATE pg_catalog."C",
    topic text NOT NULL COLLATE pg_catalog."C",
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL
);

ALTER TABLE ONLY idem.outbox_cursors FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_cursors IS 'One row per consumer and (tenant, topic) group: the lock of its delivery state. Never updated.';

CREATE TABLE idem.outbox_events (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    topic text NOT NULL COLLATE pg_catalog."C",
    txn_id bigint NOT NULL,
    event_id bigint NOT NULL,
    key text COLLATE pg_catalog."C",
    payload jsonb NOT NULL,
    emitted_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY idem.outbox_events FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_events IS 'Outbox events, written by idem.emit in the caller''s transaction; never updated.';

CREATE TABLE idem.outbox_groups (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    topic text NOT NULL COLLATE pg_catalog."C",
    created_at timestamp with time zone DEFAULT now() NOT NULL
);

ALTER TABLE ONLY idem.outbox_groups FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_groups IS 'Every (tenant, topic) that ever committed an event; claims discover new groups here.';

CREATE TABLE idem.outbox_subscriptions (
    consumer text NOT NULL COLLATE pg_catalog."C",
    topic text NOT NULL COLLATE pg_catalog."C"
);

ALTER TABLE ONLY idem.outbox_subscriptions FORCE ROW LEVEL SECURITY;

CREATE SEQUENCE idem.outbox_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE SEQUENCE idem.outbox_state_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE idem.outbox_topics (
    topic text NOT NULL COLLATE pg_catalog."C",
    description text DEFAULT ''::text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT outbox_topics_topic_check CHECK ((topic ~ '^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$'::text))
);

ALTER TABLE ONLY idem.outbox_topics FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.outbox_topics IS 'Outbox topics; idem.emit refuses any other (ERR_OUTBOX_TOPIC_UNKNOWN). Add with idem.create_topic.';

CREATE SEQUENCE idem.outbox_txn_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

ALTER TABLE ONLY idem.outbox_commits
    ADD CONSTRAINT outbox_commits_pkey PRIMARY KEY (tenant_id, topic, "position");

ALTER TABLE ONLY idem.outbox_commits
    ADD CONSTRAINT outbox_commits_tenant_id_topic_txn_id_key UNIQUE (tenant_id, topic, txn_id);

ALTER TABLE ONLY idem.outbox_consumed
    ADD CONSTRAINT outbox_consumed_pkey PRIMARY KEY (tenant_id, consumer, event_id);

ALTER TABLE ONLY idem.outbox_consumers
    ADD CONSTRAINT outbox_consumers_pkey PRIMARY KEY (consumer);

ALTER TABLE ONLY idem.outbox_cursor_states
    ADD CONSTRAINT outbox_cursor_states_pkey PRIMARY KEY (tenant_id, consumer, topic, version);

ALTER TABLE ONLY idem.outbox_cursors
    ADD CONSTRAINT outbox_cursors_pkey PRIMARY KEY (tenant_id, consumer, topic);

ALTER TABLE ONLY idem.outbox_dead_letters
    ADD CONSTRAINT outbox_dead_letters_pkey PRIMARY KEY (tenant_id, consumer, event_id);

ALTER TABLE ONLY idem.outbox_events
    ADD CONSTRAINT outbox_events_pkey PRIMARY KEY (tenant_id, topic, txn_id, event_id);

ALTER TABLE ONLY idem.outbox_groups
    ADD CONSTRAINT outbox_groups_pkey PRIMARY KEY (tenant_id, topic);

ALTER TABLE ONLY idem.outbox_subscriptions
    ADD CONSTRAINT outbox_subscriptions_pkey PRIMARY KEY (consumer, topic);

ALTER TABLE ONLY idem.outbox_topics
    ADD CONSTRAINT outbox_topics_pkey PRIMARY KEY (topic);

CREATE INDEX outbox_cursors_by_consumer ON idem.outbox_cursors USING btree (consumer, topic);

CREATE INDEX outbox_dead_letters_replays ON idem.outbox_dead_letters USING btree (consumer, topic) WHERE ((replay_requested_at IS NOT NULL) AND (resolved_at IS NULL));

CREATE INDEX outbox_events_by_id ON idem.outbox_events USING btree (event_id);

ALTER TABLE ONLY idem.outbox_subscriptions
    ADD CONSTRAINT outbox_subscriptions_consumer_fkey FOREIGN KEY (consumer) REFERENCES idem.outbox_consumers(consumer) ON DELETE CASCADE;

ALTER TABLE ONLY idem.outbox_subscriptions
    ADD CONSTRAINT outbox_subscriptions_topic_fkey FOREIGN KEY (topic) REFERENCES idem.outbox_topics(topic);

ALTER TABLE idem.outbox_commits ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_consumed ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_consumers ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_cursor_states ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_cursors ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_dead_letters ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_events ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_groups ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_subscriptions ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.outbox_topics ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON TABLE idem.outbox_consumers TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_consumers TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_cursor_states TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_cursor_states TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_dead_letters TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_dead_letters TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_commits TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_commits TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_consumed TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_consumed TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_cursors TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_cursors TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_events TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_events TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_groups TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_groups TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_subscriptions TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_subscriptions TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_topics TO idem_auditor;

GRANT SELECT ON TABLE idem.outbox_topics TO idem_operator;
