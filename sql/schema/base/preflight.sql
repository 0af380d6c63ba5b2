-- Install trust: the schema must be the installer's and hold nothing but this extension, or its
-- owner could drop every record or plant an overload that our functions would call. Fingerprints
-- are computed over UTF-8 bytes, so the database must be UTF-8.

DO $$
DECLARE
  v_ext      oid := (SELECT e.oid FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idempotency');
  v_owner    oid := (SELECT e.extowner FROM pg_catalog.pg_extension e WHERE e.extname = 'pg_idempotency');
  v_schema   oid := 'idem'::regnamespace;
  v_stranger text;
BEGIN
  IF pg_catalog.getdatabaseencoding() <> 'UTF8' THEN
    PERFORM idem._raise('ERR_DATABASE_ENCODING_UNSUPPORTED',
      pg_catalog.format('database %I has encoding %s; pg_idempotency needs UTF8', pg_catalog.current_database(),
                        pg_catalog.getdatabaseencoding()),
      'Fingerprints are computed over UTF-8 bytes (as clients compute them). Create the database WITH ENCODING ''UTF8'' TEMPLATE template0.');
  END IF;
  IF (SELECT n.nspowner FROM pg_catalog.pg_namespace n WHERE n.oid = v_schema) <> v_owner THEN
    PERFORM idem._raise('ERR_SCHEMA_UNTRUSTED',
      pg_catalog.format('schema idem is owned by %s, not by %s who installs the extension',
                        (SELECT n.nspowner::regrole FROM pg_catalog.pg_namespace n WHERE n.oid = v_schema), v_owner::regrole),
      'Drop or rename that schema (its owner could drop or replace our objects), then CREATE EXTENSION pg_idempotency.');
  END IF;
  SELECT o.what INTO v_stranger FROM (
      SELECT pg_catalog.format('function %s', p.oid::regprocedure) AS what, 'pg_catalog.pg_proc'::regclass AS cls, p.oid
        FROM pg_catalog.pg_proc p WHERE p.pronamespace = v_schema
      UNION ALL
      SELECT pg_catalog.format('relation %s', c.oid::regclass), 'pg_catalog.pg_class'::regclass, c.oid
        FROM pg_catalog.pg_class c WHERE c.relnamespace = v_schema AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
      UNION ALL
      SELECT pg_catalog.format('type %s', t.oid::regtype), 'pg_catalog.pg_type'::regclass, t.oid
        FROM pg_catalog.pg_type t
       WHERE t.typnamespace = v_schema AND (t.typtype IN ('b', 'd', 'e', 'r', 'm')
             OR (t.typtype = 'c' AND (SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = t.typrelid) = 'c'))
      UNION ALL
      SELECT pg_catalog.format('operator %s', o.oid::regoperator), 'pg_catalog.pg_operator'::regclass, o.oid
        FROM pg_catalog.pg_operator o WHERE o.oprnamespace = v_schema
      UNION ALL
      SELECT pg_catalog.format('collation %s', co.oid::regcollation), 'pg_catalog.pg_collation'::regclass, co.oid
        FROM pg_catalog.pg_collation co WHERE co.collnamespace = v_schema
    ) o
   -- A member of the extension, or an internal part of one (an array type, a row type).
   WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
                      WHERE d.classid = o.cls AND d.objid = o.oid
                        AND ((d.deptype = 'e' AND d.refobjid = v_ext) OR d.deptype = 'i'))
   LIMIT 1;
  IF v_stranger IS NOT NULL THEN
    PERFORM idem._raise('ERR_SCHEMA_UNTRUSTED',
      pg_catalog.format('schema idem holds %s, which is not part of pg_idempotency', v_stranger),
      'Install into an empty schema idem (or none: CREATE EXTENSION creates it); move foreign objects elsewhere.');
  END IF;
END $$;
