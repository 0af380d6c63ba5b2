-- Fingerprints: idem.canonical_json (RFC 8785 / JCS), idem.payload_hash (SHA-256 of the canonical
-- form minus excluded RFC 6901 pointers), idem.fingerprint_scheme(), and every error they raise.
-- Golden values are computed independently with PostgreSQL's own sha256().
\set SHOW_CONTEXT never

SELECT idem.fingerprint_scheme();

--
-- canonical_json(text): key order
--
-- Keys sort by UTF-16 code units, not bytes or code points.
SELECT idem.canonical_json('{"b":1,"a":2,"A":3,"aa":4,"":5,"a ":6}');
-- U+20AC, U+1F600 (UTF-16: D83D DE00), U+FB33: code point order would put the emoji last;
-- UTF-16 order puts it before U+FB33 because its lead surrogate D83D < FB33.
SELECT idem.canonical_json('{"\ufb33":3,"\ud83d\ude00":2,"\u20ac":1,"z":0,"\u00e9":0.5}');
-- The sorting example of RFC 8785 section 3.2.3 (U+0080 is shown as <U+0080> to keep this file
-- printable). Expected order: \r, 1, U+0080, U+00F6, U+20AC, U+1F600, U+FB33.
SELECT replace(idem.canonical_json(
  '{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh",'
  '"1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control",'
  '"\u00f6":"Latin Small Letter O With Diaeresis"}'), U&'\0080', '<U+0080>') AS rfc8785_sorting;
-- jsonb sorts its keys by length first; the canonical form does not care how they were stored.
SELECT idem.canonical_json('{"\ufb33":3,"\ud83d\ude00":2,"\u20ac":1,"z":0,"\u00e9":0.5}'::jsonb);
SELECT idem.canonical_json('{"bb":1,"a":2,"ccc":3}'::jsonb);

--
-- canonical_json: numbers (ECMAScript Number::toString of the nearest double)
--
SELECT idem.canonical_json('[1.50, 4.50, 1E30, 1e21, 1e20, 1e-7, 0.000001, -0, 0.0, -0.0, 1E2, 1e+2, 100]');
SELECT idem.canonical_json('[333333333.33333329, -1.5e-10, 0.1, 123456789012345678901234567890, 5e-324, 1e-400]');
SELECT idem.canonical_json('[2, 9007199254740992, 9007199254740993, -9007199254740993, 18446744073709551616]');
-- The same through jsonb (numeric keeps every digit; the canonical form is identical).
SELECT idem.canonical_json('[1.50, 4.50, 1E30, 1e21, 1e20, 1e-7, 0.000001, -0, 0.0, -0.0, 1E2, 1e+2, 100]'::jsonb);
SELECT idem.canonical_json('[333333333.33333329, -1.5e-10, 0.1, 123456789012345678901234567890]'::jsonb);
SELECT idem.canonical_json('333333333.33333329'::text) AS text_form,
       idem.canonical_json('333333333.33333329'::jsonb) AS jsonb_form;

--
-- canonical_json: strings and escapes (only '"', '\' and U+0000..U+001F are escaped, with the
-- short forms \b \f \n \r \t; '/' and non-ASCII are written as themselves)
--
SELECT idem.canonical_json('"\u0000\u001f\u000b\b\f\n\r\t\"\\\/\u00E9\u20ac\ud83d\ude00 plain"');
SELECT idem.canonical_json('{"\u0061\n":"\u0041"}');
-- jsonb cannot hold U+0000 at all: PostgreSQL refuses it before the extension sees it.
SELECT expect_error($$SELECT idem.canonical_json('"\u0000"'::jsonb)$$);
SELECT idem.canonical_json(E'"a\\tb\\u00e9"'::jsonb);

--
-- canonical_json: nesting, whitespace, top-level scalars
--
SELECT idem.canonical_json('{"b":[{"d":1,"c":2},[],{}],"a":{"z":{},"y":null,"x":[true,false]}}');
SELECT idem.canonical_json(E' \t\n\r{ "a" : [ 1 , 2 ] , "b" : { } }\n ');
SELECT idem.canonical_json('{"b":[{"d":1,"c":2},[],{}],"a":{"z":{},"y":null,"x":[true,false]}}'::jsonb);
SELECT v AS input, idem.canonical_json(v) AS text_form, idem.canonical_json(v::jsonb) AS jsonb_form
  FROM unnest(ARRAY['null', 'true', 'false', '"x"', '42', '-1.50', ' "y" ', '[]', '{}']) AS v;
-- STRICT: NULL in, NULL out.
SELECT idem.canonical_json(NULL::text) IS NULL AS text_null, idem.canonical_json(NULL::jsonb) IS NULL AS jsonb_null;

