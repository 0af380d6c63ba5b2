CREATE OR REPLACE FUNCTION idem._session_consumers()
 RETURNS text[]
 LANGUAGE sql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT CASE WHEN r.rolsuper THEN NULL
              ELSE (SELECT array_agg(DISTINCT b.consumer ORDER BY b.consumer) FROM idem.consumer_bindings b
                      JOIN pg_catalog.pg_roles br ON br.oid = b.role_oid
                     WHERE pg_catalog.pg_has_role(r.oid, br.oid, 'MEMBER')) END
    FROM pg_catalog.pg_roles r WHERE r.rolname = session_user $function$
;
COMMENT ON FUNCTION idem._session_consumers() IS NULL;
REVOKE ALL ON FUNCTION idem._session_consumers() FROM PUBLIC;
