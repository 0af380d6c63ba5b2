-- Which roles act only for which tenants and which outbox consumers.

CREATE TABLE idem.consumer_bindings (
    role_oid oid NOT NULL,
    consumer text NOT NULL COLLATE pg_catalog."C",
    bound_by name NOT NULL,
    bound_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY idem.consumer_bindings FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.consumer_bindings IS 'Roles (role_oid::regrole) bound to outbox consumers: a session whose login role is, or is a member of, a bound role claims, acks, nacks and consume_once''s only for those consumers.';

CREATE TABLE idem.tenant_bindings (
    role_oid oid NOT NULL,
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    bound_by name NOT NULL,
    bound_at timestamp with time zone NOT NULL
);

ALTER TABLE ONLY idem.tenant_bindings FORCE ROW LEVEL SECURITY;

COMMENT ON TABLE idem.tenant_bindings IS 'Roles (role_oid::regrole) bound to tenants: a session whose login role is, or is a member of, a bound role acts and reads only for those tenants.';

ALTER TABLE ONLY idem.consumer_bindings
    ADD CONSTRAINT consumer_bindings_pkey PRIMARY KEY (role_oid, consumer);

ALTER TABLE ONLY idem.tenant_bindings
    ADD CONSTRAINT tenant_bindings_pkey PRIMARY KEY (role_oid, tenant_id);

ALTER TABLE idem.consumer_bindings ENABLE ROW LEVEL SECURITY;

ALTER TABLE idem.tenant_bindings ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON TABLE idem.consumer_bindings TO idem_auditor;

GRANT SELECT ON TABLE idem.consumer_bindings TO idem_operator;

GRANT SELECT ON TABLE idem.tenant_bindings TO idem_auditor;

GRANT SELECT ON TABLE idem.tenant_bindings TO idem_operator;
