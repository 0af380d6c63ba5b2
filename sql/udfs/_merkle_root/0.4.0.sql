CREATE OR REPLACE FUNCTION idem._merkle_root(p_leaves bytea[])
 RETURNS bytea
 LANGUAGE plpgsql
 IMMUTABLE PARALLEL SAFE
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
DECLARE
  v_level bytea[];
BEGIN
  -- RFC 6962's hashes (certificate transparency): a leaf is SHA-256(0x00 || leaf), a node
  -- SHA-256(0x01 || left || right); but pairs level by level, an odd node carried up as it is
  -- (RFC 6962 splits at the largest power of two instead); no leaves: SHA-256('').
  IF coalesce(cardinality(p_leaves), 0) = 0 THEN RETURN sha256(''::bytea); END IF;
  SELECT array_agg(sha256('\x00'::bytea || l) ORDER BY i) INTO v_level FROM unnest(p_leaves) WITH ORDINALITY AS t(l, i);
  WHILE cardinality(v_level) > 1 LOOP
    SELECT array_agg(h ORDER BY g) INTO v_level FROM (
      SELECT (i - 1) / 2 AS g,
             CASE WHEN count(*) = 1 THEN (array_agg(n))[1] ELSE sha256('\x01'::bytea || string_agg(n, ''::bytea ORDER BY i)) END AS h
        FROM unnest(v_level) WITH ORDINALITY AS t(n, i) GROUP BY (i - 1) / 2) pairs;
  END LOOP;
  RETURN v_level[1];
END $function$
;
COMMENT ON FUNCTION idem._merkle_root(bytea[]) IS 'The Merkle tree root of the leaves in order (RFC 6962''s 0x00 leaf and 0x01 node prefixes, paired level by level).';
REVOKE ALL ON FUNCTION idem._merkle_root(bytea[]) FROM PUBLIC;
