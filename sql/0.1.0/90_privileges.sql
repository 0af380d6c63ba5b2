-- Privileges: services execute functions and never write tables; auditors read.
-- Roles are cluster-wide, so another database's CREATE EXTENSION may have made them already.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'idem_service') THEN
    CREATE ROLE idem_service NOLOGIN;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'idem_auditor') THEN
    CREATE ROLE idem_auditor NOLOGIN;
  END IF;
END $$;

REVOKE ALL ON ALL TABLES IN SCHEMA idem FROM PUBLIC;
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA idem FROM PUBLIC;
GRANT USAGE ON SCHEMA idem TO idem_service, idem_auditor;

-- Pure functions stay usable by anyone with schema usage: they read and write nothing.
GRANT EXECUTE ON FUNCTION idem.canonical_json(text), idem.canonical_json(jsonb),
  idem.payload_hash(jsonb, text[]), idem.payload_hash(text, text[]), idem.fingerprint_scheme(),
  idem.fingerprint(jsonb, text[]), idem.fingerprint(text, text[]),
  idem.validate_key(text), idem.scope_digest(text, text, text, text)
  TO idem_service, idem_auditor;

GRANT EXECUTE ON FUNCTION
  idem.acquire(text, text, jsonb, text, text, interval, interval, text),
  idem.acquire(text, text, text, text, text, interval, interval, text),
  idem.acquire(text, text, bytea, text, text, interval, interval, text),
  idem.checkpoint(text, bigint, text, jsonb),
  idem.complete(text, bigint, integer, jsonb, bytea, text, jsonb),
  idem.release(text, bigint, text),
  idem.purge_expired(integer)
  TO idem_service;

GRANT SELECT ON ALL TABLES IN SCHEMA idem TO idem_auditor;
GRANT SELECT ON SEQUENCE idem.fencing_token_seq TO idem_auditor;
