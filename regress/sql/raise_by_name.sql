-- PL/pgSQL raises our errors by name through idem._raise, which reads the SQLSTATE from the one
-- error table in core/error.cpp (no SQL file types a code). Every name maps to its code here; an
-- unknown name is a bug (ERR_INTERNAL). scripts/check-released.sh keeps hand-typed IK codes out
-- of new SQL.
\set SHOW_CONTEXT never
SELECT n AS name, expect_error(format('SELECT idem._raise(%L, %L)', n, 'what happened')) AS raised
  FROM unnest(ARRAY['ERR_IDEMPOTENCY_KEY_MISSING', 'ERR_IDEMPOTENCY_KEY_INVALID', 'ERR_IDEMPOTENCY_IN_PROGRESS',
                    'ERR_IDEMPOTENCY_PAYLOAD_MISMATCH', 'ERR_LEASE_LOST', 'ERR_INVALID_TRANSITION',
                    'ERR_NON_ATOMIC_IDEMPOTENCY_STORE', 'ERR_BREAKING_IDEMPOTENCY_DRIFT',
                    'ERR_PAYLOAD_NUMBER_PRECISION', 'ERR_PAYLOAD_JSON_INVALID', 'ERR_JSON_POINTER_INVALID',
                    'ERR_ARGUMENT_INVALID', 'ERR_PAYLOAD_TOO_LARGE', 'ERR_DATABASE_ENCODING_UNSUPPORTED',
                    'ERR_SCHEMA_UNTRUSTED', 'ERR_MACHINE_UNKNOWN', 'ERR_STATE_UNKNOWN',
                    'ERR_AUDIT_APPEND_ONLY', 'ERR_OUTBOX_TOPIC_UNKNOWN', 'ERR_OUTBOX_CONSUMER_UNKNOWN',
                    'ERR_OUTBOX_EVENT_UNKNOWN', 'ERR_OUTBOX_NOT_CLAIMED', 'ERR_OUTBOX_CLAIM_TOKEN_MISMATCH',
                    'ERR_CITUS_MISSING', 'ERR_TENANT_NOT_LOCAL', 'ERR_INTERNAL', 'ERR_OUT_OF_MEMORY']) AS n;
SELECT expect_error($$SELECT idem._raise('ERR_NO_SUCH_THING', 'x')$$) AS unknown_name;
SELECT expect_error($$SELECT idem._raise(NULL, 'x')$$) AS null_name;
SELECT error_hint($$SELECT idem._raise('ERR_LEASE_LOST', 'x', 'do this')$$) AS hint;
SELECT has_function_privilege('public', 'idem._raise(text, text, text)', 'EXECUTE') AS public_may_raise;
