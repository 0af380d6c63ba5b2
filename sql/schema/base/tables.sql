-- The tables, their sequences, constraints, indexes, comments and grants, as of 0.3.6.

CREATE TYPE idem.acquire_result AS (
	outcome text,
	handle text,
	attempt bigint,
	generation integer,
	recovery_point text,
	recovery_data jsonb,
	response_status integer,
	response_headers jsonb,
	response_body bytea,
	order_id text,
	retry_after integer,
	lease_expires_at timestamp with time zone,
	handler_key text,
	key_reuse_differs text[]
);

COMMENT ON COLUMN idem.acquire_result.key_reuse_differs IS 'With outcome key_reused: what differs from the key''s first use (caller, resource); NULL otherwise.';

CREATE TABLE idem.keys (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    scope_digest bytea NOT NULL,
    status text NOT NULL,
    attempt bigint NOT NULL,
    generation integer NOT NULL,
    payload_hash bytea NOT NULL,
    hash_scheme smallint NOT NULL,
    caller_id text NOT NULL,
    resource text NOT NULL,
    client_key text NOT NULL,
    lease_interval interval NOT NULL,
    ttl interval NOT NULL,
    lease_expires_at timestamp with time zone,
    recovery_point text,
    recovery_data jsonb,
    response_status smallint,
    response_headers jsonb,
    response_body bytea,
    order_id text,
    handler_response jsonb,
    last_error text,
    created_at timestamp with time zone NOT NULL,
    resolved_at timestamp with time zone,
    expires_at timestamp with time zone,
    mutation_type text DEFAULT 'create'::text NOT NULL,
    attempted_at timestamp with time zone,
    attempts_in_generation integer DEFAULT 1 NOT NULL,
    local_status text,
    lease_secret_hash bytea,
    purge_after timestamp with time zone,
    payload_pinned boolean DEFAULT false NOT NULL,
    key_scope text DEFAULT COALESCE(current_setting('idem.key_scope'::text, true), 'tenant'::text)
)
WITH (fillfactor='80');

ALTER TABLE ONLY idem.keys FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.keys IS 'One row per scoped idempotency key; written only through idem.acquire/checkpoint/complete/release/purge_expired.';

COMMENT ON COLUMN idem.keys.expires_at IS 'When the record becomes history (the key starts a new generation); NULL for unresolved work with a checkpoint, which never does.';

COMMENT ON COLUMN idem.keys.lease_secret_hash IS 'SHA-256 of the secret in the handle acquire gave the current holder; NULL for leases taken before 0.3.1.';

COMMENT ON COLUMN idem.keys.purge_after IS 'When purge_expired starts looking at the record: attempted_at + ttl in elapsed time (never after expires_at), NULL when expires_at is NULL. Set by the trigger keys_invariants on every write; not moved by complete, whose UPDATE is HOT.';

COMMENT ON COLUMN idem.keys.payload_pinned IS 'An attempt of this generation may have called the handler (a release that did not say handler_called => false): another payload is a mismatch until the generation ends.';

COMMENT ON COLUMN idem.keys.key_scope IS 'tenant: the record owns its client key within the tenant (another caller or route is refused); route (or NULL, made before 0.3.6): the key is the caller''s and the route''s.';

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

CREATE TABLE idem.mutations (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    mutation_id bigint NOT NULL,
    scope_digest bytea NOT NULL,
    client_key text NOT NULL COLLATE pg_catalog."C",
    caller_id text NOT NULL,
    resource text NOT NULL,
    generation integer,
    attempt bigint,
    mutation_type text NOT NULL,
    outcome text NOT NULL,
    handler_called boolean,
    order_id text COLLATE pg_catalog."C",
    handler_response jsonb,
    local_status text,
    error_message text,
    recovery_point text,
    retry_count integer NOT NULL,
    attempted_at timestamp with time zone NOT NULL,
    completed_at timestamp with time zone
);

ALTER TABLE ONLY idem.mutations FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.mutations IS 'Append-only audit trail of every mutation attempt (reference §6.1); written by acquire/checkpoint/complete/release/resolve_stuck, purged only by idem.purge_audit.';

