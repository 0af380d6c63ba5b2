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
