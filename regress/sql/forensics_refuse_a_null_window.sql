-- A forensic query given a NULL window used to answer no rows: "nothing was charged twice" to a
-- script whose variable was unset. Each refuses it now, by name. And an operator's reason is
-- bounded like every other text the record keeps.
\set SHOW_CONTEXT never
SELECT * FROM idem.double_charges(NULL);
SELECT * FROM idem.double_charges_by_resource(NULL);
SELECT * FROM idem.key_reuse(NULL);
SELECT * FROM idem.recent_mutations(NULL, now());
SELECT * FROM idem.recent_mutations('t-null', NULL);
-- The defaults still answer (no rows for a tenant with no history).
SELECT count(*) AS charged_twice FROM idem.double_charges() WHERE tenant_id = 't-null';
SELECT count(*) AS reused FROM idem.key_reuse() WHERE tenant_id = 't-null';
SELECT count(*) AS recent FROM idem.recent_mutations('t-null');

SELECT a.handle AS h, a.attempt AS a FROM idem.acquire('t-null', 'null-window-key-01', '{}'::jsonb, lease => '1 minute') a \gset
SELECT idem.resolve_stuck(:'h', :a, repeat('x', 1025), 500);
SELECT * FROM idem.retry_stuck(:'h', :a, repeat('x', 1025));
SELECT * FROM idem.retry_stuck('t-null', :'h', :a, repeat('é', 513));
-- 1,024 bytes pass the bound; the record is still leased, so that is the answer.
SELECT set_config('nw.h', :'h', false) IS NOT NULL AS h, set_config('nw.a', :'a', false) IS NOT NULL AS a;
DO $$ BEGIN
  PERFORM idem.resolve_stuck(current_setting('nw.h'), current_setting('nw.a')::bigint, repeat('x', 1024), 500);
EXCEPTION WHEN OTHERS THEN RAISE NOTICE '%', split_part(SQLERRM, ':', 1);
END $$;
SELECT idem.complete(:'h', :a, 201, '{}'::jsonb, 'ok'::bytea);
