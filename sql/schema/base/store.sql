-- The key store: the records, the generations a purge retired, the operator's actions, the
-- fencing token, and the row type acquire answers with.

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

CREATE SEQUENCE idem.fencing_token_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

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

ALTER TABLE ONLY idem.keys
    ADD CONSTRAINT keys_pkey PRIMARY KEY (tenant_id, scope_digest);

ALTER TABLE ONLY idem.operator_actions
    ADD CONSTRAINT operator_actions_pkey PRIMARY KEY (tenant_id, action_id);

ALTER TABLE ONLY idem.retired_keys
    ADD CONSTRAINT retired_keys_pkey PRIMARY KEY (tenant_id, scope_digest);

CREATE INDEX keys_purge_after_idx ON idem.keys USING btree (purge_after) WHERE (purge_after IS NOT NULL);

CREATE UNIQUE INDEX keys_tenant_key_owner_idx ON idem.keys USING btree (tenant_id, client_key COLLATE "C") WHERE (key_scope = 'tenant'::text);

CREATE INDEX retired_keys_retired_at_idx ON idem.retired_keys USING btree (retired_at);

ALTER TABLE idem.keys ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.operator_actions ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.retired_keys ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON TABLE idem.keys TO idem_auditor;

GRANT SELECT ON TABLE idem.keys TO idem_operator;

GRANT SELECT ON SEQUENCE idem.fencing_token_seq TO idem_auditor;

GRANT SELECT ON TABLE idem.operator_actions TO idem_auditor;

GRANT SELECT ON TABLE idem.operator_actions TO idem_operator;

GRANT SELECT ON TABLE idem.retired_keys TO idem_auditor;

GRANT SELECT ON TABLE idem.retired_keys TO idem_operator;
