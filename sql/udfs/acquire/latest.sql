CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload_hash bytea, caller text DEFAULT ''::text, resource text DEFAULT ''::text, lease interval DEFAULT NULL::interval, ttl interval DEFAULT NULL::interval, on_busy text DEFAULT 'reject'::text, mutation_type text DEFAULT 'create'::text, payload_members bytea DEFAULT NULL::bytea)
 RETURNS idem.acquire_result
 LANGUAGE c
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS 'MODULE_PATHNAME', $function$idem_acquire_hash$function$
;
COMMENT ON FUNCTION idem.acquire(text,text,bytea,text,text,interval,interval,text,text,bytea) IS 'acquire with a precomputed fingerprint (scheme idem.fingerprint_scheme()), so a client can send 32 bytes instead of the payload; payload_members: its member digests, to name what a reused key changed (the client library computes them).';
REVOKE ALL ON FUNCTION idem.acquire(text,text,bytea,text,text,interval,interval,text,text,bytea) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.acquire(text,text,bytea,text,text,interval,interval,text,text,bytea) TO idem_service;

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload jsonb, caller text DEFAULT ''::text, resource text DEFAULT ''::text, lease interval DEFAULT NULL::interval, ttl interval DEFAULT NULL::interval, on_busy text DEFAULT 'reject'::text, mutation_type text DEFAULT 'create'::text)
 RETURNS idem.acquire_result
 LANGUAGE c
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS 'MODULE_PATHNAME', $function$idem_acquire_jsonb$function$
;
COMMENT ON FUNCTION idem.acquire(text,text,jsonb,text,text,interval,interval,text,text) IS 'Start (acquired), take over (resumed), replay, refuse (in_progress) or reject (mismatch) a mutation under an idempotency key.';
REVOKE ALL ON FUNCTION idem.acquire(text,text,jsonb,text,text,interval,interval,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.acquire(text,text,jsonb,text,text,interval,interval,text,text) TO idem_service;

CREATE OR REPLACE FUNCTION idem.acquire(tenant text, key text, payload text, caller text DEFAULT ''::text, resource text DEFAULT ''::text, lease interval DEFAULT NULL::interval, ttl interval DEFAULT NULL::interval, on_busy text DEFAULT 'reject'::text, mutation_type text DEFAULT 'create'::text)
 RETURNS idem.acquire_result
 LANGUAGE c
 SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
 SET enable_seqscan TO 'off'
AS 'MODULE_PATHNAME', $function$idem_acquire_text$function$
;
COMMENT ON FUNCTION idem.acquire(text,text,text,text,text,interval,interval,text,text) IS 'acquire with the payload as JSON text, parsed strictly (duplicate keys refused).';
REVOKE ALL ON FUNCTION idem.acquire(text,text,text,text,text,interval,interval,text,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.acquire(text,text,text,text,text,interval,interval,text,text) TO idem_service;