--
-- payload_hash: 32 bytes, the SHA-256 of the canonical form
--
SELECT octet_length(idem.payload_hash('{"a":1}'::jsonb)) AS jsonb_len,
       octet_length(idem.payload_hash('{"a":1}'::text)) AS text_len;
-- Golden vector: the hash of {"a":1,"b":2}, whatever the spelling of the input.
SELECT encode(idem.payload_hash('{"b":2,"a":1}'::jsonb), 'hex') AS golden;
SELECT encode(sha256(convert_to('{"a":1,"b":2}', 'UTF8')), 'hex') AS independent;
SELECT idem.payload_hash(' { "b" : 2.0 , "a" : 1E0 } '::text) = idem.payload_hash('{"b":2,"a":1}'::jsonb) AS same_doc;
-- payload_hash = sha256(canonical_json) for a document exercising sorting, numbers and escapes.
WITH d(doc) AS (VALUES ('{"\ufb33":[1.50,1E30,-0],"\ud83d\ude00":"\n\u00e9","amount":{"value":"12.00","currency":"EUR"},"items":[{"sku":"A","qty":2}]}'))
SELECT idem.payload_hash(doc) = sha256(convert_to(idem.canonical_json(doc), 'UTF8')) AS text_matches,
       idem.payload_hash(doc::jsonb) = sha256(convert_to(idem.canonical_json(doc::jsonb), 'UTF8')) AS jsonb_matches,
       idem.payload_hash(doc) = idem.payload_hash(doc::jsonb) AS text_equals_jsonb,
       encode(idem.payload_hash(doc), 'hex') AS hash
  FROM d;
-- Scalars hash too; different documents hash differently.
SELECT encode(idem.payload_hash('null'::jsonb), 'hex') = encode(sha256('null'::bytea), 'hex') AS null_doc,
       idem.payload_hash('{"a":1}'::jsonb) <> idem.payload_hash('{"a":"1"}'::jsonb) AS number_vs_string,
       idem.payload_hash('[1,2]'::jsonb) <> idem.payload_hash('[2,1]'::jsonb) AS array_order_counts;
-- The default exclude list is empty.
SELECT idem.payload_hash('{"a":1}'::jsonb) = idem.payload_hash('{"a":1}'::jsonb, '{}') AS default_exclude;

--
-- payload_hash: excluded pointers
--
WITH d(full_doc, reduced) AS (VALUES (
  '{"amount":100,"metadata":{"trace_id":"t-1","source":"web"}}',
  '{"amount":100,"metadata":{"source":"web"}}'))
SELECT idem.payload_hash(full_doc::jsonb, '{/metadata/trace_id}') = idem.payload_hash(reduced::jsonb) AS jsonb_excluded,
       idem.payload_hash(full_doc, '{/metadata/trace_id}') = idem.payload_hash(reduced) AS text_excluded,
       idem.payload_hash(full_doc::jsonb, '{/metadata/trace_id}')
         = sha256(convert_to('{"amount":100,"metadata":{"source":"web"}}', 'UTF8')) AS golden,
       idem.payload_hash(full_doc::jsonb) <> idem.payload_hash(reduced::jsonb) AS differs_without
  FROM d;
-- Two requests that differ only in the excluded member share a fingerprint.
SELECT idem.payload_hash('{"amount":100,"metadata":{"trace_id":"t-1"}}'::jsonb, '{/metadata/trace_id}')
     = idem.payload_hash('{"amount":100,"metadata":{"trace_id":"t-2"}}'::jsonb, '{/metadata/trace_id}') AS trace_ignored;
-- ~1 is '/', ~0 is '~' (and "~01" is "~1", not "/"); "/" alone names the member "".
SELECT idem.payload_hash('{"a/b":1,"m~n":2,"~1":3,"":4,"k":5}', '{/a~1b,/m~0n,/~01,/}')
     = idem.payload_hash('{"k":5}') AS escapes;
-- Array elements by index, all resolved against the original document.
SELECT idem.payload_hash('{"items":["a","b","c"]}', '{/items/1}') = idem.payload_hash('{"items":["a","c"]}') AS one_index,
       idem.payload_hash('{"items":["a","b","c"]}', '{/items/0,/items/1}') = idem.payload_hash('{"items":["c"]}') AS two_indexes,
       idem.payload_hash('{"items":["a","b","c"]}', '{/items/1,/items/0}') = idem.payload_hash('{"items":["c"]}') AS order_free,
       idem.payload_hash('{"items":[{"id":1,"t":"x"},{"id":2,"t":"y"}]}', '{/items/0/t,/items/1/t}')
         = idem.payload_hash('{"items":[{"id":1},{"id":2}]}') AS inside_elements;
