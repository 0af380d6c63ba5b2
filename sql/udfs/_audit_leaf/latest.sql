CREATE OR REPLACE FUNCTION idem._audit_leaf(l idem.audit_leaves)
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  -- What a seal's Merkle tree holds for one row: its hash and the leaf's own columns, so that a
  -- leaf moved to another id or given another time no longer matches the root.
  SELECT l.row_hash || int8send(l.mutation_id) || int8send((extract(epoch FROM l.attempted_at) * 1000000)::bigint)
         || convert_to(l.tenant_id, 'UTF8')
$function$
;
COMMENT ON FUNCTION idem._audit_leaf(idem.audit_leaves) IS 'The bytes of one leaf of a seal''s Merkle tree: the row hash, the mutation id, attempted_at (microseconds) and the tenant.';
REVOKE ALL ON FUNCTION idem._audit_leaf(idem.audit_leaves) FROM PUBLIC;
