-- idem.payload_hash(jsonb) walks the jsonb container straight into canonical bytes
-- (extension/jsonb_canonical.cpp). Differential check against the path it replaced (jsonb walk ->
-- json::Value tree -> fingerprint), kept in the library as idem_payload_hash_jsonb_tree and
-- declared here only: for random documents (nested objects and arrays, strings with escapes,
-- controls and non-ASCII, numbers of many shapes, exclusions, malformed pointers) both must give
-- the same hash or the same refusal (SQLSTATE and message). The text path
-- (idem.payload_hash(doc::text)) must agree on every hash, and refuse the same documents with the
-- same SQLSTATE (its message differs for a number beyond a double: it says "too large").
\set SHOW_CONTEXT never
SET client_min_messages = warning;

CREATE FUNCTION pg_temp.payload_hash_tree(jsonb, text[] DEFAULT '{}') RETURNS bytea
  LANGUAGE c STRICT AS '$libdir/pg_idempotency', 'idem_payload_hash_jsonb_tree';

-- The hash in hex, or the refusal as 'SQLSTATE: message'.
CREATE FUNCTION pg_temp.outcome(kind text, doc jsonb, ex text[]) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN encode(CASE kind
                  WHEN 'one_pass' THEN idem.payload_hash(doc, ex)
                  WHEN 'tree' THEN pg_temp.payload_hash_tree(doc, ex)
                  ELSE idem.payload_hash(doc::text, ex) END, 'hex');
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE FUNCTION pg_temp.pick(a text[]) RETURNS text LANGUAGE sql AS
  $$ SELECT a[1 + floor(random() * array_length(a, 1))::int] $$;

-- Member names: short, from characters whose UTF-8, UTF-16 and jsonb (length first) orders differ.
CREATE FUNCTION pg_temp.rand_key() RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(pg_temp.pick(ARRAY['a', 'b', 'A', '~', '/', '"', E'\\', E'\n', E'\u0001', ' ',
                                                U&'\00e9', U&'\e000', U&'\ffff', U&'\+01f600', U&'\20ac', '0', '1']), ''), '')
    FROM generate_series(1, floor(random() * 4)::int)
$$;

CREATE FUNCTION pg_temp.rand_string() RETURNS text LANGUAGE sql AS $$
  SELECT coalesce(string_agg(pg_temp.pick(ARRAY['x', 'hello', ' ', '"', E'\\', '/', E'\b', E'\f', E'\n', E'\r',
                                                E'\t', E'\u001f', E'\u0007', E'\u007f', U&'\00e9', U&'\2028',
                                                U&'\e000', U&'\+01f600', U&'\+10ffff', '</script>']), ''), '')
    FROM generate_series(1, floor(random() * 6)::int)
$$;

-- Numbers: integers, decimals with trailing zeros (numeric keeps them), exponents, -0, the
-- double's edges, underflow, overflow, and spellings a double cannot hold.
CREATE FUNCTION pg_temp.rand_number() RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  r int := floor(random() * 16);
BEGIN
  RETURN CASE r
    WHEN 0 THEN to_jsonb(floor(random() * 2000000 - 1000000)::bigint)
    WHEN 1 THEN to_jsonb(round((random() * 1000)::numeric, floor(random() * 6)::int))
    WHEN 2 THEN to_jsonb(round((random() * 1000)::numeric, 4)::numeric(12, 8))
    WHEN 3 THEN pg_temp.pick(ARRAY['1e21', '1e20', '1E30', '1e-7', '0.000001', '1e-6', '5e-324', '1e-400',
                                   '-1e-400', '1.7976931348623157e308', '2.2250738585072014e-308',
                                   '1e308', '1.5e308', '1e309', '1e400', '-1e400', '1.8e308'])::jsonb
    WHEN 4 THEN pg_temp.pick(ARRAY['-0', '0', '0.0', '-0.0', '-0.000', '0e10', '100', '1E2', '1e+2'])::jsonb
    WHEN 5 THEN pg_temp.pick(ARRAY['9007199254740992', '9007199254740993', '-9007199254740993',
                                   '18446744073709551616', '123456789012345678901234567890',
                                   '0.1000000000000000000001', '333333333.33333329',
                                   '3.141592653589793238462643383279', '1.00000000000000000000'])::jsonb
    WHEN 6 THEN to_jsonb(((random() - 0.5) * 10 ^ floor(random() * 60 - 30))::numeric)
    WHEN 7 THEN (floor(random() * 9 + 1)::text || 'e' || floor(random() * 700 - 350)::text)::jsonb
    WHEN 8 THEN (floor(random() * 1000000)::text || 'e-' || floor(random() * 120)::text)::jsonb
    WHEN 9 THEN (round((random() * 10 ^ 20)::numeric, 30))::text::jsonb
    WHEN 10 THEN ('-' || floor(random() * 99999)::text || '.' || lpad('', floor(random() * 70)::int, '0')
                  || floor(random() * 9 + 1)::text)::jsonb
    WHEN 11 THEN ('1' || lpad('', floor(random() * 400)::int, '0'))::jsonb
    ELSE to_jsonb(round((random() * 100)::numeric, 2))
  END;
END $$;

CREATE FUNCTION pg_temp.rand_doc(depth int) RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  r float8 := random();
  n int;
  o jsonb;
