-- What pg_dump keeps, so that a restored database is the one dumped:
-- - the counters of the audit trail, the operator log and the transition log: without them a
--   restored database handed out ids it already held, and its first audited write failed on a
--   duplicate key;
-- - the tenant and consumer bindings: without them a bound role came back unbound, free to act
--   for every tenant;
-- - of the machines, only the rows a user added: CREATE EXTENSION makes the built-in ones, and
--   dumping them too made the restore of both machine tables fail on duplicate keys, losing the
--   user's own machines. (A built-in row the user changed or deleted comes back as built.)
SELECT pg_catalog.pg_extension_config_dump('idem.mutations_mutation_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.operator_actions_action_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.transition_log_log_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.tenant_bindings', '');
SELECT pg_catalog.pg_extension_config_dump('idem.consumer_bindings', '');
SELECT pg_catalog.pg_extension_config_dump('idem.machine_states',
  $$WHERE (machine, state) NOT IN (('order', 'cancelled'), ('order', 'confirmed'), ('order', 'created'),
     ('order', 'refunded'), ('order', 'shipped'), ('payment', 'authorized'), ('payment', 'captured'),
     ('payment', 'failed'), ('payment', 'partially_refunded'), ('payment', 'refunded'), ('payment', 'voided'))$$);
SELECT pg_catalog.pg_extension_config_dump('idem.machine_transitions',
  $$WHERE (machine, from_state, to_state) NOT IN (('order', 'confirmed', 'refunded'), ('order', 'confirmed', 'shipped'),
     ('order', 'created', 'cancelled'), ('order', 'created', 'confirmed'), ('order', 'created', 'refunded'),
     ('payment', 'authorized', 'captured'), ('payment', 'authorized', 'failed'), ('payment', 'authorized', 'voided'),
     ('payment', 'captured', 'partially_refunded'), ('payment', 'captured', 'refunded'),
     ('payment', 'partially_refunded', 'refunded'))$$);
-- Bindings name their role as regrole, so pg_dump writes the role's name and a restore into
-- another cluster (where the role has another OID) binds the same role, or fails on a role that
-- does not exist there, instead of binding whichever role holds the old OID.
-- The rewrite locks both tables exclusively, and every bound call reads them: behind a long
-- transaction the update would queue all traffic behind it, so it gives up instead (retry it).
SET LOCAL lock_timeout = '3s';
ALTER TABLE idem.tenant_bindings ALTER COLUMN role_oid TYPE regrole;
ALTER TABLE idem.consumer_bindings ALTER COLUMN role_oid TYPE regrole;

-- A machine guard is its function's schema-qualified signature, no longer a regprocedure: an OID
-- means another function, or none, on another Citus node and after a restore into another
-- cluster, and pg_upgrade refuses regprocedure columns. It is resolved where it is used (and
-- fails closed when it does not resolve). The trigger that checks it names the column, so it is
-- made again around the change.
DROP TRIGGER machine_transitions_guard ON idem.machine_transitions;
DO $$
DECLARE
  v_path text := current_setting('search_path');
BEGIN
  -- Under pg_catalog's search_path alone, a regprocedure's text names its schema.
  PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
  ALTER TABLE idem.machine_transitions ALTER COLUMN guard TYPE text USING guard::text;
  PERFORM pg_catalog.set_config('search_path', v_path, true);
END $$;
CREATE TRIGGER machine_transitions_guard BEFORE INSERT OR UPDATE OF guard ON idem.machine_transitions
  FOR EACH ROW EXECUTE FUNCTION idem._check_guard();
COMMENT ON COLUMN idem.machine_transitions.guard IS 'The guard function''s schema-qualified signature, e.g. idem.guard_stock_available(jsonb) (a regprocedure before 0.4.0), resolved on each node; NULL when the transition is unguarded.';

-- outbox_lag reads idem.outbox_lag_counts(): one query (idem._outbox_lag_query) on one node and
-- on Citus, where a node that does not answer is left out and counted, not a failure of the view.
-- A column is added at the end (nodes_not_counted) and none dropped: CREATE OR REPLACE keeps the
-- grants of base/views.sql.
CREATE OR REPLACE VIEW idem.outbox_lag WITH (security_barrier = true) AS
SELECT l.consumer COLLATE pg_catalog."C" AS consumer, l.topic COLLATE pg_catalog."C" AS topic,
       coalesce(l.backlog, 0)::bigint AS backlog,
       l.oldest_unacked_committed_at,
       clock_timestamp() - l.oldest_unacked_committed_at AS oldest_unacked_age,
       coalesce(l.claimed_groups, 0)::bigint AS claimed_groups,
       coalesce(l.retrying_groups, 0)::bigint AS retrying_groups,
       coalesce(l.dead_letters, 0)::bigint AS dead_letters,
       l.nodes_not_counted
  FROM idem.outbox_lag_counts() l;
COMMENT ON VIEW idem.outbox_lag IS
  'Per consumer and topic: committed events not yet acked (backlog), the oldest one''s commit time and age, groups claimed or retrying now, open dead letters; on Citus the nodes that did not answer (their groups not counted, 0 when all did).';

