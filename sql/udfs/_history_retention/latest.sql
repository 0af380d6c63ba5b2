CREATE OR REPLACE FUNCTION idem._history_retention()
 RETURNS interval
 LANGUAGE c
 STABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', $function$idem_history_retention$function$
;
COMMENT ON FUNCTION idem._history_retention() IS 'idem.history_retention: how long a purged key''s generation is remembered.';
REVOKE ALL ON FUNCTION idem._history_retention() FROM PUBLIC;
