CREATE OR REPLACE FUNCTION idem._tenant_bindings_changed()
 RETURNS trigger
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_tenant_bindings_changed$function$
;
COMMENT ON FUNCTION idem._tenant_bindings_changed() IS 'Trigger of idem.tenant_bindings: every backend forgets its cached "no bindings" when they change.';
REVOKE ALL ON FUNCTION idem._tenant_bindings_changed() FROM PUBLIC;