-- A member and something inside it, or the same pointer twice: removed once, no harm.
SELECT idem.payload_hash('{"a":{"b":1},"c":2}', '{/a/b,/a,/a}') = idem.payload_hash('{"c":2}') AS nested_and_repeated;
-- Pointers that name nothing are ignored: missing member, past the end, "-", leading zero,
-- a step into a scalar, a member name used on an array.
SELECT idem.payload_hash('{"a":{"b":1},"items":[1,2],"n":3}',
                         '{/missing,/a/missing/deeper,/items/2,/items/-,/items/01,/n/x,/items/x}')
     = idem.payload_hash('{"a":{"b":1},"items":[1,2],"n":3}') AS missing_ignored;
-- Excluding the whole top-level member of a scalar document names nothing either.
SELECT idem.payload_hash('42', '{/a}') = idem.payload_hash('42') AS scalar_doc;
-- Exclusion happens before the exactness check: an excluded imprecise number is no error.
SELECT idem.payload_hash('{"a":9007199254740993,"b":1}', '{/a}') = idem.payload_hash('{"b":1}') AS excluded_first;
-- STRICT: a NULL exclude list makes the result NULL (pass '{}' for "exclude nothing").
SELECT idem.payload_hash('{"a":1}'::jsonb, NULL) IS NULL AS null_exclude;

--
-- What jsonb loses. jsonb keeps the LAST of duplicate member names silently, and stores numbers
-- as numeric, forgetting their spelling (1E2 becomes 100, 1.50 stays 1.50). Spelling does not
-- matter to the fingerprint (the canonical form is the same), but duplicates do: two different
-- texts collapse into one document. The text overloads parse strictly and refuse duplicates.
--
SELECT '{"a":1,"a":2}'::jsonb AS jsonb_kept, '{"a":1E2,"b":1.50}'::jsonb AS jsonb_numbers;
SELECT idem.payload_hash('{"a":1,"a":2}'::jsonb) = idem.payload_hash('{"a":2}'::jsonb) AS jsonb_last_wins;
SELECT expect_error($$SELECT idem.payload_hash('{"a":1,"a":2}'::text)$$);
SELECT idem.payload_hash('{"a":1E2}'::text) = idem.payload_hash('{"a":100}'::jsonb) AS spelling_harmless;

--
-- ERR_PAYLOAD_JSON_INVALID (IK010): the strict text parser
--
-- (The input column shows a tab as <TAB> and the byte order mark as <BOM>.)
SELECT replace(replace(v, E'\t', '<TAB>'), U&'\FEFF', '<BOM>') AS input,
       expect_error(format('SELECT idem.canonical_json(%L::text)', v)) AS error
  FROM unnest(ARRAY[
    '{"a":1,"a":2}',             -- duplicate member name
    '{"x":{"b":1,"c":2,"b":3}}', -- duplicate inside a nested object
    '{"a":1,"\u0061":2}',        -- duplicate after unescaping
    '[1,2,]',                    -- trailing comma in an array
    '{"a":1,}',                  -- trailing comma in an object
    '{"a":1 /* c */}',           -- block comment
    E'[1] // c',                 -- line comment
    '01',                        -- leading zero
    '[-01]',
    '1.',                        -- digits must follow '.'
    '.5',
    '+1',
    'NaN',
    'Infinity',
    '[-Infinity]',
    '"\ud800"',                  -- lone high surrogate
    '"\udc00"',                  -- lone low surrogate
    '"\ud800\u0041"',            -- high surrogate followed by a non-surrogate
    E'"a\tb"',                   -- raw control character inside a string
    '"\x"',                      -- unknown escape
    $j${'a':1}$j$,               -- single quotes
    '{a:1}',                     -- unquoted name
    '',                          -- empty input
    '   ',
    '{} {}',                     -- trailing content
    '1 2',
    '[1',
    'nul',
    U&'\FEFF{}'                  -- byte order mark
  ]) AS v;
-- payload_hash(text) parses the same way.
SELECT expect_error($$SELECT idem.payload_hash('{"a":1,"a":2}', '{/a}')$$);
SELECT expect_error($$SELECT idem.payload_hash('[1,2,]'::text)$$);
SELECT error_hint($$SELECT idem.payload_hash('[1,2,]'::text)$$);
-- Nesting: 128 levels are accepted, 129 refused, by the text parser and for jsonb alike.
SELECT length(idem.canonical_json(repeat('[', 128) || repeat(']', 128))) AS depth_128_text,
       length(idem.canonical_json((repeat('[', 128) || repeat(']', 128))::jsonb)) AS depth_128_jsonb;
