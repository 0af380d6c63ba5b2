-- The audit seals (0.4.0): idem.seal_audit() seals the rows written since the last seal under a
-- Merkle root chained to the previous seal; idem.verify_audit() names each row a superuser
-- changed, deleted or inserted afterwards with the trail's triggers disabled, and each seal or
-- leaf rewritten, first problem first; a head kept elsewhere catches a rewrite of the whole chain.
\set SHOW_CONTEXT never
LOAD 'pg_idempotency';
CREATE FUNCTION sealed_flow(p_tenant text, p_key text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE r record;
BEGIN
  SELECT * INTO r FROM idem.acquire(p_tenant, p_key, '{"amount_cents":100}'::jsonb);
  PERFORM idem.checkpoint(r.handle, r.attempt, 'charging', NULL);
  PERFORM idem.complete(r.handle, r.attempt, 201, '{}', 'created', 'ord-' || p_key, '{"charge":"ch"}', 'paid');
END $$;
SELECT sealed_flow('seal-a', 'seal-key-0000000' || i) FROM generate_series(1, 3) i;
SELECT sealed_flow('seal-b', 'seal-key-0000000' || i) FROM generate_series(1, 2) i;

-- Everything written so far, in batches of 4 ids: each seal chained to the one before.
SELECT count(*) > 0 AS sealed_some FROM idem.seal_audit(batch => 4);
SELECT count(*) AS more_seals FROM (SELECT idem.seal_audit(batch => 1000000)) s;
SELECT count(*) AS nothing_new FROM idem.seal_audit();
SELECT (SELECT sum(row_count) FROM idem.audit_seals) = (SELECT count(*) FROM idem.mutations) AS every_row_sealed,
       (SELECT max(last_id) FROM idem.audit_seals) >= (SELECT max(mutation_id) FROM idem.mutations) AS up_to_the_last_id,
       (SELECT bool_and(previous_head IS NOT DISTINCT FROM lag) FROM (
          SELECT previous_head, lag(head) OVER (ORDER BY seal_id) FROM idem.audit_seals) c) AS chained;
SELECT count(*) AS problems_when_intact FROM idem.verify_audit();
SELECT encode(head, 'hex') AS head_before FROM idem.audit_seals ORDER BY seal_id DESC LIMIT 1 \gset
SELECT count(*) AS problems_with_the_known_head FROM idem.verify_audit(known_head => :'head_before');

-- New rows after the last seal are not findings: the next seal takes them.
SELECT sealed_flow('seal-a', 'seal-key-00000004');
SELECT count(*) AS problems_with_unsealed_new_rows FROM idem.verify_audit();
SELECT row_count AS next_seal_rows FROM idem.seal_audit();

-- The seals and leaves are append-only like the trail.
UPDATE idem.audit_seals SET root = '\x00' WHERE seal_id = 1;
DELETE FROM idem.audit_leaves;
TRUNCATE idem.audit_leaves;

-- A superuser edits history with the triggers off: one row changed, one deleted, one inserted
-- into a sealed range (another tenant's row under a sealed id).
ALTER TABLE idem.mutations DISABLE TRIGGER ALL;
SELECT mutation_id AS changed_id FROM idem.mutations WHERE tenant_id = 'seal-a' AND client_key = 'seal-key-00000002' AND outcome = 'completed' \gset
SELECT mutation_id AS deleted_id FROM idem.mutations WHERE tenant_id = 'seal-b' AND client_key = 'seal-key-00000001' AND outcome = 'completed' \gset
UPDATE idem.mutations SET handler_response = '{"charge":"ch_other"}' WHERE tenant_id = 'seal-a' AND mutation_id = :changed_id;
DELETE FROM idem.mutations WHERE tenant_id = 'seal-b' AND mutation_id = :deleted_id;
INSERT INTO idem.mutations OVERRIDING SYSTEM VALUE
SELECT 'seal-forged', mutation_id, scope_digest, client_key, caller_id, resource, generation, attempt, mutation_type, outcome,
       handler_called, 'ord-forged', handler_response, local_status, error_message, recovery_point, retry_count, attempted_at, completed_at
  FROM idem.mutations WHERE tenant_id = 'seal-a' AND mutation_id = :changed_id;
ALTER TABLE idem.mutations ENABLE TRIGGER ALL;
SELECT problem, tenant_id, mutation_id = :changed_id AS is_changed_id, mutation_id = :deleted_id AS is_deleted_id
  FROM idem.verify_audit() ORDER BY problem;
SELECT detail LIKE 'audit row % of tenant seal-b (attempted at %) was sealed by seal % and is gone%' AS deleted_detail_names_it
  FROM idem.verify_audit() WHERE problem = 'deleted';

-- Hiding the change in the leaf breaks the seal's root; fixing the root breaks its head; a head
-- recomputed breaks the chain at the next seal; the last seal rewritten whole is caught only by
-- a head kept elsewhere.
ALTER TABLE idem.audit_leaves DISABLE TRIGGER ALL;
ALTER TABLE idem.audit_seals DISABLE TRIGGER ALL;
UPDATE idem.audit_leaves l SET row_hash = idem._audit_row_hash(m) FROM idem.mutations m
 WHERE l.tenant_id = m.tenant_id AND l.mutation_id = m.mutation_id AND m.mutation_id = :changed_id AND m.tenant_id = 'seal-a';
SELECT seal_id AS changed_seal FROM idem.audit_leaves WHERE tenant_id = 'seal-a' AND mutation_id = :changed_id \gset
SELECT problem, seal_id = :changed_seal AS in_its_seal FROM idem.verify_audit() WHERE problem NOT IN ('deleted', 'inserted');
UPDATE idem.audit_seals s SET root = (SELECT idem._merkle_root(array_agg(idem._audit_leaf(l) ORDER BY l.mutation_id, l.tenant_id))
                                        FROM idem.audit_leaves l WHERE l.seal_id = s.seal_id) WHERE s.seal_id = :changed_seal;
SELECT problem, seal_id = :changed_seal AS in_its_seal FROM idem.verify_audit() WHERE problem NOT IN ('deleted', 'inserted');
UPDATE idem.audit_seals s SET head = idem._audit_seal_head(s) WHERE s.seal_id = :changed_seal;
SELECT problem, seal_id = :changed_seal + 1 AS at_the_next_seal FROM idem.verify_audit() WHERE problem NOT IN ('deleted', 'inserted');
-- Every later seal rewritten in turn: the chain holds again, but the exported head is gone.
DO $$
DECLARE s idem.audit_seals; prev bytea;
BEGIN
  FOR s IN SELECT * FROM idem.audit_seals ORDER BY seal_id LOOP
    s.previous_head := prev;
    s.head := idem._audit_seal_head(s);
    UPDATE idem.audit_seals SET previous_head = s.previous_head, head = s.head WHERE seal_id = s.seal_id;
    prev := s.head;
  END LOOP;
END $$;
SELECT problem FROM idem.verify_audit() WHERE problem NOT IN ('deleted', 'inserted');
SELECT problem, seal_id IS NULL AS no_seal FROM idem.verify_audit(known_head => :'head_before') WHERE problem NOT IN ('deleted', 'inserted');
-- A seal deleted.
DELETE FROM idem.audit_leaves WHERE seal_id = 1;
DELETE FROM idem.audit_seals WHERE seal_id = 1;
SELECT problem, seal_id FROM idem.verify_audit() WHERE problem NOT IN ('deleted', 'inserted') ORDER BY seal_id;
SELECT count(*) AS checked_since_now FROM idem.verify_audit(since => clock_timestamp());
-- ... but a kept head makes every seal checked, whatever `since` says; and it may be pasted as
-- bytea prints it, in capitals, with a newline.
SELECT problem FROM idem.verify_audit(since => clock_timestamp(), known_head => :'head_before') WHERE problem NOT IN ('deleted', 'inserted');
SELECT encode(head, 'hex') AS head_now FROM idem.audit_seals ORDER BY seal_id DESC LIMIT 1 \gset
SELECT count(*) AS known_head_as_pasted FROM idem.verify_audit(known_head => E'\\x' || upper(:'head_now') || E'\n') WHERE problem = 'head_unknown';
SELECT * FROM idem.verify_audit(since => NULL);
-- A forged row given a leaf that names no seal, and one under an id below every sealed range.
INSERT INTO idem.audit_leaves VALUES ('seal-forged-2', :changed_id, 999, now(), '\x00');
ALTER TABLE idem.mutations DISABLE TRIGGER ALL;
INSERT INTO idem.mutations OVERRIDING SYSTEM VALUE
SELECT t, id, scope_digest, client_key, caller_id, resource, generation, attempt, mutation_type, outcome,
       handler_called, order_id, handler_response, local_status, error_message, recovery_point, retry_count, attempted_at, completed_at
  FROM idem.mutations, (VALUES ('seal-forged-2', :changed_id), ('seal-forged-3', -5)) f(t, id)
 WHERE tenant_id = 'seal-a' AND mutation_id = :changed_id;
ALTER TABLE idem.mutations ENABLE TRIGGER ALL;
SELECT problem, tenant_id, seal_id = 999 AS names_the_missing_seal FROM idem.verify_audit()
 WHERE tenant_id LIKE 'seal-forged-%' OR seal_id = 999 ORDER BY problem, tenant_id;
ALTER TABLE idem.audit_leaves ENABLE TRIGGER ALL;
ALTER TABLE idem.audit_seals ENABLE TRIGGER ALL;

-- Bad arguments change nothing.
SELECT count(*) AS seals FROM idem.audit_seals \gset
SELECT * FROM idem.seal_audit(batch => 0);
SELECT * FROM idem.seal_audit(wait => '2 minutes');
SELECT * FROM idem.seal_audit(wait => NULL);
-- Under REPEATABLE READ a seal committed meanwhile would be invisible to it (the SQL fuzzer's
-- finding: two seals of one range, a duplicate leaf): refused.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM idem.seal_audit();
ROLLBACK;
BEGIN READ ONLY;
SELECT * FROM idem.seal_audit();
ROLLBACK;
SELECT count(*) = :seals AS no_seal_added FROM idem.audit_seals;
-- A role bound to a tenant seals nothing (a seal covers every tenant).
CREATE ROLE seal_bound_operator IN ROLE idem_operator;
SELECT idem.bind_tenant('seal_bound_operator', 'seal-b');
SET SESSION AUTHORIZATION seal_bound_operator;
SELECT * FROM idem.seal_audit();
-- ... and verifies only its tenants' rows (every seal's problems are shown).
SELECT DISTINCT tenant_id FROM idem.verify_audit() WHERE tenant_id IS NOT NULL;
RESET SESSION AUTHORIZATION;
SELECT idem.unbind_tenant('seal_bound_operator', 'seal-b');
DROP ROLE seal_bound_operator;
DROP FUNCTION sealed_flow(text, text);
