CREATE OR REPLACE FUNCTION idem._boundary_probe(kind text)
 RETURNS integer
 LANGUAGE c
AS 'MODULE_PATHNAME', $function$idem_raise_cpp_exception$function$
;
COMMENT ON FUNCTION idem._boundary_probe(text) IS 'Test hook for the C++/PostgreSQL error boundary: throws the named kind of error (idem, std, bad_alloc, pg, int) from C++ frames that own memory.';
REVOKE ALL ON FUNCTION idem._boundary_probe(text) FROM PUBLIC;