SELECT expect_error($$SELECT idem.canonical_json(repeat('[', 200))$$);
SELECT expect_error($$SELECT idem.canonical_json(repeat('[', 129) || repeat(']', 129))$$);
SELECT expect_error($$SELECT idem.canonical_json(repeat('{"a":', 129) || '1' || repeat('}', 129))$$);
SELECT expect_error($$SELECT idem.canonical_json((repeat('[', 129) || repeat(']', 129))::jsonb)$$);
SELECT expect_error($$SELECT idem.payload_hash((repeat('[', 129) || repeat(']', 129))::jsonb)$$);
SELECT expect_error($$SELECT idem.payload_hash(repeat('[', 5000) || repeat(']', 5000))$$);

--
-- ERR_PAYLOAD_NUMBER_PRECISION (IK009): payload_hash refuses numbers a double cannot hold
-- exactly, so two different amounts can never share a fingerprint. canonical_json (above) only
-- formats; it rounds like JCS.
--
SELECT expect_error($$SELECT idem.payload_hash('9007199254740993'::jsonb)$$);
SELECT expect_error($$SELECT idem.payload_hash('9007199254740993'::text)$$);
SELECT expect_error($$SELECT idem.payload_hash('{"amount":9007199254740993}'::jsonb)$$);
SELECT expect_error($$SELECT idem.payload_hash('{"order":{"items":[1,2,-9007199254740993]}}'::text)$$);
SELECT expect_error($$SELECT idem.payload_hash('{"a/b":{"m~n":333333333.33333329}}'::jsonb)$$);
SELECT expect_error($$SELECT idem.payload_hash('333333333.33333329'::text)$$);
SELECT expect_error($$SELECT idem.payload_hash('[1.0000000000000001]'::text)$$);
SELECT expect_error($$SELECT idem.payload_hash('[123456789012345678901234567890]'::jsonb)$$);
SELECT expect_error($$SELECT idem.payload_hash('[1e400]'::text)$$);
SELECT expect_error($$SELECT idem.payload_hash('[1e-400]'::text)$$);
SELECT expect_error($$SELECT idem.payload_hash('[18446744073709551616]'::text)$$);
SELECT error_hint($$SELECT idem.payload_hash('9007199254740993'::jsonb)$$);
-- The two amounts the check keeps apart (as doubles they are the same number):
SELECT idem.canonical_json('9007199254740993') = idem.canonical_json('9007199254740992') AS canonical_forms_collide;
-- Exact values are fine, whatever their spelling: trailing zeros, exponents, 2^53, -0, 5e-324.
SELECT v AS input,
       idem.payload_hash(v) = sha256(convert_to(idem.canonical_json(v), 'UTF8')) AS text_ok,
       idem.payload_hash(v::jsonb) = idem.payload_hash(v) AS jsonb_same
  FROM unnest(ARRAY['4.50', '1E30', '1e21', '1e-7', '0.000001', '9007199254740992', '-9007199254740992',
                    '-0', '0.1', '333333333.3333333', '5e-324', '1.7976931348623157e308']) AS v;

--
-- ERR_JSON_POINTER_INVALID (IK011)
--
SELECT p AS pointer, expect_error(format('SELECT idem.payload_hash(%L::jsonb, ARRAY[%L])', '{"a":1}', p)) AS error
  FROM unnest(ARRAY['metadata/trace_id', 'a', '/a~2', '/a~', '/~', '']) AS p;
-- The text overload validates pointers the same way, even when the pointer names nothing.
SELECT expect_error($$SELECT idem.payload_hash('{"a":1}'::text, '{/ok,bad}')$$);
SELECT error_hint($$SELECT idem.payload_hash('{"a":1}'::text, '{bad}')$$);

--
-- ERR_ARGUMENT_INVALID (IK012): a NULL element in the exclude list
--
SELECT expect_error($$SELECT idem.payload_hash('{"a":1}'::jsonb, ARRAY['/a', NULL])$$);
SELECT expect_error($$SELECT idem.payload_hash('{"a":1}'::text, ARRAY[NULL]::text[])$$);
-- A two-dimensional exclude list is refused by the array conversion.
SELECT expect_error($$SELECT idem.payload_hash('{"a":1}'::jsonb, '{{/a},{/b}}')$$);

--
-- fingerprint(): the hash with the scheme that produced it, equal to payload_hash for both inputs.
--
SELECT encode(hash, 'hex') = encode(idem.payload_hash('{"b":1,"a":[1.50]}'::jsonb), 'hex') AS same_hash, scheme
  FROM idem.fingerprint('{"b":1,"a":[1.50]}'::jsonb);
SELECT hash = idem.payload_hash('{"b":1,"a":[1.50]}'::jsonb) AS text_equals_jsonb, scheme
  FROM idem.fingerprint('{"a":[1.5],"b":1}'::text);
SELECT hash = idem.payload_hash('{"a":2}'::jsonb) AS excluded
  FROM idem.fingerprint('{"a":2,"trace":"t-1"}'::jsonb, '{/trace}');
SELECT expect_error($$SELECT idem.fingerprint('{"a":1,"a":2}'::text)$$);
