CREATE OR REPLACE FUNCTION idem._check_guard()
 RETURNS trigger
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_guard regprocedure;
BEGIN
  IF NEW.guard IS NOT NULL THEN
    v_guard := to_regprocedure(NEW.guard);
    IF v_guard IS NULL OR NOT EXISTS (
         SELECT 1 FROM pg_proc p JOIN pg_roles o ON o.oid = p.proowner
          WHERE p.oid = v_guard AND p.prokind = 'f' AND p.prorettype = 'boolean'::regtype AND NOT p.proretset
            AND p.pronargs = 1 AND p.proargtypes[0] = 'jsonb'::regtype AND o.rolsuper) THEN
      PERFORM idem._raise('ERR_ARGUMENT_INVALID',
        format('guard %s of %s %s -> %s must be a function (row jsonb) RETURNS boolean owned by a superuser, named with its schema',
               NEW.guard, NEW.machine, NEW.from_state, NEW.to_state),
        'Ask the database owner to create the guard function; it runs with the privileges of whoever changes a row.');
    END IF;
    -- Kept as the schema-qualified signature (the search_path here is pg_catalog's), which every
    -- node, and a restore, resolves to its own copy of the function.
    NEW.guard := v_guard::text;
  END IF;
  RETURN NEW;
END $function$
;
COMMENT ON FUNCTION idem._check_guard() IS NULL;
REVOKE ALL ON FUNCTION idem._check_guard() FROM PUBLIC;
