# shellcheck shell=bash
# The slow parts of tests/citus/citus_test.sh (make citus-test; make test's smoke leaves them
# out): a shard move, a worker killed mid-transaction, a duplicate storm. Sourced by it: uses its
# checks, sessions, tenants t1 (worker1) and t2 (worker2), and the orders table.

# ---- a shard move --------------------------------------------------------------------------------
# A consumer that has acked all of t1's events before the move (claimed on the worker, acked on
# the coordinator): after it, its states are written on another node, and must still be newest.
q "SELECT idem.create_consumer('mover', ARRAY['order.created'])" >/dev/null
ack_claim() { # ack_claim CONSUMER TENANT: claims the tenant's events, acks them in a transaction; prints the count acked
  local c
  c=$(q "SELECT string_agg(event_id::text, ',') || ' ' || min(token::text) FROM idem.claim_tenant('$1', '$2')")
  [ -n "$c" ] || { echo 0; return; }
  q_script 2>&1 <<SQL | grep -x -E '[0-9]+'
BEGIN;
SELECT idem.ack('$1', '$2', ARRAY[${c% *}]::bigint[], '${c#* }');
COMMIT;
SQL
}
moved_before=$(ack_claim mover "$t1")
check "before the move, a new consumer claims and acks every event of $t1" "0" \
  "$(q "SELECT count(*) FROM idem.outbox_backlog('mover') WHERE tenant_id = '$t1'")"
shard=$(q "SELECT get_shard_id_for_distribution_column('idem.keys', '$t1')")
out=$(q "SELECT citus_move_shard_placement($shard, '127.0.0.1', $(port_of worker1), '127.0.0.1', $(port_of worker2), shard_transfer_mode => 'block_writes')")
check "citus_move_shard_placement moves $t1's shards to worker2" "$(port_of worker2)" \
  "$(q "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = $shard")"
check "after the move, a record of $t1 replays as before" "replay 201 order one order-key-$t1-0001" \
  "$(q "SELECT outcome || ' ' || response_status || ' ' || convert_from(response_body, 'UTF8') || ' ' || order_id
          FROM idem.acquire('$t1', 'key-$t1-0001', '{\"amount_cents\":1999}'::jsonb, caller => 'checkout', resource => 'cart')")"
check "... keeps its generation" "1" "$(q "SELECT generation FROM idem.keys WHERE client_key = 'key-$t1-0001'")"
check "... and a new key runs once on its new node" "replay 201 order moved order-key-$t1-0010" "$(one_transaction "$t1" "key-$t1-0010" "order moved")"
check "the new audit row's id is the new node's (worker2's range)" "2" \
  "$(q "SELECT DISTINCT mutation_id >> 48 FROM idem.mutations WHERE client_key = 'key-$t1-0010'")"
check "ids stay distinct after the move" "0" "$(q "SELECT count(*) - count(DISTINCT (tenant_id, mutation_id)) FROM idem.mutations")"
q "SELECT idem.emit('$t1', 'order.created', '{\"order\":\"after-the-move\"}')" >/dev/null
check "an emit after the move takes the group's next position (no node-wide sequence to fall behind)" "5 after-the-move" \
  "$(q "SELECT c.position || ' ' || (e.payload->>'order') FROM idem.outbox_commits c JOIN idem.outbox_events e USING (tenant_id, topic, txn_id)
         WHERE c.tenant_id = '$t1' ORDER BY c.position DESC LIMIT 1")"
got=$(q "SELECT string_agg(payload->>'order', ',') FROM idem.claim_tenant('mover', '$t1', batch => 10, visibility => '1 second')")
check "after the move, claim_tenant (on the new node) hands out only the new event" "after-the-move" "$got"
sleep 1.2
check "... again after its visibility ran out, then the ack (on the coordinator) takes" "1" "$(ack_claim mover "$t1")"
check "... and nothing of $t1 is left for the consumer ($moved_before acked before the move)" "0" \
  "$(q "SELECT count(*) FROM idem.outbox_backlog('mover') WHERE tenant_id = '$t1'")"
# Back to worker1 for what follows, once Citus has dropped the shards the move left on worker1
# (until then a move there is refused).
move_back() {
  q "CALL citus_cleanup_orphaned_resources()" >/dev/null
  q "SELECT citus_move_shard_placement($shard, '127.0.0.1', $(port_of worker2), '127.0.0.1', $(port_of worker1), shard_transfer_mode => 'block_writes')" >/dev/null
  check "$1" "$(port_of worker1)" "$(q "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = $shard")"
}
move_back "... and back to worker1"

