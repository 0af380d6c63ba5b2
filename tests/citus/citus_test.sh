#!/usr/bin/env bash
# pg_idempotency on a Citus cluster (a coordinator and two workers, scripts/citus.sh): the
# guarantees of one node, through the coordinator, for tenants on both workers. Runs in a
# database of its own (made and dropped here). CITUS_SMOKE=1 leaves out the slow parts (the shard
# move, the killed worker, the duplicate storm).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
DB=${CITUS_TEST_DB:-idem_citus_test}
source "$ROOT/tests/citus/lib.sh"
bin=$ROOT/build/pg-install/usr/lib/postgresql/15/bin
[ -x "$bin/pgbench" ] || bin=/usr/lib/postgresql/15/bin

"$ROOT/scripts/citus.sh" drop-database "$DB"
"$ROOT/scripts/citus.sh" database "$DB" || { echo "FAILED: could not make database $DB on the cluster"; exit 1; }
# CITUS_KEEP_DB=1 keeps the database for a look after a failure.
trap '[ "${CITUS_KEEP_DB:-0}" = 1 ] || { "$ROOT/scripts/citus.sh" drop-database "$DB"; "$ROOT/scripts/citus.sh" drop-database idem_citus_nodes; }; rm -rf "$session_dir"' EXIT

# ---- distribution ------------------------------------------------------------------------------
q "CREATE EXTENSION pg_idempotency" >/dev/null
check "idem.citus_distribute() distributes the tables and registers the entry points" "36" \
  "$(q "SELECT count(*) FROM idem.citus_distribute()")"
check "a second call changes nothing (idempotent)" "sequences: a range per node" "$(q "SELECT * FROM idem.citus_distribute()")"
check_has "with shard replicas asked for, it refuses: the fast path writes one copy" "ERR_ARGUMENT_INVALID: citus.shard_replication_factor is 2" \
  "$(q "SET citus.shard_replication_factor = 2; SELECT * FROM idem.citus_distribute()")"
check "every tenant table is colocated with idem.keys" "12" \
  "$(q "SELECT count(*) FROM pg_dist_partition p WHERE p.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'idem.keys'::regclass) AND p.partmethod = 'h'")"
check "the shared tables are reference tables" "8" \
  "$(q "SELECT count(*) FROM pg_dist_partition p WHERE p.partmethod = 'n' AND p.logicalrelid::text LIKE 'idem.%'")"
check "the consumer's calls with a tenant are delegated by it; consume_once and ack inside a transaction block too" \
  "ack(text,text,bigint[],uuid):true claim_tenant(text,text,text[],integer,interval):false consume_once(text,text,bigint,uuid):true nack(text,text,bigint,uuid,text,interval):false" \
  "$(q "SELECT string_agg(regexp_replace(o.objid::regprocedure::text, '^idem\.', '') || ':' || o.force_delegation, ' ' ORDER BY o.objid::regprocedure::text) FROM pg_dist_object o
         WHERE o.classid = 'pg_proc'::regclass AND o.colocationid IS NOT NULL
           AND o.objid::regprocedure::text ~ '^idem\.(claim_tenant|ack|nack|consume_once)\('")"
check "the machine tables' foreign keys are back" "2" \
  "$(q "SELECT count(*) FROM pg_constraint WHERE conrelid = 'idem.machine_transitions'::regclass AND contype = 'f'")"

# A business table, as the demo's: the tenant's orders beside its keys.
q "CREATE TABLE orders (tenant_id text COLLATE \"C\" NOT NULL, order_id text NOT NULL, amount_cents int NOT NULL, PRIMARY KEY (tenant_id, order_id))" >/dev/null
q "SELECT create_distributed_table('orders', 'tenant_id', colocate_with => 'idem.keys')" >/dev/null
check "citus_check_table: a colocated business table is fine" "t" "$(q "SELECT ok FROM idem.citus_check_table('orders')")"
q "CREATE TABLE loose (tenant_id text COLLATE \"C\" NOT NULL, x int)" >/dev/null
q "SELECT create_distributed_table('loose', 'tenant_id', colocate_with => 'none')" >/dev/null
check_has "citus_check_table names a table not colocated with idem.keys" "is not colocated with idem.keys" \
  "$(q "SELECT problem FROM idem.citus_check_table('loose') WHERE NOT ok")"
q "CREATE TABLE plain_text (tenant_id text NOT NULL, x int)" >/dev/null
q "SELECT create_distributed_table('plain_text', 'tenant_id', colocate_with => 'none')" >/dev/null
check_has "citus_check_table names a tenant column that is not COLLATE \"C\"" 'not text COLLATE "C"' \
  "$(q "SELECT string_agg(problem, '; ') FROM idem.citus_check_table('plain_text') WHERE NOT ok")"

# Tenants on both workers (hash of the tenant): the first of each worker.
tenant_on() { # tenant_on PORT: a tenant whose shard is on the worker at PORT
  q "SELECT t FROM generate_series(1, 200) i, LATERAL (SELECT 'tenant-' || i AS t) x
      WHERE (SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = get_shard_id_for_distribution_column('idem.keys', t)) = $1
      ORDER BY i LIMIT 1"
}
t1=$(tenant_on "$(port_of worker1)")
t2=$(tenant_on "$(port_of worker2)")
check "a tenant on each worker" "yes" "$([ -n "$t1" ] && [ -n "$t2" ] && [ "$t1" != "$t2" ] && echo yes)"

