CREATE OR REPLACE FUNCTION idem.verify_audit(since timestamp with time zone DEFAULT '-infinity'::timestamp with time zone, known_head text DEFAULT NULL::text)
 RETURNS TABLE(seal_id bigint, tenant_id text, mutation_id bigint, problem text, detail text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'pg_catalog', 'pg_temp'
AS $function$
#variable_conflict use_column
DECLARE
  -- The head as an operator copies it: hex, any case, with or without bytea's \x, blanks around.
  v_head text := lower(regexp_replace(btrim(known_head, E' \t\r\n'), '^\\x', '', 'i'));
  v_from timestamptz := since;
BEGIN
  IF since IS NULL THEN
    PERFORM idem._raise('ERR_ARGUMENT_INVALID', 'since must not be NULL', 'Every seal: idem.verify_audit() (since defaults to -infinity).');
  END IF;
  -- A kept head vouches for its seal and, through the chain, every seal before it: with one, every
  -- seal is checked, whatever `since` says (a seal left out would be vouched for unchecked).
  IF v_head IS NOT NULL THEN
    v_from := '-infinity';
  END IF;
  -- Each seal made since then against the chain, its leaves against its root, its rows against
  -- their leaves, and its id range against rows without its leaf; first problem first. A row's
  -- findings are shown to the roles that may read its tenant; the seals' to every caller.
  RETURN QUERY
  WITH chain AS (
    SELECT s.*, lag(s.seal_id) OVER w AS prev_id, lag(s.head) OVER w AS prev_head
      FROM idem.audit_seals s WINDOW w AS (ORDER BY s.seal_id)),
  checked AS (SELECT * FROM chain c WHERE c.sealed_at >= v_from),
  leaves AS (
    SELECT c.seal_id, count(l.*) AS n,
           count(l.*) FILTER (WHERE l.mutation_id NOT BETWEEN c.first_id AND c.last_id) AS outside,
           idem._merkle_root(array_agg(idem._audit_leaf(l) ORDER BY l.mutation_id, l.tenant_id) FILTER (WHERE l.seal_id IS NOT NULL)) AS root
      FROM checked c LEFT JOIN idem.audit_leaves l ON l.seal_id = c.seal_id GROUP BY c.seal_id),
  findings AS (
    SELECT c.seal_id, NULL::text AS tenant_id, NULL::bigint AS mutation_id, 'seal_missing' AS problem,
           format('the seal before seal %s is gone (the chain goes from %s to %s)', c.seal_id, coalesce(c.prev_id::text, 'nothing'), c.seal_id) AS detail
      FROM checked c WHERE c.prev_id IS DISTINCT FROM nullif(c.seal_id - 1, 0)
    UNION ALL
    SELECT c.seal_id, NULL, NULL, 'chain_broken', format('seal %s does not name seal %s''s head as its previous one', c.seal_id, c.prev_id)
      FROM checked c WHERE c.prev_id = c.seal_id - 1 AND c.previous_head IS DISTINCT FROM c.prev_head
    UNION ALL
    SELECT c.seal_id, NULL, NULL, 'seal_altered', format('seal %s''s head is not the hash of what it says', c.seal_id)
      FROM checked c WHERE c.head IS DISTINCT FROM idem._audit_seal_head(ROW(c.seal_id, c.sealed_at, c.first_id, c.last_id, c.row_count, c.root, c.previous_head, c.head)::idem.audit_seals)
    UNION ALL
    SELECT c.seal_id, NULL, NULL, 'leaves_altered',
           format('seal %s covers %s rows with root %s; its leaves are %s rows (%s outside ids %s..%s) with root %s', c.seal_id, c.row_count,
                  encode(c.root, 'hex'), x.n, x.outside, c.first_id, c.last_id, encode(x.root, 'hex'))
      FROM checked c JOIN leaves x USING (seal_id) WHERE x.n <> c.row_count OR x.outside > 0 OR x.root IS DISTINCT FROM c.root
    UNION ALL
    SELECT l.seal_id, l.tenant_id, l.mutation_id, 'deleted',
           format('audit row %s of tenant %s (attempted at %s) was sealed by seal %s and is gone, younger than idem.min_audit_retention: no purge removed it',
                  l.mutation_id, l.tenant_id, l.attempted_at, l.seal_id)
      FROM checked c JOIN idem.audit_leaves l ON l.seal_id = c.seal_id
     WHERE NOT EXISTS (SELECT FROM idem.mutations m WHERE m.tenant_id = l.tenant_id AND m.mutation_id = l.mutation_id)
       AND l.attempted_at >= clock_timestamp() - idem._min_audit_retention()
    UNION ALL
    SELECT l.seal_id, l.tenant_id, l.mutation_id, 'changed',
           format('audit row %s of tenant %s is not the row seal %s sealed (its content hashes otherwise)', l.mutation_id, l.tenant_id, l.seal_id)
      FROM checked c JOIN idem.audit_leaves l ON l.seal_id = c.seal_id
      JOIN idem.mutations m ON m.tenant_id = l.tenant_id AND m.mutation_id = l.mutation_id
     WHERE idem._audit_row_hash(m) <> l.row_hash
    UNION ALL
    SELECT c.seal_id, m.tenant_id, m.mutation_id, 'inserted',
           format('audit row %s of tenant %s lies in seal %s''s ids %s..%s but was not there when it was sealed', m.mutation_id, m.tenant_id,
                  c.seal_id, c.first_id, c.last_id)
      FROM checked c JOIN idem.mutations m ON m.mutation_id BETWEEN c.first_id AND c.last_id
     WHERE NOT EXISTS (SELECT FROM idem.audit_leaves l
                        WHERE l.tenant_id = m.tenant_id AND l.mutation_id = m.mutation_id AND l.seal_id = c.seal_id)
    UNION ALL
    -- Below every seal's range: ids start at 1, so such a row was put there by hand.
    SELECT f.seal_id, m.tenant_id, m.mutation_id, 'inserted',
           format('audit row %s of tenant %s has an id below every sealed range (the first starts at %s)', m.mutation_id, m.tenant_id, f.first_id)
      FROM (SELECT s.seal_id, s.first_id FROM idem.audit_seals s ORDER BY s.seal_id LIMIT 1) f
      JOIN idem.mutations m ON m.mutation_id < f.first_id
     WHERE NOT EXISTS (SELECT FROM idem.audit_leaves l WHERE l.tenant_id = m.tenant_id AND l.mutation_id = m.mutation_id)
    UNION ALL
    SELECT l.seal_id, NULL, NULL, 'leaves_altered', format('%s leaves name seal %s, which does not exist', count(*), l.seal_id)
      FROM idem.audit_leaves l WHERE NOT EXISTS (SELECT FROM idem.audit_seals s WHERE s.seal_id = l.seal_id) GROUP BY l.seal_id
    UNION ALL
    SELECT NULL, NULL, NULL, 'head_unknown', format('no seal has the head %s: the seals were rewritten since it was exported, or it is of another database', v_head)
     WHERE v_head IS NOT NULL AND NOT EXISTS (SELECT FROM idem.audit_seals s WHERE encode(s.head, 'hex') = v_head))
  SELECT f.seal_id, f.tenant_id, f.mutation_id, f.problem, f.detail FROM findings f
   WHERE f.tenant_id IS NULL OR idem._tenant_visible(f.tenant_id)
   ORDER BY f.seal_id NULLS FIRST, f.mutation_id NULLS FIRST, f.problem;
END $function$
;
COMMENT ON FUNCTION idem.verify_audit(timestamp with time zone,text) IS 'Checks the seals made since `since` (and, when known_head is given, that a seal has it and every seal from it on): one row per problem, first first: seal_missing, chain_broken, seal_altered, leaves_altered, and per audit row deleted, changed or inserted after its seal. No row: intact.';
REVOKE ALL ON FUNCTION idem.verify_audit(timestamp with time zone,text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION idem.verify_audit(timestamp with time zone,text) TO idem_auditor, idem_operator;
