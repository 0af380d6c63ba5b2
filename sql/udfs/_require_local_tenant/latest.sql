CREATE OR REPLACE FUNCTION idem._require_local_tenant(p_tenant text)
 RETURNS void
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_require_local_tenant$function$
;
COMMENT ON FUNCTION idem._require_local_tenant(text) IS 'On Citus: ERR_TENANT_NOT_LOCAL unless the tenant''s shard is on this node (a key lock taken elsewhere is not its contenders''). Nothing on one node.';
REVOKE ALL ON FUNCTION idem._require_local_tenant(text) FROM PUBLIC;