# ---- exactly once through the coordinator --------------------------------------------------------
# The one-transaction flow, for a tenant on each worker: acquire, the business write, complete.
one_transaction() { # one_transaction TENANT KEY BODY
  q_script >/dev/null 2>&1 <<SQL
BEGIN;
SELECT handle, attempt FROM idem.acquire('$1', '$2', '{"amount_cents":1999}'::jsonb, caller => 'checkout', resource => 'cart') \gset
INSERT INTO orders VALUES ('$1', 'order-$2', 1999);
SELECT idem.complete('$1', :'handle', :attempt, 201, '{}'::jsonb, convert_to('$3', 'UTF8'), order_id => 'order-$2');
COMMIT;
SQL
  q "SELECT outcome || ' ' || response_status || ' ' || convert_from(response_body, 'UTF8') || ' ' || order_id
       FROM idem.acquire('$1', '$2', '{\"amount_cents\":1999}'::jsonb, caller => 'checkout', resource => 'cart')"
}
for t in "$t1" "$t2"; do
  check "acquire + order + complete in one transaction, then a replay ($t)" "replay 201 order one order-key-$t-0001" \
    "$(one_transaction "$t" "key-$t-0001" "order one")"
  check "a different body under the key is refused ($t)" "mismatch" \
    "$(q "SELECT outcome FROM idem.acquire('$t', 'key-$t-0001', '{\"amount_cents\":1}'::jsonb, caller => 'checkout', resource => 'cart')")"
  check "one order, one completed audit row ($t)" "1 1" \
    "$(q "SELECT (SELECT count(*) FROM orders WHERE tenant_id = '$t') || ' ' || (SELECT count(*) FROM idem.mutations WHERE tenant_id = '$t' AND outcome = 'completed')")"
done
# The record's rules are a trigger's (record_invariants.cpp), which fires on the shards: it once
# knew its tables only by their bare names, and shards went unchecked, without purge_after.
check_has "a write that breaks a record's rule is refused on the shard" 'violates check constraint "keys_response_status_check"' \
  "$(q "UPDATE idem.keys SET response_status = 1000 WHERE tenant_id = '$t1' AND client_key = 'key-$t1-0001'")"
check "... and a record written on a shard has its purge_after" "0" \
  "$(q "SELECT count(*) FROM idem.keys WHERE expires_at IS NOT NULL AND purge_after IS NULL")"
check "every shard of idem.keys is on a worker" "0" \
  "$(q "SELECT count(*) FROM pg_dist_shard_placement p JOIN pg_dist_shard s USING (shardid)
         WHERE s.logicalrelid = 'idem.keys'::regclass AND p.nodeport NOT IN ($(port_of worker1), $(port_of worker2))")"
check "each record is in its tenant's shard, on its tenant's worker" "$(q "SELECT count(*) FROM idem.keys")" \
  "$(q "SELECT sum(result::int) FROM run_command_on_placements('idem.keys', \$\$SELECT count(*) FROM %s\$\$)")"