-- A trail no one can quietly edit (docs/runbook.md, "Has anyone edited the audit trail?"):
-- idem.seal_audit() appends a seal over the audit rows written since the previous one, the
-- Merkle root of their hashes, chained to the previous seal's head; idem.verify_audit()
-- recomputes both and names each row changed, deleted or inserted after its seal. A seal covers
-- a range of mutation ids, every one of them committed when it was made (docs/design-decisions.md).
CREATE TABLE idem.audit_seals (
    seal_id bigint NOT NULL PRIMARY KEY,
    sealed_at timestamp with time zone NOT NULL,
    first_id bigint NOT NULL,
    last_id bigint NOT NULL,
    row_count bigint NOT NULL,
    root bytea NOT NULL,
    previous_head bytea,
    head bytea NOT NULL,
    CHECK (first_id <= last_id + 1)
);
COMMENT ON TABLE idem.audit_seals IS 'One row per idem.seal_audit(): the audit rows with mutation ids first_id..last_id (all committed when sealed), their Merkle root, and head = SHA-256 of the previous head, the root and the range. Export the heads: a head kept elsewhere proves every seal before it.';
CREATE TABLE idem.audit_leaves (
    tenant_id text NOT NULL COLLATE pg_catalog."C",
    mutation_id bigint NOT NULL,
    seal_id bigint NOT NULL REFERENCES idem.audit_seals (seal_id) DEFERRABLE INITIALLY DEFERRED,
    attempted_at timestamp with time zone NOT NULL,
    row_hash bytea NOT NULL,
    PRIMARY KEY (tenant_id, mutation_id)
);
CREATE INDEX audit_leaves_seal_idx ON idem.audit_leaves USING btree (seal_id);
COMMENT ON TABLE idem.audit_leaves IS 'The rows each seal covers: the SHA-256 of each audit row''s content (idem._audit_row_hash) and its attempted_at, both under the seal''s Merkle root.';
-- Seals read the trail by mutation id: a BRIN index costs the audit insert next to nothing (ids
-- grow with the table's blocks).
CREATE INDEX mutations_id_brin ON idem.mutations USING brin (mutation_id);
REVOKE ALL ON idem.audit_seals, idem.audit_leaves FROM PUBLIC;
GRANT SELECT ON idem.audit_seals TO idem_auditor, idem_operator;
-- Row security as on every table of ours: the owner (the seal's and verify's definer) sees all;
-- the seals are every tenant's, the leaves no one else's to read.
ALTER TABLE idem.audit_seals ENABLE ROW LEVEL SECURITY;
ALTER TABLE ONLY idem.audit_seals FORCE ROW LEVEL SECURITY;
ALTER TABLE idem.audit_leaves ENABLE ROW LEVEL SECURITY;
ALTER TABLE ONLY idem.audit_leaves FORCE ROW LEVEL SECURITY;
CREATE POLICY owner_all ON idem.audit_seals TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY owner_all ON idem.audit_leaves TO @extowner@ USING (true) WITH CHECK (true);
CREATE POLICY read_seals ON idem.audit_seals FOR SELECT TO idem_auditor, idem_operator USING (true);
CREATE TRIGGER audit_seals_append_only BEFORE DELETE OR UPDATE ON idem.audit_seals FOR EACH ROW EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER audit_seals_no_truncate BEFORE TRUNCATE ON idem.audit_seals FOR EACH STATEMENT EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER audit_leaves_append_only BEFORE DELETE OR UPDATE ON idem.audit_leaves FOR EACH ROW EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER audit_leaves_no_truncate BEFORE TRUNCATE ON idem.audit_leaves FOR EACH STATEMENT EXECUTE FUNCTION idem._refuse_audit_change();
SELECT pg_catalog.pg_extension_config_dump('idem.audit_seals', '');
SELECT pg_catalog.pg_extension_config_dump('idem.audit_leaves', '');
-- The digests of a new key's payload members (core/json/member_digests.hpp): a reused key with
-- another payload is told which JSON pointers differ, never their values. NULL: none kept.
ALTER TABLE idem.keys ADD COLUMN payload_members bytea;
COMMENT ON COLUMN idem.keys.payload_members IS 'Salted, truncated digests of the payload''s members down to 2 levels below the root, with their JSON pointers: a mismatch names what differs (docs/client.md); NULL when none were kept. Readable by the owner only.';
-- The salt is derived from what the row itself holds (a client and the server derive the same
-- one, with no secret between them), so a reader of the digests could test guesses of a
-- low-entropy member (an amount) one at a time. Auditors and operators therefore read every
-- column of idem.keys but this one. A column added later must be granted to them here too.
REVOKE SELECT ON idem.keys FROM idem_auditor, idem_operator;
DO $grant$ BEGIN
  EXECUTE (SELECT format('GRANT SELECT (%s) ON idem.keys TO idem_auditor, idem_operator',
                         string_agg(quote_ident(a.attname), ', ' ORDER BY a.attname))
             FROM pg_catalog.pg_attribute a
            WHERE a.attrelid = 'idem.keys'::regclass AND a.attnum > 0 AND NOT a.attisdropped
              AND a.attname <> 'payload_members');
END $grant$;
