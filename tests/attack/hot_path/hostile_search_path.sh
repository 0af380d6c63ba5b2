#!/usr/bin/env bash
# A hostile search_path on the first call of fresh backends (kept plans are prepared then): a
# schema earlier in the path plants an "=" for text/bytea that is always true, nextval, sha256,
# jsonb_typeof, octet_length and a temp table named keys. Expected: nothing changes (held).
DB=attack_hp_sp; . "$(dirname "$0")/lib.sh"
setup_db
q "CREATE SCHEMA evil;
   CREATE FUNCTION evil.yes(text, text) RETURNS boolean LANGUAGE sql AS 'SELECT true';
   CREATE FUNCTION evil.yesb(bytea, bytea) RETURNS boolean LANGUAGE sql AS 'SELECT true';
   CREATE OPERATOR evil.= (LEFTARG = text, RIGHTARG = text, FUNCTION = evil.yes);
   CREATE OPERATOR evil.= (LEFTARG = bytea, RIGHTARG = bytea, FUNCTION = evil.yesb);
   CREATE FUNCTION evil.nextval(regclass) RETURNS bigint LANGUAGE sql AS 'SELECT 1::bigint';
   CREATE FUNCTION evil.sha256(bytea) RETURNS bytea LANGUAGE sql AS 'SELECT ''\\x00''::bytea';
   CREATE FUNCTION evil.octet_length(bytea) RETURNS integer LANGUAGE sql AS 'SELECT 32';
   CREATE FUNCTION evil.jsonb_typeof(jsonb) RETURNS text LANGUAGE sql AS 'SELECT ''object''::text';
   GRANT USAGE ON SCHEMA evil TO PUBLIC;"
q "SELECT idem.complete(handle, attempt, 200, NULL, 'first') FROM idem.acquire('acme', 'sp-00000000000001', '{\"a\":1}'::jsonb)" >/dev/null
start A; start B
run A "SET search_path = evil, pg_temp, public; CREATE TEMP TABLE keys (x int); CREATE TEMP TABLE mutations (x int);"
run A "SELECT outcome FROM idem.acquire('acme', 'sp-00000000000002', '{\"a\":1}'::jsonb);"
run A "SELECT outcome, convert_from(response_body, 'UTF8') FROM idem.acquire('acme', 'sp-00000000000001', '{\"a\":2}'::jsonb);"
run A "SELECT outcome, convert_from(response_body, 'UTF8') FROM idem.acquire('acme', 'sp-00000000000001', '{\"a\":1}'::jsonb);"
run A "SELECT handle || ' ' || attempt FROM idem.acquire('acme', 'sp-00000000000003', '{\"a\":1}'::jsonb);"; grab HA; set -- $HA
run B "SET search_path = evil, public; SELECT idem.complete(regexp_replace('$1', '[0-9a-f]{32}\$', repeat('0', 32)), $2, 200, '[1]', 'forged');"
run B "SELECT idem.complete(regexp_replace('$1', '[0-9a-f]{32}\$', repeat('0', 32)), $2, 200, NULL, 'forged');"
run B "SELECT idem.complete('$1', $2, 200, NULL, 'real');"
run A "SELECT client_key, status, attempt, convert_from(response_body, 'UTF8') FROM idem.keys ORDER BY 1;"
run A "SELECT client_key, outcome FROM idem.mutations ORDER BY mutation_id;"
finish
