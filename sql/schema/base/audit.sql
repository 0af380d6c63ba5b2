-- The audit trail: one append-only row per attempt's outcome.

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

ALTER TABLE idem.mutations ALTER COLUMN mutation_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME idem.mutations_mutation_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

ALTER TABLE ONLY idem.mutations
    ADD CONSTRAINT mutations_pkey PRIMARY KEY (tenant_id, mutation_id);

CREATE INDEX mutations_key_idx ON idem.mutations USING btree (tenant_id, client_key, attempted_at);

CREATE INDEX mutations_order_idx ON idem.mutations USING btree (order_id) WHERE (order_id IS NOT NULL);

CREATE INDEX mutations_time_idx ON idem.mutations USING btree (attempted_at);

ALTER TABLE idem.mutations ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON TABLE idem.mutations TO idem_auditor;

GRANT SELECT ON TABLE idem.mutations TO idem_operator;