# A move while a transaction has written the tenant's shards through the fast path (which writes
# them as plain tables, taking the lock Citus's executor takes): the move must wait for its
# commit, or the rows it commits stay in the shard left behind and a retry charges again.
# Session A writes a new key, its order and its completion, and holds its transaction open; the
# move waits; A commits; the move then goes through, carrying A's rows. (A statement of A's after
# the move began would wait for the move's lock on the coordinator: Citus then finds the
# distributed deadlock and cancels the move, as it does for its own writes.)
key="key-$t1-during-move"
session_open mv
out=$(session_run mv "BEGIN; SELECT handle, attempt FROM idem.acquire('$t1', '$key', '{\"amount_cents\":1999}'::jsonb, caller => 'checkout', resource => 'cart') \gset
INSERT INTO orders VALUES ('$t1', 'order-$key', 1999);
SELECT idem.complete('$t1', :'handle', :attempt, 201, '{}'::jsonb, convert_to('order during move', 'UTF8'), order_id => 'order-$key');
SELECT 'held';")
check "session A wrote a new key of $t1 on worker1, its order and its completion, its transaction open" "held" "$(tail -1 <<<"$out")"
q "CALL citus_cleanup_orphaned_resources()" >/dev/null
( q "SELECT citus_move_shard_placement($shard, '127.0.0.1', $(port_of worker1), '127.0.0.1', $(port_of worker2), shard_transfer_mode => 'block_writes')" \
    >"$session_dir/move.out" 2>&1 ) &
mover=$!
sleep 2
check "the move waits for A's transaction" "$(port_of worker1) running" \
  "$(q "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = $shard") $(kill -0 "$mover" 2>/dev/null && echo running)"
check "... A commits" "committed" "$(session_run mv "COMMIT; SELECT 'committed';")"
wait "$mover"
check "... then the move goes through" "$(port_of worker2)" "$(q "SELECT nodeport FROM pg_dist_shard_placement WHERE shardid = $shard")"
check "A's key replays on the tenant's new node: nothing of it was left behind" "replay 201 order during move order-$key" \
  "$(q "SELECT outcome || ' ' || response_status || ' ' || convert_from(response_body, 'UTF8') || ' ' || order_id
          FROM idem.acquire('$t1', '$key', '{\"amount_cents\":1999}'::jsonb, caller => 'checkout', resource => 'cart')")"
check "... with its order and its completed audit row there" "1 1" \
  "$(q "SELECT (SELECT count(*) FROM orders WHERE order_id = 'order-$key') || ' ' || (SELECT count(*) FROM idem.mutations WHERE client_key = '$key' AND outcome = 'completed')")"
# The old node no longer holds the tenant, though its shard's tables linger there until Citus's
# cleanup drops them: the fast path's route there (what it checks before it writes a shard as a
# plain table) says so, from the placement, not from the table's name. (A call on worker1 is
# delegated by Citus to worker2, which holds the shard.)
check "on worker1 after the move, the route of $t1 is not local" "f" "$(q worker1 "SELECT is_local FROM idem._citus_shard_route('$t1')")"
check "... nor does the outbox's commit-time sequencing find a shard of $t1 there" "ERR_TENANT_NOT_LOCAL" \
  "$(error_of "$(q worker1 "SELECT idem._citus_local_shard('idem.outbox_events', '$t1')")")"
check "... on worker2 it is, naming the shards" "true $(q "SELECT shard_name('idem.keys', $shard)")" \
  "$(q worker2 "SELECT is_local || ' ' || keys_shard FROM idem._citus_shard_route('$t1')")"
session_close mv
move_back "$t1's shards back to worker1 after it"

# ---- a worker killed mid-transaction ------------------------------------------------------------
key="key-$t2-killed-01"
out=$(session_run a "BEGIN; SELECT outcome FROM idem.acquire('$t2', '$key', '{\"n\":9}'::jsonb);")
check "session A acquires a key of $t2 (worker2) in an open transaction" "acquired" "$out"
victim=$(q worker2 "SELECT pid FROM pg_stat_activity WHERE datname = '$DB' AND state = 'idle in transaction' AND pid <> pg_backend_pid() LIMIT 1")
kill -9 "$victim" 2>/dev/null
for _ in $(seq 60); do q worker2 "SELECT 1" >/dev/null 2>&1 && break; sleep 0.5; done
out=$(session_run a "COMMIT;")
check "A's commit fails: its worker's backend was killed" "yes" "$(grep -qiE 'error|terminat|closed|lost' <<<"$out" && echo yes)"
session_run a "ROLLBACK;" >/dev/null
check "after the worker's recovery the key was never taken: a new attempt acquires it" "acquired 1" \
  "$(q "SELECT outcome || ' ' || generation FROM idem.acquire('$t2', '$key', '{\"n\":9}'::jsonb)")"
check "the killed attempt left no audit row" "0" "$(q "SELECT count(*) FROM idem.mutations WHERE client_key = '$key' AND outcome = 'completed'")"
check "no prepared transaction is left behind on the workers" "0 0" \
  "$(q worker1 "SELECT count(*) FROM pg_prepared_xacts") $(q worker2 "SELECT count(*) FROM pg_prepared_xacts")"

# ---- a duplicate storm over tenants on both workers ----------------------------------------------
# 8 clients, 40 keys per tenant, each transaction: acquire; on acquired, the order and complete.
storm=$session_dir/storm
for t in "$t1" "$t2"; do
  cat >"$storm-$t.sql" <<SQL
\\set k random(1, 40)
BEGIN;
SELECT (outcome = 'acquired')::int AS won, handle, attempt FROM idem.acquire('$t', 'storm-key-000000:k', '{"k": :k}'::jsonb, caller => 'storm', resource => 'cart') \\gset
\\if :won
INSERT INTO orders VALUES ('$t', 'storm-:k', 1);
SELECT idem.complete('$t', ':handle', :attempt, 201, '{}'::jsonb, 'stormed'::bytea);
\\endif
END;
SQL
done
"$bin/pgbench" -n -M simple -c 8 -j 2 -t 40 -f "$storm-$t1.sql" -f "$storm-$t2.sql" "$(url_of)" >"$storm.log" 2>&1
check "the storm ran (pgbench)" "0" "$?"
# Two winners of one key would both insert its order: the second on the primary key would abort
# its client. Every transaction of every client ran.
check "all 320 storm transactions ran, none aborted" "320 0" \
  "$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$storm.log") $(grep -c 'aborted' "$storm.log")"
