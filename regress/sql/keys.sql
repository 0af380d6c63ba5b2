-- Idempotency keys: idem.validate_key (printable ASCII, idem.key_min_length..idem.key_max_length)
-- and idem.scope_digest (SHA-256 of the domain tag and the length-prefixed tenant, caller,
-- resource and key: injective, 32 bytes).
\set SHOW_CONTEXT never

--
-- validate_key: accepted keys return void (expect_error says 'no error'). By default keys are
-- 16 to 255 characters (255: Stripe's limit; 0.3.4 refused keys over 128).
--
SELECT label, expect_error(format('SELECT idem.validate_key(%L)', k)) AS result
  FROM (VALUES ('16 chars', repeat('k', 16)),
               ('255 chars', repeat('k', 255)),
               ('uuid', '9b2f6a4e-1c8d-4e0b-a7f3-5d6c2e1b0a99'),
               ('all punctuation', ' !"#$%&''()*+,-./0123456789:;<=>?@[\]^_`{|}~'),
               ('spaces are printable', '        spaces  ')) AS t(label, k);

--
-- ERR_IDEMPOTENCY_KEY_MISSING (IK001): absent or empty
--
SELECT expect_error($$SELECT idem.validate_key(NULL)$$);
SELECT expect_error($$SELECT idem.validate_key('')$$);
SELECT error_hint($$SELECT idem.validate_key('')$$);

--
-- ERR_IDEMPOTENCY_KEY_INVALID (IK002): length and bytes
--
SELECT label, expect_error(format('SELECT idem.validate_key(%L)', k)) AS error
  FROM (VALUES ('15 chars', repeat('k', 15)),
               ('256 chars', repeat('k', 256)),
               ('1 char', 'k'),
               ('non-ASCII', repeat('k', 15) || 'é'),
               ('non-ASCII first', 'é' || repeat('k', 15)),
               ('tab', repeat('k', 10) || E'\t' || repeat('k', 10)),
               ('newline', repeat('k', 10) || E'\n' || repeat('k', 10)),
               ('DEL', repeat('k', 10) || E'\x7f' || repeat('k', 10))) AS t(label, k);
-- Bytes are checked before length, so the length is only measured for an all-ASCII key, where
-- bytes and characters agree: a non-ASCII key always reports its first non-ASCII byte, whatever
-- its length. 8 x 'é' is 8 characters (16 bytes); 200 x 'é' is 200 characters (within 16..255) but
-- 400 bytes: it must not be reported as "400 characters long".
SELECT expect_error(format('SELECT idem.validate_key(%L)', repeat('é', 8)));
SELECT length(k) AS chars, octet_length(k) AS bytes, expect_error(format('SELECT idem.validate_key(%L)', k)) AS error
  FROM (VALUES (repeat('é', 200))) AS v(k);
SELECT expect_error(format('SELECT idem.validate_key(%L)', repeat('k', 256) || 'é'));
SELECT error_hint(format('SELECT idem.validate_key(%L)', repeat('k', 15)));

--
-- idem.key_min_length / idem.key_max_length (superuser settings)
--
SET idem.key_min_length = 4;
SET idem.key_max_length = 8;
SELECT expect_error($$SELECT idem.validate_key('abcd')$$) AS len_4,
       expect_error($$SELECT idem.validate_key('abcdefgh')$$) AS len_8;
SELECT expect_error($$SELECT idem.validate_key('abc')$$);
SELECT expect_error($$SELECT idem.validate_key('abcdefghi')$$);
-- scope_digest validates with the same limits.
SELECT octet_length(idem.scope_digest('t', '', '', 'abcd')) AS short_key_digest;
SELECT expect_error($$SELECT idem.scope_digest('t', '', '', repeat('k', 16))$$);
RESET idem.key_min_length;
RESET idem.key_max_length;
SELECT expect_error($$SELECT idem.validate_key('abcd')$$);
SELECT expect_error($$SELECT idem.validate_key(repeat('k', 16))$$) AS defaults_back;
-- The bounds of the settings themselves.
SELECT expect_error($$SET idem.key_min_length = 0$$);
SELECT expect_error($$SET idem.key_max_length = 1025$$);
-- min > max is accepted by SET (settings load in any order) but no key can then be valid: every
-- key check reports the server misconfiguration as ERR_ARGUMENT_INVALID (IK012), not the key.
SET idem.key_min_length = 64;
SET idem.key_max_length = 32;
SELECT expect_error(format('SELECT idem.validate_key(%L)', repeat('k', 48)));
SELECT expect_error(format('SELECT idem.validate_key(%L)', repeat('k', 16)));
SELECT expect_error(format('SELECT idem.scope_digest(%L, %L, %L, %L)', 't', '', '', repeat('k', 48)));
SELECT expect_error(format('SELECT idem.acquire(%L, %L, %L::jsonb)', 't-keys', repeat('k', 48), '{}'));
SELECT error_hint(format('SELECT idem.validate_key(%L)', repeat('k', 48)));
RESET idem.key_min_length;
RESET idem.key_max_length;
SELECT expect_error(format('SELECT idem.validate_key(%L)', repeat('k', 48))) AS fixed;
SELECT count(*) AS nothing_recorded FROM idem.keys WHERE tenant_id = 't-keys';

--
-- scope_digest: 32 bytes, injective, exact
--
SELECT octet_length(idem.scope_digest('tenant-a', 'caller', 'POST /payments', repeat('k', 16))) AS len;
-- Moving a separator between parts changes the digest: parts are length-prefixed, not joined.
SELECT idem.scope_digest('a#b', 'c', '', repeat('k', 16)) <> idem.scope_digest('a', 'b#c', '', repeat('k', 16)) AS tenant_caller_split,
       idem.scope_digest('t', 'ab', 'c', repeat('k', 16)) <> idem.scope_digest('t', 'a', 'bc', repeat('k', 16)) AS caller_resource_split,
       idem.scope_digest('t', '', 'x', repeat('k', 16)) <> idem.scope_digest('t', 'x', '', repeat('k', 16)) AS empty_parts_positional,
       idem.scope_digest('tenant-a', '', '', repeat('k', 16)) <> idem.scope_digest('tenant-b', '', '', repeat('k', 16)) AS tenants_differ,
       idem.scope_digest('t', 'c1', '', repeat('k', 16)) <> idem.scope_digest('t', 'c2', '', repeat('k', 16)) AS callers_differ,
       idem.scope_digest('t', '', 'r1', repeat('k', 16)) <> idem.scope_digest('t', '', 'r2', repeat('k', 16)) AS resources_differ,
       idem.scope_digest('t', '', '', repeat('k', 16)) <> idem.scope_digest('t', '', '', repeat('k', 15) || 'K') AS keys_differ;
-- Deterministic.
SELECT idem.scope_digest('t', 'c', 'r', repeat('k', 16)) = idem.scope_digest('t', 'c', 'r', repeat('k', 16)) AS stable;

-- The encoding, computed independently: SHA-256 over the domain tag, a zero byte, then each part
-- as a 4-byte big-endian byte length followed by its UTF-8 bytes.
CREATE FUNCTION scope_digest_reference(tenant text, caller text, resource text, key text) RETURNS bytea
LANGUAGE sql IMMUTABLE RETURN sha256(
  convert_to('pg_idempotency/scope/v1', 'UTF8') || '\x00'::bytea
  || int4send(octet_length(convert_to(tenant, 'UTF8'))) || convert_to(tenant, 'UTF8')
  || int4send(octet_length(convert_to(caller, 'UTF8'))) || convert_to(caller, 'UTF8')
  || int4send(octet_length(convert_to(resource, 'UTF8'))) || convert_to(resource, 'UTF8')
  || int4send(octet_length(convert_to(key, 'UTF8'))) || convert_to(key, 'UTF8'));

-- Golden vector (a non-ASCII tenant, so byte lengths and character lengths differ).
SELECT encode(idem.scope_digest('tenant-é', 'svc-checkout', 'POST /v1/payments', '0123456789abcdef'), 'hex') AS golden;
SELECT encode(scope_digest_reference('tenant-é', 'svc-checkout', 'POST /v1/payments', '0123456789abcdef'), 'hex') AS independent;
SELECT t, c, r, idem.scope_digest(t, c, r, k) = scope_digest_reference(t, c, r, k) AS matches
  FROM (VALUES ('a#b', 'c', '', repeat('k', 16)),
               ('a', 'b#c', '', repeat('k', 16)),
               ('x', '', '', repeat('k', 255)),
               ('😀', 'é€', repeat('r', 300), repeat('k', 20))) AS v(t, c, r, k);
DROP FUNCTION scope_digest_reference;

--
-- scope_digest: invalid arguments
--
SELECT expect_error($$SELECT idem.scope_digest(NULL, '', '', repeat('k', 16))$$);
SELECT expect_error($$SELECT idem.scope_digest('', '', '', repeat('k', 16))$$);
SELECT expect_error($$SELECT idem.scope_digest('t', NULL, '', repeat('k', 16))$$);
SELECT expect_error($$SELECT idem.scope_digest('t', '', NULL, repeat('k', 16))$$);
SELECT expect_error($$SELECT idem.scope_digest('t', '', '', NULL)$$);
SELECT expect_error($$SELECT idem.scope_digest('t', '', '', '')$$);
SELECT expect_error($$SELECT idem.scope_digest('t', '', '', 'short')$$);
SELECT expect_error(format('SELECT idem.scope_digest(%L, %L, %L, %L)', 't', '', '', repeat('k', 15) || E'\n'));

--
-- idem._lock_key: the advisory-lock key of a scoped key is the first 8 bytes of its digest,
-- big-endian, as a signed bigint (internal; not executable by PUBLIC)
--
SELECT encode(d, 'hex') AS digest, idem._lock_key(d) = ('x' || left(encode(d, 'hex'), 16))::bit(64)::bigint AS first_8_bytes
  FROM (VALUES (sha256('a'::bytea)), (sha256('b'::bytea)), ('\x8000000000000001'::bytea || sha256('c'::bytea)::bytea)) AS v(d0),
       LATERAL (SELECT substr(d0, 1, 32) AS d) AS s;
SELECT idem._lock_key('\xffffffffffffffff000000000000000000000000000000000000000000000000'::bytea) AS all_ones,
       idem._lock_key('\x0000000000000001ffffffffffffffffffffffffffffffffffffffffffffffff'::bytea) AS one;
SELECT expect_error($$SELECT idem._lock_key('\x0102'::bytea)$$);
SELECT idem._lock_key(NULL) IS NULL AS strict;
