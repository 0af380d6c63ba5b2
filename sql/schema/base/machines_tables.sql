-- State machines as data, the tables registered to be guarded by them, and the transition log.

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

ALTER TABLE ONLY idem.machine_states
    ADD CONSTRAINT machine_states_pkey PRIMARY KEY (machine, state);

ALTER TABLE ONLY idem.machine_tables
    ADD CONSTRAINT machine_tables_pkey PRIMARY KEY (table_schema, table_name, status_column);

ALTER TABLE ONLY idem.machine_transitions
    ADD CONSTRAINT machine_transitions_pkey PRIMARY KEY (machine, from_state, to_state);

ALTER TABLE ONLY idem.transition_log
    ADD CONSTRAINT transition_log_pkey PRIMARY KEY (log_id);

CREATE INDEX transition_log_key_idx ON idem.transition_log USING btree (row_key, at);

CREATE INDEX transition_log_row_idx ON idem.transition_log USING btree (relid, row_key, at);

ALTER TABLE ONLY idem.machine_transitions
    ADD CONSTRAINT machine_transitions_machine_from_state_fkey FOREIGN KEY (machine, from_state) REFERENCES idem.machine_states(machine, state);

ALTER TABLE ONLY idem.machine_transitions
    ADD CONSTRAINT machine_transitions_machine_to_state_fkey FOREIGN KEY (machine, to_state) REFERENCES idem.machine_states(machine, state);

ALTER TABLE idem.machine_states ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.machine_tables ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.machine_transitions ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.transition_log ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON TABLE idem.machine_states TO idem_service;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE idem.machine_states TO idem_operator;

GRANT SELECT ON TABLE idem.machine_states TO idem_auditor;

GRANT SELECT ON TABLE idem.machine_tables TO idem_auditor;

GRANT SELECT ON TABLE idem.machine_tables TO idem_operator;

GRANT SELECT ON TABLE idem.machine_transitions TO idem_service;

GRANT SELECT,INSERT,DELETE,UPDATE ON TABLE idem.machine_transitions TO idem_operator;

GRANT SELECT ON TABLE idem.machine_transitions TO idem_auditor;

GRANT SELECT ON TABLE idem.transition_log TO idem_auditor;

GRANT SELECT ON TABLE idem.transition_log TO idem_operator;
