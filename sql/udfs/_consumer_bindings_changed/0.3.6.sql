CREATE OR REPLACE FUNCTION idem._consumer_bindings_changed()
 RETURNS trigger
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_consumer_bindings_changed$function$
;
COMMENT ON FUNCTION idem._consumer_bindings_changed() IS 'Trigger of idem.consumer_bindings: every backend forgets its cached "no bindings" when they change.';
REVOKE ALL ON FUNCTION idem._consumer_bindings_changed() FROM PUBLIC;
