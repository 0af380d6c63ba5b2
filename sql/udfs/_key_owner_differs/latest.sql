CREATE OR REPLACE FUNCTION idem._key_owner_differs(p_tenant text, p_digest bytea, p_key text, p_caller text, p_resource text)
 RETURNS text[]
 LANGUAGE sql
 STABLE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  SELECT array_remove(ARRAY[CASE WHEN o.caller_id IS DISTINCT FROM p_caller THEN 'caller' END,
                            CASE WHEN o.resource IS DISTINCT FROM p_resource THEN 'resource' END], NULL)
    FROM idem.keys o
   WHERE coalesce(current_setting('idem.key_scope', true), 'tenant') = 'tenant'
     AND o.tenant_id = p_tenant AND o.client_key = p_key COLLATE "C" AND o.key_scope = 'tenant'
     AND o.scope_digest <> p_digest
   LIMIT 1 $function$
;
COMMENT ON FUNCTION idem._key_owner_differs(text,bytea,text,text,text) IS NULL;
REVOKE ALL ON FUNCTION idem._key_owner_differs(text,bytea,text,text,text) FROM PUBLIC;
