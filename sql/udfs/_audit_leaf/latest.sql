CREATE OR REPLACE FUNCTION idem._audit_leaf(l idem.audit_leaves)
 RETURNS bytea
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
  -- What a seal's Merkle tree holds for one row: its hash and the leaf's own columns, so that a
  -- leaf moved to another id or given another time no longer matches the root.
  -- Each part of variable length behind its length: no two leaves have the same bytes.
  SELECT int4send(length(l.row_hash)) || l.row_hash || int8send(l.mutation_id)
         || int4send(octet_length(convert_to(l.tenant_id, 'UTF8'))) || convert_to(l.tenant_id, 'UTF8')
         || convert_to(extract(epoch FROM l.attempted_at)::text, 'UTF8')
$function$
;
COMMENT ON FUNCTION idem._audit_leaf(idem.audit_leaves) IS 'The bytes of one leaf of a seal''s Merkle tree: the row hash, the mutation id, the tenant and attempted_at (epoch seconds).';
REVOKE ALL ON FUNCTION idem._audit_leaf(idem.audit_leaves) FROM PUBLIC;