COMMENT ON COLUMN idem.mutations.handler_called IS 'Whether this attempt called the handler (the processor): NULL when nobody can know (released without saying, abandoned).';

CREATE TABLE idem.consumer_bindings (
    role_oid oid NOT NULL,
    consumer text NOT NULL COLLATE pg_catalog."C",
    bound_by name NOT NULL,
    bound_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY idem.consumer_bindings FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.consumer_bindings IS 'Roles (role_oid::regrole) bound to outbox consumers: a session whose login role is, or is a member of, a bound role claims, acks, nacks and consume_once''s only for those consumers.';

CREATE SEQUENCE idem.fencing_token_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

CREATE TABLE idem.machine_states (
    machine text NOT NULL COLLATE pg_catalog."C",
    state text NOT NULL COLLATE pg_catalog."C",
    description text NOT NULL,
    CONSTRAINT machine_states_machine_check CHECK ((machine <> ''::text)),
    CONSTRAINT machine_states_state_check CHECK ((state <> ''::text))
);

ALTER TABLE ONLY idem.machine_states FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.machine_states IS 'The states of every state machine; a state without an outgoing transition is terminal. Add machines with plain INSERTs.';

CREATE TABLE idem.machine_tables (
    table_schema text NOT NULL COLLATE pg_catalog."C",
    table_name text NOT NULL COLLATE pg_catalog."C",
    machine text NOT NULL COLLATE pg_catalog."C",
    status_column text NOT NULL COLLATE pg_catalog."C",
    key_column text COLLATE pg_catalog."C",
    tenant_column text NOT NULL COLLATE pg_catalog."C",
    registered_by name NOT NULL,
    registered_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY idem.machine_tables FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.machine_tables IS 'Tables whose status column idem.enforce_transitions guards, registered by an operator (idem.register_machine_table).';

CREATE TABLE idem.machine_transitions (
    machine text NOT NULL COLLATE pg_catalog."C",
    from_state text NOT NULL COLLATE pg_catalog."C",
    to_state text NOT NULL COLLATE pg_catalog."C",
    guard regprocedure,
    guard_name text,
    CONSTRAINT machine_transitions_check CHECK ((from_state <> to_state)),
    CONSTRAINT machine_transitions_check1 CHECK (((guard IS NULL) = (guard_name IS NULL)))
);

ALTER TABLE ONLY idem.machine_transitions FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.machine_transitions IS 'The allowed transitions of every state machine; guard(row jsonb) -> boolean must hold for guarded ones, and a refusal quotes guard_name.';

ALTER TABLE idem.mutations ALTER COLUMN mutation_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME idem.mutations_mutation_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE idem.operator_actions (
    action_id bigint NOT NULL,
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    scope_digest bytea NOT NULL,
    action text NOT NULL,
    attempt bigint NOT NULL,
    generation integer NOT NULL,
    recovery_point text,
    recovery_data jsonb,
    response_status smallint,
    reason text NOT NULL,
    performed_by name NOT NULL,
    performed_at timestamp with time zone NOT NULL,
    CONSTRAINT operator_actions_action_check CHECK ((action = ANY (ARRAY['resolve_stuck'::text, 'retry_stuck'::text]))),
    CONSTRAINT operator_actions_reason_check CHECK ((reason <> ''::text)),
    CONSTRAINT operator_actions_response_check CHECK (((action <> 'resolve_stuck'::text) OR (response_status IS NOT NULL)))
);

ALTER TABLE ONLY idem.operator_actions FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.operator_actions IS 'Append-only log of operator resolutions (idem.resolve_stuck): what the record held and why it was resolved.';

ALTER TABLE idem.operator_actions ALTER COLUMN action_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME idem.operator_actions_action_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

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

CREATE TABLE idem.retired_keys (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    scope_digest bytea NOT NULL,
    generation integer NOT NULL,
    retired_at timestamp with time zone NOT NULL,
    CONSTRAINT retired_keys_generation_check CHECK ((generation > 0)),
    CONSTRAINT retired_keys_scope_digest_check CHECK ((octet_length(scope_digest) = 32)),
    CONSTRAINT retired_keys_tenant_id_check CHECK ((tenant_id <> ''::text))
);

ALTER TABLE ONLY idem.retired_keys FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.retired_keys IS 'The last generation of each purged key, kept for idem.history_retention; written only by idem.purge_expired.';

CREATE TABLE idem.tenant_bindings (
    role_oid oid NOT NULL,
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    bound_by name NOT NULL,
    bound_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY idem.tenant_bindings FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.tenant_bindings IS 'Roles (role_oid::regrole) bound to tenants: a session whose login role is, or is a member of, a bound role acts and reads only for those tenants.';

CREATE TABLE idem.transition_log (
    log_id bigint NOT NULL,
    machine text NOT NULL COLLATE pg_catalog."C",
    relid regclass NOT NULL,
    table_name text NOT NULL,
    row_key text COLLATE pg_catalog."C",
    from_state text,
    to_state text,
    guard_name text,
    guard_result boolean,
    outcome text NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    tenant_id text COLLATE pg_catalog."C",
    CONSTRAINT transition_log_outcome_check CHECK ((outcome = ANY (ARRAY['applied'::text, 'skipped'::text])))
);

ALTER TABLE ONLY idem.transition_log FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.transition_log IS 'Every transition idem.enforce_transitions let through (applied) or refused in skip mode (skipped), with its guard''s answer.';

COMMENT ON COLUMN idem.transition_log.table_name IS 'The guarded table, schema-qualified (before 0.3.5: as search_path showed it).';

COMMENT ON COLUMN idem.transition_log.tenant_id IS 'The row''s tenant, from the registered tenant column; NULL for transitions logged before 0.3.5.';

ALTER TABLE idem.transition_log ALTER COLUMN log_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME idem.transition_log_log_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY idem.consumer_bindings
    ADD CONSTRAINT consumer_bindings_pkey PRIMARY KEY (role_oid, consumer);

ALTER TABLE ONLY idem.keys
    ADD CONSTRAINT keys_pkey PRIMARY KEY (tenant_id, scope_digest);

ALTER TABLE ONLY idem.machine_states
    ADD CONSTRAINT machine_states_pkey PRIMARY KEY (machine, state);

ALTER TABLE ONLY idem.machine_tables
    ADD CONSTRAINT machine_tables_pkey PRIMARY KEY (table_schema, table_name, status_column);

ALTER TABLE ONLY idem.machine_transitions
    ADD CONSTRAINT machine_transitions_pkey PRIMARY KEY (machine, from_state, to_state);

ALTER TABLE ONLY idem.mutations
    ADD CONSTRAINT mutations_pkey PRIMARY KEY (tenant_id, mutation_id);

ALTER TABLE ONLY idem.operator_actions
    ADD CONSTRAINT operator_actions_pkey PRIMARY KEY (tenant_id, action_id);

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

ALTER TABLE ONLY idem.retired_keys
    ADD CONSTRAINT retired_keys_pkey PRIMARY KEY (tenant_id, scope_digest);

ALTER TABLE ONLY idem.tenant_bindings
    ADD CONSTRAINT tenant_bindings_pkey PRIMARY KEY (role_oid, tenant_id);

ALTER TABLE ONLY idem.transition_log
    ADD CONSTRAINT transition_log_pkey PRIMARY KEY (log_id);

CREATE INDEX keys_purge_after_idx ON idem.keys USING btree (purge_after) WHERE (purge_after IS NOT NULL);

CREATE UNIQUE INDEX keys_tenant_key_owner_idx ON idem.keys USING btree (tenant_id, client_key COLLATE "C") WHERE (key_scope = 'tenant'::text);

CREATE INDEX mutations_key_idx ON idem.mutations USING btree (tenant_id, client_key, attempted_at);

CREATE INDEX mutations_order_idx ON idem.mutations USING btree (order_id) WHERE (order_id IS NOT NULL);

CREATE INDEX mutations_time_idx ON idem.mutations USING btree (attempted_at);

CREATE INDEX outbox_cursors_by_consumer ON idem.outbox_cursors USING btree (consumer, topic);

CREATE INDEX outbox_dead_letters_replays ON idem.outbox_dead_letters USING btree (consumer, topic) WHERE ((replay_requested_at IS NOT NULL) AND (resolved_at IS NULL));

CREATE INDEX outbox_events_by_id ON idem.outbox_events USING btree (event_id);

CREATE INDEX retired_keys_retired_at_idx ON idem.retired_keys USING btree (retired_at);

CREATE INDEX transition_log_key_idx ON idem.transition_log USING btree (row_key, at);

CREATE INDEX transition_log_row_idx ON idem.transition_log USING btree (relid, row_key, at);

ALTER TABLE ONLY idem.machine_transitions
    ADD CONSTRAINT machine_transitions_machine_from_state_fkey FOREIGN KEY (machine, from_state) REFERENCES idem.machine_states(machine, state);

ALTER TABLE ONLY idem.machine_transitions
    ADD CONSTRAINT machine_transitions_machine_to_state_fkey FOREIGN KEY (machine, to_state) REFERENCES idem.machine_states(machine, state);

ALTER TABLE ONLY idem.outbox_subscriptions
    ADD CONSTRAINT outbox_subscriptions_consumer_fkey FOREIGN KEY (consumer) REFERENCES idem.outbox_consumers(consumer) ON DELETE CASCADE;

ALTER TABLE ONLY idem.outbox_subscriptions
    ADD CONSTRAINT outbox_subscriptions_topic_fkey FOREIGN KEY (topic) REFERENCES idem.outbox_topics(topic);

ALTER TABLE idem.consumer_bindings ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.keys ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.machine_states ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.machine_tables ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.machine_transitions ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.mutations ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.operator_actions ENABLE ROW LEVEL SECURITY;

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

ALTER TABLE idem.retired_keys ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.tenant_bindings ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.transition_log ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON TABLE idem.keys TO idem_auditor;
GRANT SELECT ON TABLE idem.keys TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_consumers TO idem_auditor;
GRANT SELECT ON TABLE idem.outbox_consumers TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_cursor_states TO idem_auditor;
GRANT SELECT ON TABLE idem.outbox_cursor_states TO idem_operator;

GRANT SELECT ON TABLE idem.outbox_dead_letters TO idem_auditor;
GRANT SELECT ON TABLE idem.outbox_dead_letters TO idem_operator;

GRANT SELECT ON TABLE idem.mutations TO idem_auditor;
GRANT SELECT ON TABLE idem.mutations TO idem_operator;

GRANT SELECT ON TABLE idem.consumer_bindings TO idem_auditor;
GRANT SELECT ON TABLE idem.consumer_bindings TO idem_operator;

GRANT SELECT ON SEQUENCE idem.fencing_token_seq TO idem_auditor;

GRANT SELECT ON TABLE idem.machine_states TO idem_service;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE idem.machine_states TO idem_operator;
GRANT SELECT ON TABLE idem.machine_states TO idem_auditor;

GRANT SELECT ON TABLE idem.machine_tables TO idem_auditor;
GRANT SELECT ON TABLE idem.machine_tables TO idem_operator;

GRANT SELECT ON TABLE idem.machine_transitions TO idem_service;
GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE idem.machine_transitions TO idem_operator;
GRANT SELECT ON TABLE idem.machine_transitions TO idem_auditor;

GRANT SELECT ON TABLE idem.operator_actions TO idem_auditor;
GRANT SELECT ON TABLE idem.operator_actions TO idem_operator;

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

GRANT SELECT ON TABLE idem.retired_keys TO idem_auditor;
GRANT SELECT ON TABLE idem.retired_keys TO idem_operator;

GRANT SELECT ON TABLE idem.tenant_bindings TO idem_auditor;
GRANT SELECT ON TABLE idem.tenant_bindings TO idem_operator;

GRANT SELECT ON TABLE idem.transition_log TO idem_auditor;
GRANT SELECT ON TABLE idem.transition_log TO idem_operator;


-- Sequences are read through our functions only.
REVOKE ALL ON ALL SEQUENCES IN SCHEMA idem FROM PUBLIC;