check "every storm key completed at most once: one order per key" "0" \
  "$(q "SELECT count(*) FROM (SELECT tenant_id, order_id FROM orders WHERE order_id LIKE 'storm-%' GROUP BY 1, 2 HAVING count(*) > 1) d")"
check "one completed audit row per resolved storm key, and one order each" "yes" \
  "$(q "SELECT (SELECT count(*) FROM idem.mutations WHERE caller_id = 'storm' AND outcome = 'completed')
             = (SELECT count(*) FROM idem.keys WHERE caller_id = 'storm' AND status = 'resolved')
         AND (SELECT count(*) FROM idem.keys WHERE caller_id = 'storm' AND status = 'resolved')
             = (SELECT count(*) FROM orders WHERE order_id LIKE 'storm-%')
         AND (SELECT count(*) FROM orders WHERE order_id LIKE 'storm-%') > 40" | sed 's/^t$/yes/')"
check "no storm key is left in progress" "0" "$(q "SELECT count(*) FROM idem.keys WHERE caller_id = 'storm' AND status = 'in_progress'")"

# ---- citus_distribute refuses a cluster it cannot guard -----------------------------------------
# worker2 restarted without pg_idempotency preloaded: its planner hook would not stand in front of
# Citus's there, and a NULL tenant would crash it.
data2=$(readlink -f "$ROOT/.citus")/worker2/data
pg_bin=$(readlink -f "$ROOT/build/pg-install")/usr/lib/postgresql/15/bin
as_postgres() { if [ "$(id -u)" -eq 0 ]; then (cd / && runuser -u postgres -- "$@"); else "$@"; fi; }
without_sessions as_postgres "$pg_bin/pg_ctl" -D "$data2" -m fast -w restart -o "-p $(port_of worker2) -c shared_preload_libraries=citus" >/dev/null
"$ROOT/scripts/citus.sh" database idem_citus_preload >/dev/null
preload_url=$("$ROOT/scripts/citus.sh" url coordinator idem_citus_preload)
PGOPTIONS="-c client_min_messages=warning" psql "$preload_url" -qAtX -c "CREATE EXTENSION pg_idempotency" >/dev/null 2>&1
out=$(PGOPTIONS="-c client_min_messages=warning" psql "$preload_url" -qAtX -c "SELECT * FROM idem.citus_distribute()" 2>&1)
check "citus_distribute with a node that does not preload pg_idempotency: ERR_CITUS_MISSING" "ERR_CITUS_MISSING" "$(error_of "$out")"
check "... and nothing was distributed" "0" \
  "$(PGOPTIONS="-c client_min_messages=warning" psql "$preload_url" -qAtX -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::text LIKE 'idem.%'" 2>&1)"
"$ROOT/scripts/citus.sh" drop-database idem_citus_preload >/dev/null
without_sessions as_postgres "$pg_bin/pg_ctl" -D "$data2" -m fast -w restart -o "-p $(port_of worker2)" >/dev/null
check "worker2 is back with both libraries" "citus,pg_stat_statements,pg_idempotency" "$(q worker2 "SHOW shared_preload_libraries")"