# Two sessions on one key: the second is told in_progress at once (never blocked), then replays.
session_open a
session_open b
key="key-$t1-0002"
out=$(session_run a "BEGIN; SELECT outcome, handle, attempt FROM idem.acquire('$t1', '$key', '{\"n\":2}'::jsonb) \\gset
\\echo :outcome")
check "session A acquires the key" "acquired" "$out"
start=$(date +%s%N)
out=$(session_run b "SELECT outcome FROM idem.acquire('$t1', '$key', '{\"n\":2}'::jsonb);")
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
check "session B is told in_progress while A holds it" "in_progress" "$out"
check "session B was answered without waiting for A (under 2 s)" "yes" "$([ "$elapsed_ms" -lt 2000 ] && echo yes)"
out=$(session_run a "SELECT idem.complete('$t1', :'handle', :attempt, 200, '{}'::jsonb, 'two'::bytea); COMMIT;")
check "session A completes and commits" "" "$(error_of "$out")"
check "session B then replays A's response" "replay two" \
  "$(session_run b "SELECT outcome || ' ' || convert_from(response_body, 'UTF8') FROM idem.acquire('$t1', '$key', '{\"n\":2}'::jsonb);")"

# A rolled-back attempt leaves nothing: the next acquire is a fresh one.
session_run a "BEGIN; SELECT handle, attempt FROM idem.acquire('$t2', 'key-$t2-0003', '{}'::jsonb) \\gset
INSERT INTO orders VALUES ('$t2', 'order-rolled-back', 1); ROLLBACK;" >/dev/null
# (Each entry point is called alone in its statement: Citus runs only a bare SELECT f(...) on the
# tenant's node. A call inside a larger query runs here, and is refused: ERR_TENANT_NOT_LOCAL.)
check "after a rollback no order was written" "0" "$(q "SELECT count(*) FROM orders WHERE order_id = 'order-rolled-back'")"
check "... and the key is new again" "acquired" "$(q "SELECT outcome FROM idem.acquire('$t2', 'key-$t2-0003', '{}'::jsonb)")"
out=$(q "WITH a AS MATERIALIZED (SELECT * FROM idem.acquire('$t2', 'key-$t2-0003', '{}'::jsonb)) SELECT outcome FROM a")
check "an acquire inside a larger query (not delegated) is refused: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"

# A handle-only call made through the coordinator would take its lock on the coordinator.
out=$(q "SELECT idem.complete(handle, attempt, 200, '{}'::jsonb, ''::bytea) FROM idem.acquire('$t2', 'key-$t2-0004', '{}'::jsonb)")
check "complete(handle, ...) through the coordinator: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
check "... and nothing was acquired or completed" "0" "$(q "SELECT count(*) FROM idem.keys WHERE client_key = 'key-$t2-0004'")"
h=$(q "SELECT handle FROM idem.acquire('$t2', 'key-$t2-0005', '{}'::jsonb)")
a=$(q "SELECT attempt FROM idem.keys WHERE client_key = 'key-$t2-0005'")
out=$(q "SELECT idem.complete('$t1', '$h', $a, 200, '{}'::jsonb, ''::bytea)")
check "complete with another tenant than the handle's: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
out=$(q "SELECT idem.checkpoint('$t2', '$h', $a, 'charge_created', '{\"charge\":\"ch_1\"}')")
check "tenant-first checkpoint runs on the tenant's node" "" "$(error_of "$out")"
out=$(q "SELECT idem.checkpoint('$h', $a, 'charge_created', '{\"charge\":\"ch_1\"}')")
check "checkpoint(handle, ...) through the coordinator: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
q "SELECT idem.release('$t2', '$h', $a, 'processor timeout')" >/dev/null
check "tenant-first release runs on the tenant's node" "released charge_created" \
  "$(q "SELECT status || ' ' || recovery_point FROM idem.keys WHERE client_key = 'key-$t2-0005'")"
# The operator's calls: handle-only through the coordinator refused, tenant-first on the tenant's node.
out=$(q "SELECT idem.resolve_stuck('$h', $a, 'charge ch_1 verified at the processor', 201, convert_to('paid', 'UTF8'), '{}'::jsonb)")
check "resolve_stuck(handle, ...) through the coordinator: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
out=$(q "SELECT idem.resolve_stuck('$t1', '$h', $a, 'charge ch_1 verified at the processor', 201, convert_to('paid', 'UTF8'), '{}'::jsonb)")
check "resolve_stuck with another tenant than the handle's: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
q "SELECT idem.resolve_stuck('$t2', '$h', $a, 'charge ch_1 verified at the processor', 201, convert_to('paid', 'UTF8'), '{}'::jsonb)" >/dev/null
check "tenant-first resolve_stuck runs on the tenant's node: the key replays the operator's response" "replay 201 paid" \
  "$(q "SELECT outcome || ' ' || response_status || ' ' || convert_from(response_body, 'UTF8') FROM idem.acquire('$t2', 'key-$t2-0005', '{}'::jsonb)")"
check "... logged once in operator_actions" "1" "$(q "SELECT count(*) FROM idem.operator_actions WHERE tenant_id = '$t2' AND reason = 'charge ch_1 verified at the processor'")"
h=$(q "SELECT handle FROM idem.acquire('$t2', 'key-$t2-0006', '{}'::jsonb)")
a=$(q "SELECT attempt FROM idem.keys WHERE client_key = 'key-$t2-0006'")
out=$(q "SELECT status FROM idem.retry_stuck('$h', $a, 'holder gone')")
check "retry_stuck(handle, ...) through the coordinator: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
check "tenant-first retry_stuck runs on the tenant's node and ends the lease now" "in_progress true" \
  "$(q "SELECT status || ' ' || (resumable_at <= clock_timestamp()) FROM idem.retry_stuck('$t2', '$h', $a, 'holder gone')")"
check "... so the next request resumes it" "resumed" "$(q "SELECT outcome FROM idem.acquire('$t2', 'key-$t2-0006', '{}'::jsonb)")"
out=$(q_script 2>&1 <<SQL
BEGIN;
SELECT status FROM idem.retry_stuck('$t2', '$h', $a, 'inside a transaction block');
ROLLBACK;
SQL
)
check "... inside a transaction block (where Citus does not delegate it) it is refused: ERR_TENANT_NOT_LOCAL" \
  "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"

# One tenant's purge, on its node under that node's key locks: two resolved records and one
# abandoned attempt of each tenant, past their TTL; purging t1 leaves t2's.
for t in "$t1" "$t2"; do
  for n in 1 2; do
    q_script >/dev/null 2>&1 <<SQL
SELECT handle, attempt FROM idem.acquire('$t', 'purge-$t-$n', '{}'::jsonb, ttl => '50 milliseconds') \gset
SELECT idem.complete('$t', :'handle', :attempt, 201, '{}'::jsonb, 'x'::bytea);
SQL
  done
  q "SELECT outcome FROM idem.acquire('$t', 'purge-$t-abandoned', '{}'::jsonb, lease => '100 milliseconds', ttl => '50 milliseconds')" >/dev/null
done
sleep 0.3
out=$(q_script 2>&1 <<SQL
BEGIN;
SELECT idem.purge_expired('$t1', 100);
ROLLBACK;
SQL
)
check "purge_expired(tenant) inside a transaction block through the coordinator: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
check "purge_expired('$t1', 100) through the coordinator purges $t1's three records on its node" "3" "$(q "SELECT idem.purge_expired('$t1', 100)")"
check "... leaves $t2's, and keeps $t1's generations" "0 3 3" \
  "$(q "SELECT (SELECT count(*) FROM idem.keys WHERE client_key LIKE 'purge-$t1-%') || ' ' ||
               (SELECT count(*) FROM idem.keys WHERE client_key LIKE 'purge-$t2-%') || ' ' ||
               (SELECT count(*) FROM idem.retired_keys r WHERE r.tenant_id = '$t1' AND r.generation = 1
                   AND r.scope_digest IN (SELECT m.scope_digest FROM idem.mutations m WHERE m.client_key LIKE 'purge-$t1-%'))")"
check "... the abandoned attempt on the record, with an id of worker1's range" "abandoned 1" \
  "$(q "SELECT outcome || ' ' || (mutation_id >> 48) FROM idem.mutations WHERE client_key = 'purge-$t1-abandoned'")"
check "... and a new attempt of a purged key is generation 2" "acquired 2" \
  "$(q "SELECT outcome || ' ' || generation FROM idem.acquire('$t1', 'purge-$t1-1', '{}'::jsonb)")"

# ---- bound roles --------------------------------------------------------------------------------
q "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_citus_svc') THEN
     CREATE ROLE idem_citus_svc LOGIN; END IF; END \$\$; GRANT idem_service TO idem_citus_svc" >/dev/null
q "SELECT idem.bind_tenant('idem_citus_svc', '$t1')" >/dev/null
session_open svc coordinator idem_citus_svc
out=$(session_run svc "SELECT outcome FROM idem.acquire('$t2', 'key-bound-role-0001', '{}'::jsonb);")
check "a role bound to $t1 is refused for $t2 (on the other worker)" "ERR_TENANT_FORBIDDEN" "$(error_of "$out")"
out=$(session_run svc "SELECT outcome FROM idem.acquire('$t1', 'key-bound-role-0002', '{}'::jsonb);")
check "... and acquires for its own tenant" "acquired" "$out"
check "the refused call wrote nothing" "0" "$(q "SELECT count(*) FROM idem.keys WHERE client_key = 'key-bound-role-0001'")"
# SET ROLE to an unbound role: on the tenant's node Citus logs in as that role, so the login
# role's binding is checked on the coordinator, before the call leaves it (a plan made before the
# SET ROLE is made again).
q "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_citus_free') THEN
     CREATE ROLE idem_citus_free LOGIN; END IF; END \$\$; GRANT idem_service TO idem_citus_free; GRANT idem_citus_free TO idem_citus_svc" >/dev/null
session_run svc "PREPARE acquire_other AS SELECT outcome FROM idem.acquire('$t2', 'key-bound-role-0003', '{}'::jsonb);" >/dev/null
out=$(session_run svc "EXECUTE acquire_other;")
check "a prepared acquire for another tenant is refused" "ERR_TENANT_FORBIDDEN" "$(error_of "$out")"
out=$(session_run svc "SET ROLE idem_citus_free; SELECT outcome FROM idem.acquire('$t2', 'key-bound-role-0004', '{}'::jsonb);")
check "under SET ROLE to an unbound role, the login role's binding still refuses $t2" "ERR_TENANT_FORBIDDEN" "$(error_of "$out")"
out=$(session_run svc "EXECUTE acquire_other;")
check "... also for a statement prepared before the SET ROLE" "ERR_TENANT_FORBIDDEN" "$(error_of "$out")"
out=$(session_run svc "BEGIN; SELECT idem.emit('$t2', 'order.created', '{}'); ROLLBACK;")
check "... and for emit" "ERR_TENANT_FORBIDDEN" "$(error_of "$out")"
check "nothing was written for $t2 by the bound role" "0" \
  "$(q "SELECT count(*) FROM idem.keys WHERE client_key IN ('key-bound-role-0003', 'key-bound-role-0004')")"
out=$(session_run svc "SELECT outcome FROM idem.acquire('$t1', 'key-bound-role-0005', '{}'::jsonb);")
check "under SET ROLE the bound role still acts for its own tenant" "acquired" "$out"
out=$(session_run svc "SELECT * FROM idem.citus_distribute();")
check "citus_distribute as a service role: refused" "permission denied" "$(grep -o 'permission denied' <<<"$out" | head -1)"
session_close svc

# A record that exists: a lease taken over, a release, a generation after the TTL (Citus refuses
# a VOLATILE function in an UPDATE of a distributed table: the fencing token is drawn first).
h=$(q "SELECT handle FROM idem.acquire('$t1', 'key-$t1-takeover', '{}'::jsonb, lease => '1 second')")
a=$(q "SELECT attempt FROM idem.keys WHERE client_key = 'key-$t1-takeover'")
sleep 1.2
check "a lease that ran out is taken over (it resumes)" "resumed" "$(q "SELECT outcome FROM idem.acquire('$t1', 'key-$t1-takeover', '{}'::jsonb)")"
out=$(q "SELECT idem.complete('$t1', '$h', $a, 200, '{}'::jsonb, ''::bytea)")
check "the stale holder's complete: ERR_LEASE_LOST" "ERR_LEASE_LOST" "$(error_of "$out")"
h=$(q "SELECT handle FROM idem.acquire('$t2', 'key-$t2-released', '{}'::jsonb)")
a=$(q "SELECT attempt FROM idem.keys WHERE client_key = 'key-$t2-released'")
q "SELECT idem.release('$t2', '$h', $a, 'processor timeout', false)" >/dev/null
check "a released key is acquired again" "acquired" "$(q "SELECT outcome FROM idem.acquire('$t2', 'key-$t2-released', '{}'::jsonb)")"
q_script >/dev/null <<SQL
SELECT handle, attempt FROM idem.acquire('$t2', 'key-$t2-ttl', '{}'::jsonb, ttl => '1 second') \gset
SELECT idem.complete('$t2', :'handle', :attempt, 200, '{}'::jsonb, 'first'::bytea);
SQL
sleep 1.2
check "after its TTL a key starts generation 2" "acquired 2" \
  "$(q "SELECT outcome || ' ' || generation FROM idem.acquire('$t2', 'key-$t2-ttl', '{}'::jsonb)")"

# ---- the outbox: events sequenced at commit on the tenant's node -----------------------------------
q "SELECT idem.create_topic('order.created', 'orders')" >/dev/null
out=$(q_script <<SQL
BEGIN;
SELECT handle, attempt FROM idem.acquire('$t1', 'key-$t1-outbox-01', '{}'::jsonb) \gset
INSERT INTO orders VALUES ('$t1', 'order-outbox-01', 500);
SELECT idem.emit('$t1', 'order.created', '{"order":"order-outbox-01"}');
SELECT idem.complete('$t1', :'handle', :attempt, 201, '{}'::jsonb, 'made'::bytea);
COMMIT;
SQL
)
check "acquire, order, emit and complete commit together through the coordinator" "" "$(error_of "$out")"
check "the event's commit has the group's first position" "1 order-outbox-01" \
  "$(q "SELECT c.position || ' ' || (e.payload->>'order') FROM idem.outbox_commits c JOIN idem.outbox_events e USING (tenant_id, topic, txn_id) WHERE c.tenant_id = '$t1'")"
# A late committer: A emits first and commits last; positions follow the commits.
session_run a "BEGIN; SELECT idem.emit('$t1', 'order.created', '{\"order\":\"emitted-first\"}');" >/dev/null
session_run b "BEGIN; SELECT idem.emit('$t1', 'order.created', '{\"order\":\"emitted-second\"}'); COMMIT;" >/dev/null
session_run a "COMMIT;" >/dev/null
check "positions follow commit order, not emit order" "1 order-outbox-01,2 emitted-second,3 emitted-first" \
  "$(q "SELECT string_agg(c.position || ' ' || (e.payload->>'order'), ',' ORDER BY c.position)
          FROM idem.outbox_commits c JOIN idem.outbox_events e USING (tenant_id, topic, txn_id) WHERE c.tenant_id = '$t1'")"
out=$(q "WITH e AS MATERIALIZED (SELECT idem.emit('$t1', 'order.created', '{}')) SELECT count(*) FROM e")
check "an emit inside a larger query (run on the coordinator) is refused: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
check "... and leaves no event" "3" "$(q "SELECT count(*) FROM idem.outbox_events WHERE tenant_id = '$t1'")"

# ---- the outbox's consumers: one tenant at a time --------------------------------------------------
q "SELECT idem.create_consumer('shipper', ARRAY['order.created'])" >/dev/null
q_script >/dev/null <<SQL
BEGIN; SELECT idem.emit('$t2', 'order.created', '{"order":"t2-first"}'); COMMIT;
BEGIN; SELECT idem.emit('$t2', 'order.created', '{"order":"t2-second"}'); COMMIT;
SQL
check_has "a claim across tenants is refused, naming claim_tenant: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" \
  "$(q "SELECT count(*) FROM idem.claim('shipper')")"
check "outbox_backlog names both tenants' groups (read on every node)" "$(printf '%s\n' "$t1" "$t2" | sort | paste -sd,)" \
  "$(q "SELECT string_agg(tenant_id, ',' ORDER BY tenant_id) FROM idem.outbox_backlog('shipper')")"
check "outbox_lag counts the backlog of both workers" "5" "$(q "SELECT backlog FROM idem.outbox_lag WHERE consumer = 'shipper'")"
claimed=$(q "SELECT string_agg(event_id || ':' || token, ' ' ORDER BY event_id) FROM idem.claim_tenant('shipper', '$t1')")
check "claim_tenant hands out the tenant's events in commit order" "order-outbox-01,emitted-second,emitted-first" \
  "$(q "SELECT string_agg(e.payload->>'order', ',' ORDER BY c.position) FROM idem.outbox_commits c JOIN idem.outbox_events e USING (tenant_id, topic, txn_id)
         WHERE c.tenant_id = '$t1' AND e.event_id IN ($(sed 's/:[^ ]*//g; s/ /,/g' <<<"$claimed"))")"
token=${claimed##*:}
first=${claimed%%:*}
check "a second claim_tenant while the claim is live hands out nothing" "0" "$(q "SELECT count(*) FROM idem.claim_tenant('shipper', '$t1')")"
check "tenant-first consume_once: the first time true" "t" "$(q "SELECT idem.consume_once('shipper', '$t1', $first, '$token')")"
check "... and false for a redelivery" "f" "$(q "SELECT idem.consume_once('shipper', '$t1', $first, '$token')")"
check_has "consume_once with another tenant than the event's: ERR_OUTBOX_EVENT_UNKNOWN" "ERR_OUTBOX_EVENT_UNKNOWN" \
  "$(q "SELECT idem.consume_once('shipper', '$t2', $first, '$token')")"
check "tenant-first ack of the claim's three events" "3" \
  "$(q "SELECT idem.ack('shipper', '$t1', ARRAY[$(sed 's/:[^ ]*//g; s/ /,/g' <<<"$claimed")]::bigint[], '$token')")"
t2claim=$(q "SELECT event_id || ':' || token FROM idem.claim_tenant('shipper', '$t2', batch => 1)")
check "tenant-first nack: the event is retried" "retry" \
  "$(q "SELECT idem.nack('shipper', '$t2', ${t2claim%%:*}, '${t2claim##*:}', 'processor down', interval '0')")"
t2claim=$(q "SELECT string_agg(event_id || ':' || token, ' ' ORDER BY event_id) FROM idem.claim_tenant('shipper', '$t2')")
check "... and handed out again with its successor" "2" "$(wc -w <<<"$t2claim")"
check "the ack without a tenant works through the coordinator too" "2" \
  "$(q "SELECT idem.ack('shipper', ARRAY[$(sed 's/:[^ ]*//g; s/ /,/g' <<<"$t2claim")]::bigint[], '${t2claim##*:}')")"
check "outbox_lag: nothing left" "0" "$(q "SELECT backlog FROM idem.outbox_lag WHERE consumer = 'shipper'")"
check "outbox_backlog: nothing left" "0" "$(q "SELECT count(*) FROM idem.outbox_backlog('shipper')")"
check "purge_outbox through the coordinator deletes the acked events but each group's newest commit" "3" "$(q "SELECT idem.purge_outbox(interval '0')")"
q_script >/dev/null <<SQL
BEGIN; SELECT idem.emit('$t1', 'order.created', '{"order":"after-the-purge"}'); COMMIT;
SQL
check "an emit after the purge takes the group's next position, above the cursor" "4 after-the-purge" \
  "$(q "SELECT c.position || ' ' || (e.payload->>'order') FROM idem.outbox_commits c JOIN idem.outbox_events e USING (tenant_id, topic, txn_id) WHERE c.tenant_id = '$t1' ORDER BY c.position DESC LIMIT 1")"
check "... and is handed out" "after-the-purge" "$(q "SELECT payload->>'order' FROM idem.claim_tenant('shipper', '$t1')")"

# A consumer's tenant calls run on the tenant's node: a claim (or a nack) by itself, and
# consume_once and ack inside the effect's transaction block too (forced delegation), over the
# consumer's own connection, beside its effect's rows (tests/citus/checkout_citus.sh runs the
# demo's consumer as its own role: as the owner's functions routed from here, they collided).
q_script >/dev/null <<SQL
BEGIN; SELECT idem.emit('$t2', 'order.created', '{"order":"t2-delegated"}'); COMMIT;
SQL
remote() { PGOPTIONS="-c client_min_messages=notice -c citus.log_remote_commands=on" psql "$(url_of)" -qAtX 2>&1; }
out=$(remote <<SQL
SELECT event_id, token FROM idem.claim_tenant('shipper', '$t2') \gset
BEGIN;
SELECT idem.consume_once('shipper', '$t2', :event_id, :'token');
SELECT idem.ack('shipper', '$t2', ARRAY[:event_id]::bigint[], :'token');
COMMIT;
SQL
)
check "claim_tenant outside a transaction block is sent whole to the tenant's worker" "1" "$(grep -c 'issuing SELECT event_id, token FROM idem.claim_tenant(' <<<"$out")"
check "... consume_once and ack inside one are sent whole to the tenant's worker too" "1 1" \
  "$(grep -c 'issuing SELECT idem.consume_once(' <<<"$out") $(grep -c 'issuing SELECT idem.ack(' <<<"$out")"
check "... and the event is applied once and acked (consume_once true, ack 1)" "t 1" "$(grep -x -E 't|f|[0-9]+' <<<"$out" | paste -sd' ')"
check "... and nothing of $t2 is left for shipper" "0" "$(q "SELECT count(*) FROM idem.outbox_backlog('shipper') WHERE tenant_id = '$t2'")"
q_script >/dev/null <<SQL
BEGIN; SELECT idem.emit('$t2', 'order.created', '{"order":"t2-nacked"}'); COMMIT;
SQL
out=$(remote <<SQL
SELECT event_id, token FROM idem.claim_tenant('shipper', '$t2') \gset
SELECT idem.nack('shipper', '$t2', :event_id, :'token', 'processor down', interval '1 hour');
SQL
)
check "a nack by itself is sent whole to the tenant's worker, and the event waits for its retry" "1 retry" \
  "$(grep -c 'issuing SELECT idem.nack(' <<<"$out") $(grep -x -E 'retry|dead' <<<"$out")"
started_consumers=$(q "SELECT pg_postmaster_start_time()")
out=$(q "SELECT count(*) FROM (SELECT * FROM idem.claim_tenant('shipper', '$t2')) c")
check "a claim_tenant inside a larger query: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
out=$(q_script 2>&1 <<SQL
BEGIN;
SELECT 'applied' WHERE idem.consume_once('shipper', '$t1', (SELECT max(event_id) FROM idem.outbox_events WHERE tenant_id = '$t1'), '00000000-0000-4000-8000-000000000001');
ROLLBACK;
SQL
)
# Citus crashed the coordinator on this one (signal 11) when the hook let it through.
check "consume_once in a WHERE clause (one node's idiom): ERR_TENANT_NOT_LOCAL, call it alone on Citus" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
check "... and the coordinator did not restart" "$started_consumers" "$(q "SELECT pg_postmaster_start_time()")"

# A role bound to a consumer: refused for another consumer on the tenant's node, and under SET
# ROLE to an unbound role the login role's consumer binding is checked before the call leaves.
q "SELECT idem.create_consumer('billing', ARRAY['order.created'])" >/dev/null
q "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_citus_billing') THEN
     CREATE ROLE idem_citus_billing LOGIN; END IF;
     IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'idem_citus_anyone') THEN
     CREATE ROLE idem_citus_anyone LOGIN; END IF; END \$\$;
   GRANT idem_consumer TO idem_citus_billing, idem_citus_anyone; GRANT idem_citus_anyone TO idem_citus_billing" >/dev/null
q "SELECT idem.bind_consumer('idem_citus_billing', 'billing')" >/dev/null
session_open cons coordinator idem_citus_billing
out=$(session_run cons "SELECT count(*) FROM idem.claim_tenant('shipper', '$t1');")
check "a role bound to consumer billing is refused claim_tenant for shipper" "ERR_CONSUMER_FORBIDDEN" "$(error_of "$out")"
out=$(session_run cons "SELECT count(*) FROM idem.claim_tenant('billing', '$t1');")
check "... and claims for billing" "" "$(error_of "$out")"
out=$(session_run cons "SET ROLE idem_citus_anyone; SELECT count(*) FROM idem.claim_tenant('shipper', '$t1');")
check "under SET ROLE to an unbound role, the login role's consumer binding still refuses shipper" "ERR_CONSUMER_FORBIDDEN" "$(error_of "$out")"
out=$(session_run cons "SELECT count(*) FROM idem.claim_tenant(concat('ship', 'per'), '$t1');")
check "... also when the consumer is an expression left for the worker to evaluate" "ERR_CONSUMER_FORBIDDEN" "$(error_of "$out")"
out=$(session_run cons "SELECT idem.ack('shipper', '$t1', ARRAY[1]::bigint[], '00000000-0000-4000-8000-000000000001');")
check "... and refuses the tenant-first ack for shipper" "ERR_CONSUMER_FORBIDDEN" "$(error_of "$out")"
out=$(session_run cons "SELECT idem.nack('shipper', '$t1', 1, '00000000-0000-4000-8000-000000000001', 'x', NULL);")
check "... and the tenant-first nack" "ERR_CONSUMER_FORBIDDEN" "$(error_of "$out")"
out=$(session_run cons "SELECT idem.consume_once('shipper', '$t1', 1, '00000000-0000-4000-8000-000000000001');")
check "... and the tenant-first consume_once" "ERR_CONSUMER_FORBIDDEN" "$(error_of "$out")"
session_close cons

# ---- the C++ client with ClientOptions::citus ------------------------------------------------------
q "SELECT idem.create_topic('client.citus', 'orders')" >/dev/null
q "SELECT idem.create_consumer('client-citus', ARRAY['client.citus'])" >/dev/null
"$ROOT/build/client_citus" "$(url_of)" "$t2" "$t1"
check "the client's Citus mode (build/client_citus, its checks above)" "0" "$?"

# ---- a NULL tenant ------------------------------------------------------------------------------
started=$(q "SELECT pg_postmaster_start_time()")
out=$(q "SELECT outcome FROM idem.acquire(NULL, 'key-null-tenant-0001', '{}'::jsonb)")
check "acquire with a NULL tenant: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
out=$(q "SELECT idem.complete(tenant => NULL, handle => 'x', attempt => 1, status => 200, headers => '{}', body => '')")
check "complete(tenant => NULL, ...): ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
out=$(PGOPTIONS="-c client_min_messages=warning" psql "$(url_of)" -qAtX 2>&1 <<'SQL'
PREPARE acquire_for(text) AS SELECT outcome FROM idem.acquire($1, 'key-null-tenant-0002', '{}'::jsonb);
EXECUTE acquire_for(NULL);
SQL
)
check "a prepared acquire bound to a NULL tenant: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
q "CREATE FUNCTION public.no_tenant() RETURNS text LANGUAGE sql RETURN NULL::text" >/dev/null
for form in "CAST(NULL AS varchar)::text" "(NULL::varchar)::text" "nullif('x', 'x')" "lower(NULL)" "public.no_tenant()"; do
  out=$(q "SELECT outcome FROM idem.acquire($form, 'key-null-tenant-0003', '{}'::jsonb)")
  check "acquire with the tenant $form: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
done
for call in "idem.complete(NULL::varchar::text, 'x', 1, 200, '{}', '')" "idem.checkpoint(NULL::varchar::text, 'x', 1, 'p')" \
            "idem.release(NULL::varchar::text, 'x', 1)" "idem.emit(NULL::varchar::text, 'order.created', '{}')" \
            "idem.acquire(key => 'key-null-tenant-0004', payload => '{}'::jsonb, tenant => NULL::varchar::text)" \
            "idem.claim_tenant('shipper', NULL::varchar::text)" "idem.claim_tenant(tenant => lower(NULL), consumer => 'shipper')" \
            "idem.ack('shipper', NULL::varchar::text, ARRAY[1]::bigint[], '00000000-0000-4000-8000-000000000001')" \
            "idem.nack('shipper', nullif('x', 'x'), 1, '00000000-0000-4000-8000-000000000001', 'x', NULL)" \
            "idem.consume_once('shipper', public.no_tenant(), 1, '00000000-0000-4000-8000-000000000001')"; do
  out=$(q "SELECT $call")
  check "$call: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
done
out=$(q "DO \$\$ DECLARE t text; r record; BEGIN SELECT * INTO r FROM idem.acquire(t, 'key-null-tenant-0005', '{}'::jsonb); END \$\$")
check "a PL/pgSQL variable that is NULL: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
check "the coordinator did not restart" "$started" "$(q "SELECT pg_postmaster_start_time()")"
started_w1=$(q worker1 "SELECT pg_postmaster_start_time()")
out=$(q worker1 "SELECT outcome FROM idem.acquire((NULL::varchar)::text, 'key-null-tenant-0006', '{}'::jsonb)")
check "on a worker too: ERR_ARGUMENT_INVALID" "ERR_ARGUMENT_INVALID" "$(error_of "$out")"
check "... and the worker did not restart" "$started_w1" "$(q worker1 "SELECT pg_postmaster_start_time()")"
# A call in a FROM subquery is not delegated, and Citus crashed the coordinator on it.
out=$(q "SELECT * FROM (SELECT * FROM idem.acquire('$t1', 'key-$t1-subquery', '{}'::jsonb)) s")
check "an acquire in a FROM subquery: ERR_TENANT_NOT_LOCAL" "ERR_TENANT_NOT_LOCAL" "$(error_of "$out")"
check "... and the coordinator did not restart" "$started" "$(q "SELECT pg_postmaster_start_time()")"

# ---- ids ----------------------------------------------------------------------------------------
check "audit ids are distinct across the nodes" "0" \
  "$(q "SELECT count(*) - count(DISTINCT mutation_id) FROM idem.mutations")"
check "each worker's audit ids lie in its own range (group id << 48)" "0" \
  "$(q "SELECT count(*) FROM idem.mutations m JOIN pg_dist_shard_placement p
          ON p.shardid = get_shard_id_for_distribution_column('idem.mutations', m.tenant_id)
          JOIN pg_dist_node n ON n.nodeport = p.nodeport
         WHERE m.mutation_id >> 48 <> n.groupid")"

if [ "${CITUS_SMOKE:-0}" != 1 ]; then
  source "$ROOT/tests/citus/citus_long.sh"
fi

# ---- a worker down: every call of the other worker's tenants goes on ----------------------------
# A statement that reads a shard of another tenant (a subquery Citus plans over every shard)
# would fail here with "connection to the remote node".
# A consumer for the backlog probe below (consumers are a reference table: worker2 must be up).
q "SELECT idem.create_consumer('probe-citus', ARRAY['order.created'])" >/dev/null
# Its lag as each worker counts its own shards, and through the coordinator.
lag_of() { q "$@" | tr -d ' '; }
lag_w1=$(lag_of worker1 "SELECT sum(backlog) FROM idem._outbox_lag_here() WHERE consumer = 'probe-citus'")
lag_w2=$(lag_of worker2 "SELECT sum(backlog) FROM idem._outbox_lag_here() WHERE consumer = 'probe-citus'")
check "outbox_lag through the coordinator is what the workers count on their own shards, each some" \
  "$((lag_w1 + lag_w2))|0 yes" "$(q "SELECT backlog || '|' || nodes_not_counted FROM idem.outbox_lag WHERE consumer = 'probe-citus'") $([ "$lag_w1" -gt 0 ] && [ "$lag_w2" -gt 0 ] && echo yes)"
bash -c "$(node_ctl_command worker2 stop)"
check "with worker2 down outbox_lag counts worker1's groups, and one node not counted" "$lag_w1|1" \
  "$(q "SELECT backlog || '|' || nodes_not_counted FROM idem.outbox_lag WHERE consumer = 'probe-citus'" | grep -v '^WARNING\|^DETAIL')"
check_has "... naming the node in a warning" "idem.outbox_lag: node" "$(q "SELECT count(*) FROM idem.outbox_lag")"
check "with worker2 down: the one-transaction flow and its replay ($t1)" "replay 201 while down order-key-$t1-down-0001" \
  "$(one_transaction "$t1" "key-$t1-down-0001" "while down")"
out=$(q_script 2>&1 <<SQL
SELECT handle, attempt FROM idem.acquire('$t1', 'key-$t1-down-0002', '{}'::jsonb) \gset
SELECT idem.checkpoint('$t1', :'handle', :attempt, 'charge_created', '{"charge":"ch_9"}') AS checkpointed \gset
SELECT idem.handler_key('$t1', :'handle', :attempt) AS processor_key \gset
SELECT idem.release('$t1', :'handle', :attempt, 'processor timeout') AS released \gset
SELECT outcome, handle AS handle2, attempt AS attempt2 FROM idem.acquire('$t1', 'key-$t1-down-0002', '{}'::jsonb) \gset
SELECT idem.complete('$t1', :'handle2', :attempt2, 200, '{}'::jsonb, convert_to('captured', 'UTF8')) AS completed \gset
SELECT outcome || ' ' || convert_from(response_body, 'UTF8') AS replayed FROM idem.acquire('$t1', 'key-$t1-down-0002', '{}'::jsonb) \gset
SELECT idem.emit('$t1', 'order.created', '{"order":"down"}') AS event \gset
SELECT idem.purge_expired('$t1', 10) AS purged \gset
\echo :outcome / :replayed / :purged
SELECT length(:'processor_key') > 0 AND :event > 0;
SQL
)
check "... a lease: checkpoint, handler_key, release, resume, complete, replay; emit; purge_expired(tenant)" \
  "$(printf 'resumed / replay captured / 0\nt')" "$out"
check "... and nothing of it reached for worker2" "" "$(grep -o 'remote node[^:]*' <<<"$out")"
# The backlog's fallback (a node down) under a session's own DateStyle and TimeZone: a group
# nacked for an hour must stay out (the nodes once read "now" as this session's text, 3.5 h on).
read -r ev tok <<<"$(q "SELECT event_id || ' ' || token FROM idem.claim_tenant('probe-citus', '$t1', batch => 1000) LIMIT 1")"
check "... a claim and a nack of $t1's group" "retry" \
  "$(q "SELECT idem.nack('probe-citus', '$t1', $ev, '$tok', 'retry later', interval '1 hour')")"
backlog_in() { q "$1 SELECT coalesce(string_agg(tenant_id, ',' ORDER BY tenant_id), '') FROM idem.outbox_backlog('probe-citus')" | grep -v '^WARNING\|^DETAIL'; }
default=$(backlog_in "")
check "... the backlog with worker2 down is the same in any DateStyle and TimeZone" "$default|$default" \
  "$(backlog_in "SET DateStyle = 'Postgres, MDY'; SET TimeZone = 'Asia/Kolkata';")|$(backlog_in "SET DateStyle = 'SQL, DMY';")"
check "... and leaves out the group nacked for an hour" "0" "$(tr ',' '\n' <<<"$default" | grep -cx -- "$t1")"
without_sessions bash -c "$(node_ctl_command worker2 start)"
check "worker2 is back" "1" "$(q worker2 "SELECT 1")"
# Inside one transaction block, worker2 stopping and starting between the reads: the per-node
# reads go over connections of their own (a query over every shard failed at the savepoint of
# the block it ran in, and the transaction at COMMIT: "failure on connection marked as essential").
up=$(q "SELECT count(*) FROM idem.outbox_backlog('probe-citus')")
down=$(tr ',' '\n' <<<"$default" | grep -c .)
out=$(q_script 2>&1 <<SQL
BEGIN;
SELECT 'up ' || count(*) FROM idem.outbox_backlog('probe-citus');
\! bash -c "$(node_ctl_command worker2 stop)"
SELECT 'down ' || nodes_not_counted FROM idem.outbox_lag WHERE consumer = 'probe-citus';
SELECT 'down ' || count(*) FROM idem.outbox_backlog('probe-citus');
\! bash -c "$(node_ctl_command worker2 start)"
SELECT 'back ' || nodes_not_counted FROM idem.outbox_lag WHERE consumer = 'probe-citus';
COMMIT;
SELECT 'committed';
SQL
)
check "in one transaction block: backlog and lag read while worker2 stops and starts, then COMMIT" \
  "up $up|down 1|down $down|back 0|committed|" "$(grep -v '^WARNING\|^DETAIL' <<<"$out" | tr '\n' '|')"
check "worker2 is back again" "1" "$(q worker2 "SELECT 1")"

# ---- the outbox consumer while the nodes change -------------------------------------------------
# worker2 stops between two polls and starts again (tests/citus/consumer_nodes.cpp).
q "SELECT idem.create_topic('nodes.citus', 'orders')" >/dev/null
q "SELECT idem.create_consumer('nodes-citus', ARRAY['nodes.citus'])" >/dev/null
without_sessions "$ROOT/build/consumer_nodes" stopped "$(url_of)" "$t1" "$t2" \
  "$(node_ctl_command worker2 stop)" "$(node_ctl_command worker2 start)"
check "the consumer while a worker stops and starts (build/consumer_nodes stopped, its checks above)" "0" "$?"
check "worker2 is running again" "1" "$(q worker2 "SELECT 1")"
# worker2's postmaster held (accepts, never answers) while a consumer starts; the program has two
# minutes to end (a listener connect without a timeout waited for ever), and worker2 goes on after.
without_sessions timeout 120 "$ROOT/build/consumer_nodes" hung "$(url_of)" "$t1" "$t2" \
  "$(node_ctl_command worker2 hang)" "$(node_ctl_command worker2 resume)"
rc=$?
bash -c "$(node_ctl_command worker2 resume)"
check "the consumer while a worker hangs (build/consumer_nodes hung, its checks above)" "0" "$rc"
check "worker2 answers again" "1" "$(q worker2 "SELECT 1")"
# A worker joins after the consumer connected: a database of its own, made a cluster of the
# coordinator and worker1 alone; worker2 is added mid-test and a tenant's shards moved to it.
nodes_db=idem_citus_nodes
"$ROOT/scripts/citus.sh" drop-database "$nodes_db"
for node in coordinator worker1 worker2; do
  DB=postgres q "$node" "CREATE DATABASE $nodes_db" >/dev/null
  DB=$nodes_db q "$node" "CREATE EXTENSION citus" >/dev/null
done
DB=$nodes_db q "SELECT citus_set_coordinator_host('127.0.0.1', $(port_of coordinator))" >/dev/null
DB=$nodes_db q "SELECT citus_add_node('127.0.0.1', $(port_of worker1))" >/dev/null
DB=$nodes_db q "CREATE EXTENSION pg_idempotency" >/dev/null
check "a cluster of the coordinator and worker1, distributed" "36" "$(DB=$nodes_db q "SELECT count(*) FROM idem.citus_distribute()")"
DB=$nodes_db q "SELECT idem.create_topic('nodes.citus', 'orders')" >/dev/null
DB=$nodes_db q "SELECT idem.create_consumer('nodes-citus', ARRAY['nodes.citus'])" >/dev/null
"$ROOT/build/consumer_nodes" added "$(DB=$nodes_db url_of)" tenant-1 "$(DB=$nodes_db url_of worker2)"
check "the consumer when a worker joins later (build/consumer_nodes added, its checks above)" "0" "$?"
"$ROOT/scripts/citus.sh" drop-database "$nodes_db"

session_close a
session_close b
finish citus_test