BEGIN
  IF depth <= 0 OR r < 0.45 THEN
    r := random();
    RETURN CASE WHEN r < 0.4 THEN pg_temp.rand_number()
                WHEN r < 0.8 THEN to_jsonb(pg_temp.rand_string())
                WHEN r < 0.87 THEN 'true'::jsonb WHEN r < 0.94 THEN 'false'::jsonb ELSE 'null'::jsonb END;
  END IF;
  n := floor(random() * 6);
  IF r < 0.7 THEN
    o := '[]';
    FOR i IN 1..n LOOP o := o || jsonb_build_array(pg_temp.rand_doc(depth - 1)); END LOOP;
  ELSE
    o := '{}';
    FOR i IN 1..n LOOP o := o || jsonb_build_object(pg_temp.rand_key(), pg_temp.rand_doc(depth - 1)); END LOOP;
  END IF;
  RETURN o;
END $$;

-- Exclusions: names and indexes the documents use, escapes, and malformed pointers.
CREATE FUNCTION pg_temp.rand_exclude() RETURNS text[] LANGUAGE sql AS $$
  SELECT coalesce(array_agg(pg_temp.pick(ARRAY['/a', '/b', '/0', '/1', '/2', '/a/0', '/0/a', '/1/b', '/0/0',
                                               '/~0', '/~1', '/', '/' || U&'\00e9', '/a/b', '/00', '/-',
                                               '/0/1/a', '/b/~1', '/a~2', 'a', ''])), '{}')
    FROM generate_series(1, CASE WHEN random() < 0.3 THEN 0 ELSE floor(random() * 3 + 1)::int END)
$$;

SELECT setseed(0.4242);
CREATE TEMP TABLE docs AS
SELECT i, pg_temp.rand_doc(floor(random() * 5)::int) AS doc, pg_temp.rand_exclude() AS ex
  FROM generate_series(1, 3000) i;
-- Hand-picked: top-level scalars, empties, nesting at and beyond the 128-level limit (arrays,
-- objects, empty innermost containers), a number beyond a double inside an excluded member.
INSERT INTO docs (i, doc, ex)
SELECT 10000 + row_number() OVER (), d::jsonb, e FROM (VALUES
  ('1', '{}'::text[]), ('-0', '{}'), ('"x\u0001"', '{}'), ('null', '{}'), ('1e400', '{}'), ('1e-400', '{}'),
  ('0.1000000000000000000001', '{}'), ('[]', '{}'), ('{}', '{}'), ('{}', '{/a}'), ('1', '{a}'),
  (repeat('[', 127) || '1' || repeat(']', 127), '{}'), (repeat('[', 128) || repeat(']', 128), '{}'),
  (repeat('[', 129) || repeat(']', 129), '{}'), (repeat('{"a":', 128) || '{}' || repeat('}', 128), '{}'),
  (repeat('{"a":', 128) || '[]' || repeat('}', 128), '{/a}'), (repeat('{"a":', 129) || '1' || repeat('}', 129), '{/a}'),
  ('{"a":1e400,"b":0.1000000000000000000001}', '{/a}'), ('{"a":[1e400],"b":1}', '{/a}'),
  ('{"a":1e400,"b":0.1000000000000000000001}', '{}'), ('{"b":1e400,"aa":1e401}', '{}'),
  ('[0.1000000000000000000001, 1e400]', '{/0}'), ('{"a":0.1000000000000000000001}', '{/a~2}')) v(d, e);

CREATE TEMP TABLE outcomes AS
SELECT i, doc, ex, pg_temp.outcome('one_pass', doc, ex) AS one_pass, pg_temp.outcome('tree', doc, ex) AS tree,
       pg_temp.outcome('text', doc, ex) AS text_path
  FROM docs;

-- Enough of each kind to mean something (hashed, refused for an inexact number, for a malformed
-- pointer, for depth).
SELECT count(*) AS docs,
       count(*) FILTER (WHERE one_pass !~ ':') > 1500 AS many_hashed,
       count(*) FILTER (WHERE one_pass LIKE '%cannot be represented exactly%') > 100 AS many_inexact,
       count(*) FILTER (WHERE one_pass LIKE '%pointer%') > 50 AS many_bad_pointers,
       count(*) FILTER (WHERE one_pass LIKE '%nesting deeper%') AS too_deep
  FROM outcomes;
-- The differential: no row where the one-pass walk and the tree disagree.
SELECT i, doc::text, ex, one_pass, tree FROM outcomes WHERE one_pass IS DISTINCT FROM tree ORDER BY i;
-- The text path: the same hashes, the same SQLSTATE on refusals, except where the text parser
-- refuses a number beyond a double first (before a malformed pointer, or inside an excluded
-- member; jsonb has no parse step, and both jsonb paths find such a number inexact instead).
SELECT count(*) > 10 AS text_refuses_too_large_first FROM outcomes WHERE text_path LIKE '%too large for an IEEE double';
SELECT i, doc::text, ex, one_pass, text_path FROM outcomes
 WHERE text_path NOT LIKE '%too large for an IEEE double' AND CASE WHEN one_pass ~ ':' THEN split_part(one_pass, ':', 1) IS DISTINCT FROM split_part(text_path, ':', 1)
            ELSE one_pass IS DISTINCT FROM text_path END
 ORDER BY i;
-- The hand-picked ones, as they are answered.
SELECT i, left(doc::text, 40) AS doc, ex, one_pass FROM outcomes WHERE i > 10000 ORDER BY i;
