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
