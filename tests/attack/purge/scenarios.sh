#!/usr/bin/env bash
# purge_expired attack scenarios, each run against ATTACK_OLD and ATTACK_NEW (lib.sh; 0.3.2 and 0.3.3
# unless set); transcripts and a diff in $OUT.
# Usage: tests/attack/purge/scenarios.sh [scenario-name ...]   (default: all)
cd "$(dirname "${BASH_SOURCE[0]}")" && . ./lib.sh
OUT=${OUT:-/tmp/${ATTACK_PREFIX}_out}; mkdir -p "$OUT"
FILLER=${FILLER:-300000}   # non-history rows due by purge_after ahead of everything: the scan window

reset() {
  q "SELECT gid FROM pg_prepared_xacts WHERE database = current_database()" | while read -r g; do [ -n "$g" ] && q "ROLLBACK PREPARED '$g'" >/dev/null; done
  q "DELETE FROM idem.keys WHERE tenant_id <> 'filler'; TRUNCATE idem.retired_keys, public.marks, idem.tenant_bindings;" >/dev/null
}
K() { printf "'%s'" "$1"; }                       # a key literal
acq() { echo "SELECT outcome, generation FROM idem.acquire('t1', '$1', '{\"a\":1}'::jsonb $2) WHERE set_config('x.h$3', handle, false) IS NOT NULL AND set_config('x.a$3', coalesce(attempt, 0)::text, false) IS NOT NULL;"; }
acq_show() { echo "SELECT outcome, generation, convert_from(response_body, 'UTF8') AS body FROM idem.acquire('t1', '$1', '{\"a\":1}'::jsonb $2);"; }
h() { echo "current_setting('x.h$1'), current_setting('x.a$1')::bigint"; }
hist() { q "SELECT public.mk_hist('t1', '$1', ${2:-1}, '${3:-1 hour}')" >/dev/null; }
# gate G: session G holds user advisory lock 42; trigger S "sql..." queues sql in S behind that lock.
gate() { run "$1" "SELECT pg_advisory_lock(42) IS NOT NULL AS gate_closed;"; }
behind_gate() { local s=$1; shift; send "$s" "SELECT pg_advisory_lock(42) IS NOT NULL AS through_gate, pg_sleep(${GATE_DELAY:-0.01}) IS NOT NULL; $* SELECT pg_advisory_unlock(42) IS NOT NULL AS gate_given_back;"; sleep 0.3; q "SELECT public.waiting()" | sed 's/^/    waiting: /'; }
# A purge call in session S that opens the gate first; marks its start and end.
purge_opening_gate() {
  run "$1" "SELECT set_config('x.t0', clock_timestamp()::text, false) IS NOT NULL AS t0, pg_advisory_unlock(42) AS gate_opened, idem.purge_expired($2) AS removed, set_config('x.t1', clock_timestamp()::text, false) IS NOT NULL AS t1;"
}
window_report() {  # window_report PURGE-SESSION MARK: whether MARK happened during the purge call
  run "$1" "SELECT (SELECT at FROM public.marks WHERE what = '$2') BETWEEN current_setting('x.t0')::timestamptz AND current_setting('x.t1')::timestamptz AS mark_inside_purge_call, 'INFO ms=' || round(extract(epoch FROM current_setting('x.t1')::timestamptz - current_setting('x.t0')::timestamptz) * 1000) AS call_ms, 'INFO after_start_ms=' || round(extract(epoch FROM (SELECT at FROM public.marks WHERE what = '$2') - current_setting('x.t0')::timestamptz) * 1000) AS mark_ms;"
}
mark() { echo "INSERT INTO public.marks VALUES ('$1', clock_timestamp());"; }

s01_batch_bounds() {
  start P; start C
  q "SELECT public.mk_hist('t1', ('batch-key-' || lpad(i::text, 10, '0'))) FROM generate_series(1, 600) i" >/dev/null
  for b in 0 NULL -1 100001 -2147483648; do run P "SELECT idem.purge_expired($b);"; done
  run P "SELECT count(*) AS left_after_refusals, public.locks() FROM idem.keys WHERE tenant_id = 't1';"
  run P "SELECT count(*) AS retired FROM idem.retired_keys;"
  for b in 1 499 500 501 100000 DEFAULT; do
    reset; q "SELECT public.mk_hist('t1', ('batch-key-' || lpad(i::text, 10, '0'))) FROM generate_series(1, 600) i" >/dev/null
    if [ "$b" = DEFAULT ]; then call="idem.purge_expired()"; else call="idem.purge_expired($b)"; fi
    run P "BEGIN; SELECT $call AS removed_$b; SELECT public.locks() AS in_txn;"
    run C "SELECT count(*) AS visible_to_others FROM idem.keys WHERE tenant_id = 't1';"
    run P "COMMIT; SELECT public.locks() AS after_commit, count(*) AS left FROM idem.keys WHERE tenant_id = 't1';"
    run P "SELECT count(*) AS retired, count(*) FILTER (WHERE generation = 1) AS gen1 FROM idem.retired_keys;"
  done
  # oldest first: the ones purged by purge_expired(3) are the three oldest
  reset; for i in 1 2 3 4 5; do hist "order-key-000000$i" 1 "$((10 - i)) minutes"; done
  run P "SELECT idem.purge_expired(3) AS removed; SELECT client_key FROM idem.keys WHERE tenant_id = 't1' ORDER BY 1;"
  stop_all
}

s02_acquire_vs_purge() {
  start A; start B; start P; start C
  for s in A B P C; do run $s "SET idem.wait_timeout = '3s';"; done
  echo "## K history (generation 1, resolved, body 'gen1'); B re-acquires it in an open transaction, then purge"
  run A "$(acq purge-key-00000001 ", ttl => '1 second'" 1)"
  run A "SELECT idem.complete($(h 1), 200, NULL, convert_to('gen1', 'UTF8'));"
  run A "SELECT pg_sleep(1.1);"
  run B "BEGIN; $(acq purge-key-00000001 "" 2)"
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed; SELECT public.locks();"
  run P "COMMIT;"
  run B "COMMIT;"
  run P "SELECT idem.purge_expired(10) AS removed_after_b_commit; SELECT * FROM public.st('t1');"
  reset
  echo "## purge first (open transaction), then acquirers: reject, wait (purge commits during the wait)"
  run A "$(acq purge-key-00000002 ", ttl => '1 second'" 3)"
  run A "SELECT idem.complete($(h 3), 200, NULL, convert_to('gen1', 'UTF8'));"
  run A "SELECT pg_sleep(1.1);"
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed; SELECT public.locks();"
  run B "$(acq_show purge-key-00000002 "")"
  run C "SELECT public.locks() AS after_refused_acquire;"
  send B "$(acq_show purge-key-00000002 ", on_busy => 'wait'")"
  sleep 0.5
  run P "COMMIT;"
  collect B
  run C "SELECT public.locks() AS after_all; SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
  echo "## RR acquirer whose snapshot predates the purge's commit; then fresh acquire"
  reset
  run A "$(acq purge-key-00000003 ", ttl => '1 second'" 4)"
  run A "SELECT idem.complete($(h 4), 200, NULL, convert_to('gen1', 'UTF8'));"
  run A "SELECT pg_sleep(1.1);"
  run C "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) AS snapshot_keys FROM idem.keys WHERE tenant_id = 't1';"
  run P "SELECT idem.purge_expired(10) AS removed;"
  run C "$(acq_show purge-key-00000003 "")"
  run C "ROLLBACK;"
  run C "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT count(*) AS snapshot_keys FROM idem.keys WHERE tenant_id = 't1';"
  run P "SELECT count(*) AS purged_again FROM idem.keys;"
  run C "$(acq_show purge-key-00000003 "")"
  run C "ROLLBACK;"
  run C "$(acq_show purge-key-00000003 "")"
  run C "SELECT public.locks(); SELECT * FROM public.st('t1');"
  echo "## RR acquirer whose snapshot predates the purge, purge still open (not committed)"
  reset
  run A "$(acq purge-key-00000004 ", ttl => '1 second'" 5)"
  run A "SELECT idem.complete($(h 5), 200, NULL, convert_to('gen1', 'UTF8'));"
  run A "SELECT pg_sleep(1.1);"
  run C "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) AS snapshot_keys FROM idem.keys WHERE tenant_id = 't1';"
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed;"
  run C "$(acq_show purge-key-00000004 "")"
  run P "COMMIT;"
  run C "$(acq_show purge-key-00000004 "")"
  run C "ROLLBACK; $(acq_show purge-key-00000004 "")"
  stop_all
}

s03_own_transaction() {
  start A; start P; start C
  hist own-key-000000002 4
  hist own-key-000000003 7
  run A "$(acq own-key-000000004 ", ttl => '1 hour'" 4)"
  run A "SELECT idem.complete($(h 4), 200, NULL, convert_to('live', 'UTF8'));"
  echo "## T acquires a new key and a history key (short lease/ttl), replays a live one, then purges"
  run A "BEGIN; $(acq own-key-000000001 ", lease => '50 milliseconds', ttl => '50 milliseconds'" 1)"
  run A "$(acq own-key-000000002 ", lease => '50 milliseconds', ttl => '50 milliseconds'" 2)"
  run A "$(acq_show own-key-000000004 "")"
  run A "SELECT pg_sleep(0.3);"
  run A "SELECT * FROM public.st('t1');"
  run A "SELECT idem.purge_expired(10) AS removed_in_own_txn; SELECT public.locks();"
  run A "SELECT * FROM public.st('t1');"
  run A "$(acq_show own-key-000000001 "")"
  run A "SELECT idem.purge_expired(10) AS removed_again; SELECT public.locks();"
  run A "COMMIT; SELECT public.locks();"
  run P "SELECT idem.purge_expired(10) AS removed_after; SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
  run C "$(acq_show own-key-000000002 "")"
  run C "$(acq_show own-key-000000003 "")"
  stop_all
}

s04_concurrent_purges() {
  start P1; start P2; start P3; start P4; start C
  q "SELECT public.mk_hist('t1', ('multi-key-' || lpad(i::text, 8, '0')), i, make_interval(mins => 100 - i)) FROM generate_series(1, 30) i" >/dev/null
  # inconsistent high-water marks: retired above the record's generation (kept), and below (raised)
  q "INSERT INTO idem.retired_keys VALUES ('t1', public.dg('t1', 'multi-key-00000005'), 50, now() - interval '1 day'), ('t1', public.dg('t1', 'multi-key-00000006'), 2, now() - interval '1 day')" >/dev/null
  run P1 "BEGIN; SELECT idem.purge_expired(10) AS p1;"
  run P2 "BEGIN; SELECT idem.purge_expired(10) AS p2;"
  run P3 "BEGIN; SELECT idem.purge_expired(10) AS p3;"
  run C "SELECT public.locks(), public.waiting();"
  run P4 "SELECT idem.purge_expired(10) AS p4_while_all_held;"
  run P2 "COMMIT;"
  run P3 "ROLLBACK;"
  run C "SELECT public.locks();"
  run P1 "COMMIT;"
  run P4 "SELECT idem.purge_expired(100) AS p4_rest;"
  run C "SELECT public.locks(); SELECT count(*) AS keys_left FROM idem.keys WHERE tenant_id = 't1';"
  run C "SELECT count(*) AS retired, count(*) FILTER (WHERE g.generation = CASE g.scope_digest WHEN public.dg('t1', 'multi-key-00000005') THEN 50 ELSE (SELECT i FROM generate_series(1, 30) i WHERE public.dg('t1', ('multi-key-' || lpad(i::text, 8, '0'))) = g.scope_digest) END) AS at_max FROM idem.retired_keys g;"
  echo "## three purges started together (the filler makes each take a while)"
  reset
  q "SELECT public.mk_hist('t1', ('multi-key-' || lpad(i::text, 8, '0')), i, make_interval(mins => 100 - i)) FROM generate_series(1, 30) i" >/dev/null
  for s in P1 P2 P3; do send $s "BEGIN; SELECT idem.purge_expired(12) AS removed;"; done
  for s in P1 P2 P3; do collect $s; done
  run C "SELECT public.locks(), public.waiting();"
  for s in P1 P2 P3; do run $s "COMMIT;"; done
  run C "SELECT count(*) AS keys_left, public.locks() FROM idem.keys WHERE tenant_id = 't1'; SELECT count(*) AS retired FROM idem.retired_keys;"
  echo "## a generation purged again and again: 1, 2, 3, 4"
  reset
  for g in 1 2 3; do
    run C "$(acq cycle-key-00000001 ", ttl => '100 milliseconds'" 9)"
    run C "SELECT idem.complete($(h 9), 200, NULL, convert_to('g', 'UTF8')); SELECT pg_sleep(0.2);"
    send P1 "SELECT idem.purge_expired(10) AS p1;"; send P2 "SELECT idem.purge_expired(10) AS p2;"; collect P1; collect P2
  done
  run C "$(acq_show cycle-key-00000001 "")"
  stop_all
}

# The window between the purge's candidate scan and its lock: the filler makes the scan take tens of
# ms; B's step runs behind a gate the purge's own statement opens.
s05_window_purge_vs_purge() {
  start P1; start P2; start C
  hist win-key-000000000 1 '10 minutes'
  hist win-key-000000001 1 '5 minutes'; hist win-key-000000002 1 '4 minutes'; hist win-key-000000003 1 '3 minutes'
  run P1 "BEGIN; SELECT idem.purge_expired(1) AS p1_removed; SELECT public.locks();"
  gate P2
  behind_gate P1 "COMMIT; $(mark p1_commit)"
  purge_opening_gate P2 5
  collect P1
  window_report P2 p1_commit
  run C "SELECT public.locks(), public.waiting(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
  stop_all
}

s06_window_acquirer() {
  start A; start P; start C
  for v in acquire acquire_complete_short complete_abandoned release_abandoned acquire_rolled_back acquire_prepare; do
    reset
    echo "## variant $v"
    case $v in
      acquire|acquire_complete_short|acquire_rolled_back|acquire_prepare) hist win-key-000000000 3 '10 minutes' ;;
      *) run A "$(acq win-key-000000000 ", lease => '1 second', ttl => '1 second'" 1)"; run A "SELECT pg_sleep(2.2);" ;;
    esac
    hist win-key-000000001 1 '5 minutes'; hist win-key-000000002 1 '4 minutes'
    run C "SELECT * FROM public.st('t1');"
    gate P
    case $v in
      acquire|acquire_prepare) behind_gate A "$(acq win-key-000000000 "" 2) $(mark b_commit)" ;;
      acquire_complete_short) behind_gate A "BEGIN; $(acq win-key-000000000 ", ttl => '5 milliseconds'" 2) SELECT idem.complete($(h 2), 201, NULL, convert_to('gen4', 'UTF8')); COMMIT; $(mark b_commit)" ;;
      acquire_rolled_back) behind_gate A "BEGIN; $(acq win-key-000000000 "" 2) ROLLBACK; $(mark b_commit)" ;;
      complete_abandoned) behind_gate A "SELECT idem.complete($(h 1), 200, NULL, convert_to('late complete', 'UTF8')); $(mark b_commit)" ;;
      release_abandoned) behind_gate A "SELECT idem.release($(h 1), 'late release'); $(mark b_commit)" ;;
    esac
    run P "BEGIN;"
    purge_opening_gate P 5
    run P "SELECT public.locks() AS purge_txn_locks;"
    collect A
    if [ $v = acquire_prepare ]; then
      run P "PREPARE TRANSACTION '${ATTACK_PREFIX}_p3';"; run C "SELECT public.locks() AS while_prepared;"; run P "COMMIT PREPARED '${ATTACK_PREFIX}_p3';"
    else run P "COMMIT;"; fi
    window_report P b_commit
    run C "SELECT public.locks(), public.waiting(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
    run C "$(acq_show win-key-000000000 "")"
  done
  stop_all
}

s07_isolation_levels() {
  start A; start B; start P; start P1; start C
  for lvl in "REPEATABLE READ" SERIALIZABLE; do
    echo "######## $lvl"
    reset; hist iso-key-000000001; hist iso-key-000000002; hist iso-key-000000003
    run P "SET statement_timeout = '10s'; BEGIN ISOLATION LEVEL $lvl; SELECT idem.purge_expired(10) AS removed; SELECT public.locks(); COMMIT;"
    echo "## snapshot older than a re-acquire of a history key"
    reset; hist iso-key-000000001 5; hist iso-key-000000002
    run P "BEGIN ISOLATION LEVEL $lvl; SELECT count(*) AS snapshot_keys FROM idem.keys WHERE tenant_id = 't1';"
    run B "$(acq iso-key-000000001 "" 1)"
    run P "SELECT idem.purge_expired(10) AS removed;"
    run P "SELECT public.locks(); ROLLBACK;"
    run C "SELECT * FROM public.st('t1'); SELECT public.locks();"
    echo "## snapshot older than another purge's delete"
    reset; hist iso-key-000000001 5; hist iso-key-000000002
    run P "BEGIN ISOLATION LEVEL $lvl; SELECT count(*) AS snapshot_keys FROM idem.keys WHERE tenant_id = 't1';"
    run P1 "SELECT idem.purge_expired(1) AS p1_removed;"
    run P "SELECT idem.purge_expired(10) AS removed;"
    run P "SELECT public.locks(); ROLLBACK;"
    run C "SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); SELECT public.locks();"
    echo "## snapshot older than another purge's delete and a new generation of the key"
    reset; hist iso-key-000000001 5; hist iso-key-000000002
    run P "BEGIN ISOLATION LEVEL $lvl; SELECT count(*) AS snapshot_keys FROM idem.keys WHERE tenant_id = 't1';"
    run P1 "SELECT idem.purge_expired(1) AS p1_removed;"
    run B "$(acq iso-key-000000001 ", ttl => '1 millisecond', lease => '1 second'" 3)"
    run B "SELECT idem.complete($(h 3), 200, NULL, 'g6'); SELECT pg_sleep(0.05);"
    run P "SELECT idem.purge_expired(10) AS removed;"
    run P "SELECT public.locks(); ROLLBACK;"
    run C "SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); SELECT public.locks();"
    echo "## a key busy at the first call, free (and re-acquired) at the second call of the same transaction"
    reset; hist iso-key-000000001 5; hist iso-key-000000002
    run B "BEGIN; $(acq iso-key-000000001 "" 4)"
    run P "BEGIN ISOLATION LEVEL $lvl; SELECT idem.purge_expired(10) AS first_call; SELECT public.locks();"
    run B "COMMIT;"
    run P "SELECT idem.purge_expired(10) AS second_call;"
    run P "SELECT public.locks(); ROLLBACK;"
    run C "SELECT * FROM public.st('t1'); SELECT public.locks();"
    echo "## window: a re-acquire commits between the scan and the lock (inside one call)"
    reset; hist iso-key-000000000 3 '10 minutes'; hist iso-key-000000001 1 '5 minutes'
    gate P
    behind_gate A "$(acq iso-key-000000000 "" 2) $(mark b_commit)"
    run P "BEGIN ISOLATION LEVEL $lvl;"
    purge_opening_gate P 5
    collect A
    run P "SELECT public.locks(); ROLLBACK;"
    run C "SELECT * FROM public.st('t1'); SELECT public.locks();"
  done
  stop_all
}

s08_due_but_not_history() {
  start A; start P; start C
  run A "$(acq due-key-late-cmpl ", ttl => '1 second', lease => '10 seconds'" 1)"
  run A "$(acq due-key-live-lease ", ttl => '100 milliseconds', lease => '30 seconds'" 2)"
  run A "$(acq due-key-released ", ttl => '1 second'" 3)"
  run A "$(acq due-key-abandoned ", ttl => '1 second', lease => '1 second'" 4)"
  run A "SELECT pg_sleep(1.3);"
  run A "SELECT idem.complete($(h 1), 200, NULL, 'late'); SELECT idem.release($(h 3), 'x');"
  run C "SELECT client_key, status, purge_after < now() AS due, expires_at > now() AS not_expired FROM idem.keys WHERE tenant_id = 't1' ORDER BY 1;"
  run P "BEGIN; SELECT idem.purge_expired(100) AS removed; SELECT public.locks(); COMMIT;"
  run A "SELECT pg_sleep(1.1);"
  run P "BEGIN; SELECT idem.purge_expired(100) AS removed_later; SELECT public.locks(); COMMIT;"
  run C "SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
  stop_all
}

s09_checkpointed() {
  start A; start B; start P
  run A "$(acq ckpt-key-00000001 ", ttl => '1 second', lease => '1 second'" 1)"
  run A "SELECT idem.checkpoint($(h 1), 'charge_created', '{\"ch\":1}') IS NOT NULL AS checkpointed;"
  run A "$(acq ckpt-key-00000002 ", ttl => '1 second', lease => '1 second'" 2)"
  run A "SELECT idem.checkpoint($(h 2), 'charge_created') IS NOT NULL AS checkpointed; SELECT idem.release($(h 2), 'after checkpoint');"
  run A "SELECT pg_sleep(2.3);"
  run P "SELECT idem.purge_expired(100000) AS removed, public.locks(); SELECT client_key, status, expires_at IS NULL AS never_expires FROM idem.keys WHERE tenant_id = 't1' ORDER BY 1;"
  run B "SELECT outcome, generation, recovery_point FROM idem.acquire('t1', 'ckpt-key-00000001', '{\"a\":1}'::jsonb);"
  run B "SELECT outcome, generation, recovery_point FROM idem.acquire('t1', 'ckpt-key-00000002', '{\"a\":1}'::jsonb);"
  stop_all
}

s10_bound_role() {
  psql_admin "DROP ROLE IF EXISTS ${ATTACK_PREFIX}_bound" >/dev/null 2>&1; psql_admin "DROP ROLE IF EXISTS ${ATTACK_PREFIX}_svc" >/dev/null 2>&1
  psql_admin "CREATE ROLE ${ATTACK_PREFIX}_bound LOGIN IN ROLE idem_operator, idem_service; CREATE ROLE ${ATTACK_PREFIX}_svc LOGIN IN ROLE idem_service;"
  q "SELECT idem.bind_tenant('${ATTACK_PREFIX}_bound', 't1');"
  hist bound-key-0000001; hist bound-key-0000002
  echo "--- bound operator:"; psql -X -At -v VERBOSITY=terse "postgresql://${ATTACK_PREFIX}_bound@127.0.0.1:54320/$DB" -c "SELECT idem.purge_expired(10);" -c "SELECT idem.purge_expired(NULL);" 2>&1 | sed 's/^/    /'
  q "SELECT count(*) AS left_after_bound_call, public.locks() FROM idem.keys WHERE tenant_id = 't1'"
  echo "--- unbound service role:"; psql -X -At -v VERBOSITY=terse "postgresql://${ATTACK_PREFIX}_svc@127.0.0.1:54320/$DB" -c "SELECT idem.purge_expired(10);" 2>&1 | sed 's/^/    /'
  echo "--- PUBLIC role:"; psql_admin "DROP ROLE IF EXISTS ${ATTACK_PREFIX}_pub" >/dev/null 2>&1; psql_admin "CREATE ROLE ${ATTACK_PREFIX}_pub LOGIN"
  psql -X -At -v VERBOSITY=terse "postgresql://${ATTACK_PREFIX}_pub@127.0.0.1:54320/$DB" -c "SELECT idem.purge_expired(10);" 2>&1 | sed 's/^/    /'
  q "DELETE FROM idem.tenant_bindings" >/dev/null
  for r in ${ATTACK_PREFIX}_bound ${ATTACK_PREFIX}_svc ${ATTACK_PREFIX}_pub; do psql_admin "DROP OWNED BY $r" >/dev/null 2>&1; done
  psql -X -q "$PGURL_BASE/$DB" -c "DROP OWNED BY ${ATTACK_PREFIX}_bound, ${ATTACK_PREFIX}_svc, ${ATTACK_PREFIX}_pub" >/dev/null 2>&1
  psql_admin "DROP ROLE ${ATTACK_PREFIX}_bound; DROP ROLE ${ATTACK_PREFIX}_svc; DROP ROLE ${ATTACK_PREFIX}_pub" 2>&1
}

s11_rollback() {
  start P; start C
  for i in 1 2 3 4 5; do hist "rb-key-00000000$i" $((i + 1)) "$((10 - i)) minutes"; done
  q "INSERT INTO idem.retired_keys VALUES ('t1', public.dg('t1', 'rb-key-000000001'), 7, now() - interval '1 hour')" >/dev/null
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed; SELECT public.locks();"
  run P "ROLLBACK; SELECT public.locks(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
  echo "## rolled back to a savepoint"
  run P "BEGIN; SAVEPOINT s; SELECT idem.purge_expired(3) AS removed; ROLLBACK TO SAVEPOINT s; SELECT public.locks() AS after_rollback_to; SELECT count(*) FROM idem.keys WHERE tenant_id = 't1'; COMMIT;"
  echo "## caught in an exception block"
  run P "BEGIN; DO \$\$ BEGIN BEGIN PERFORM idem.purge_expired(3); RAISE EXCEPTION 'boom'; EXCEPTION WHEN raise_exception THEN RAISE NOTICE 'caught'; END; END \$\$; SELECT public.locks() AS after_caught; SELECT count(*) FROM idem.keys WHERE tenant_id = 't1'; COMMIT;"
  echo "## a statement timeout inside the call"
  run P "BEGIN; SET LOCAL statement_timeout = '5ms'; SELECT idem.purge_expired(3);"
  run P "ROLLBACK; SELECT public.locks(); SELECT count(*) FROM idem.keys WHERE tenant_id = 't1';"
  echo "## several calls in one transaction, through a cursor"
  run P "BEGIN; DECLARE c CURSOR FOR SELECT idem.purge_expired(1) FROM generate_series(1, 3); FETCH ALL FROM c; CLOSE c; SELECT public.locks(); SELECT idem.purge_expired(1) AS fourth; SELECT public.locks(); COMMIT; SELECT public.locks(); SELECT * FROM public.ret('t1');"
  stop_all
}

s12_prepare() {
  start P; start P2; start B; start C
  for i in 1 2 3 4 5; do hist "pp-key-00000000$i" 1 "$((10 - i)) minutes"; done
  run P "BEGIN; SELECT idem.purge_expired(3) AS removed; PREPARE TRANSACTION '${ATTACK_PREFIX}_p1';"
  run C "SELECT public.locks();"
  run B "$(acq_show pp-key-000000001 "")"
  run B "$(acq pp-key-000000004 "" 1)"
  run P2 "BEGIN; SELECT idem.purge_expired(10) AS p2_removed; SELECT public.locks(); COMMIT;"
  run C "SELECT public.locks(), public.waiting();"
  run P "COMMIT PREPARED '${ATTACK_PREFIX}_p1';"
  run C "SELECT public.locks(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
  run B "$(acq_show pp-key-000000001 "")"
  echo "## a prepared acquirer holding an expired key: purge passes over it without waiting"
  reset; hist pp-key-000000001 2
  run B "BEGIN; $(acq pp-key-000000001 ", lease => '10 milliseconds', ttl => '10 milliseconds'" 2) PREPARE TRANSACTION '${ATTACK_PREFIX}_p2';"
  run B "SELECT pg_sleep(0.1);"
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed; SELECT public.locks(); COMMIT;"
  run B "ROLLBACK PREPARED '${ATTACK_PREFIX}_p2';"
  run P "SELECT idem.purge_expired(10) AS removed_after; SELECT public.locks(); SELECT * FROM public.ret('t1');"
  stop_all
}

s13_forget() {
  start P; start B; start C
  for s in P B C; do run $s "SET idem.history_retention = 1;"; done
  q "INSERT INTO idem.retired_keys SELECT 't1', public.dg('t1', ('forget-key-' || lpad(i::text, 7, '0'))), 5, now() - interval '1 hour' FROM generate_series(1, 6) i" >/dev/null
  echo "## acquirer holds a key being forgotten"
  run B "BEGIN; $(acq forget-key-0000001 "" 1)"
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed; SELECT public.locks(); SELECT * FROM public.ret('t1');"
  run P "COMMIT;"
  run B "COMMIT;"
  run P "SELECT idem.purge_expired(10) AS removed; SELECT public.locks(); SELECT * FROM public.ret('t1'); SELECT * FROM public.st('t1');"
  echo "## forgetting purge open, acquirer of that key"
  reset; q "INSERT INTO idem.retired_keys VALUES ('t1', public.dg('t1', 'forget-key-0000009'), 9, now() - interval '1 hour')" >/dev/null
  run C "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) AS snapshot_retired FROM idem.retired_keys;"
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed; SELECT public.locks();"
  run B "$(acq_show forget-key-0000009 "")"
  run P "COMMIT;"
  run C "$(acq_show forget-key-0000009 "")"
  run C "ROLLBACK;"
  run B "$(acq_show forget-key-0000009 "")"
  echo "## the call purges a record whose old retired row is past retention"
  reset
  q "INSERT INTO idem.retired_keys VALUES ('t1', public.dg('t1', 'forget-key-0000010'), 3, now() - interval '1 hour')" >/dev/null
  hist forget-key-0000010 4 '10 minutes'
  run P "SELECT idem.purge_expired(10) AS removed; SELECT * FROM public.ret('t1');"
  echo "## how many key locks one call holds: 600 history records and 600 forgettable generations"
  reset
  q "SELECT public.mk_hist('t1', ('lockcount-key-' || lpad(i::text, 7, '0'))) FROM generate_series(1, 600) i" >/dev/null
  q "INSERT INTO idem.retired_keys SELECT 't1', public.dg('t1', ('forget-key-' || lpad(i::text, 7, '0'))), 5, now() - interval '1 hour' FROM generate_series(1, 600) i" >/dev/null
  run P "BEGIN; SELECT idem.purge_expired(100000) AS removed; SELECT public.locks(); SELECT count(*) AS retired_left FROM idem.retired_keys; COMMIT;"
  echo "## a generation forgotten while its newer record is still history in the store"
  reset
  hist forget-key-0000011 8 '10 minutes'
  q "INSERT INTO idem.retired_keys VALUES ('t1', public.dg('t1', 'forget-key-0000011'), 7, now() - interval '1 hour')" >/dev/null
  run B "BEGIN; SELECT pg_advisory_xact_lock(1); $(acq_show forget-key-0000011 ", lease => '1 hour'")"
  run P "SELECT idem.purge_expired(10) AS removed; SELECT * FROM public.ret('t1');"
  run B "ROLLBACK;"
  run P "SELECT idem.purge_expired(10) AS removed; SELECT * FROM public.ret('t1');"
  run B "$(acq_show forget-key-0000011 "")"
  stop_all
}

s14_abandoned() {
  start A; start P; start C
  run A "$(acq aband-key-0000001 ", lease => '1 second', ttl => '1 second'" 1)"
  run A "SELECT pg_sleep(2.2);"
  run P "BEGIN; SELECT idem.purge_expired(10) AS removed; SELECT public.locks();"
  run A "SELECT idem.complete($(h 1), 200, NULL, 'late');"
  run P "COMMIT;"
  run A "SELECT idem.complete($(h 1), 200, NULL, 'late');"
  run C "$(acq_show aband-key-0000001 "")"
  run C "SELECT * FROM public.ret('t1'); SELECT public.locks();"
  stop_all
}

s15_three_sessions() {
  start P1; start P2; start A; start C
  run A "SET idem.wait_timeout = '5s';"
  hist three-key-0000001 4 '10 minutes'; hist three-key-0000002 1 '5 minutes'; hist three-key-0000003 1 '4 minutes'
  run P1 "BEGIN; SELECT idem.purge_expired(1) AS p1;"
  send A "$(acq_show three-key-0000001 ", on_busy => 'wait'")"
  sleep 0.3
  run P2 "BEGIN; SELECT idem.purge_expired(10) AS p2; SELECT public.locks(), public.waiting();"
  run P1 "COMMIT;"
  collect A
  run P2 "COMMIT;"
  run C "SELECT public.locks(), public.waiting(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
  stop_all
}

# REPEATABLE READ / SERIALIZABLE: a key busy when the first round passes it, freed before a second
# round (0.3.3 rescans whenever a round falls short of the batch; 0.3.2 read each candidate once).
s16_rr_second_round() {
  start A; start P; start P1; start C
  for lvl in "READ COMMITTED" "REPEATABLE READ" SERIALIZABLE; do
    for holder in acquirer purge; do
      reset; echo "######## $lvl, holder: $holder"
      # ahead of the filler: both versions pass the busy key at once, then read the filler (tens of
      # ms); ten more history records behind it, so that 0.3.2's first cursor fetch (10 rows) returns
      # at once too
      hist rr2-key-000000000 3 '3 days'
      q "SELECT public.mk_hist('t1', 'rr2-key-' || lpad(i::text, 9, '0'), 1, '2 days 23 hours') FROM generate_series(1, 10) i" >/dev/null
      if [ $holder = acquirer ]; then run A "BEGIN; $(acq rr2-key-000000000 "" 1)"
      else run P1 "BEGIN; SELECT idem.purge_expired(1) AS p1_removed;"; fi
      gate P
      if [ $holder = acquirer ]; then GATE_DELAY=${RR2_DELAY:-0.03} behind_gate A "COMMIT; $(mark b_commit)"
      else GATE_DELAY=${RR2_DELAY:-0.03} behind_gate P1 "COMMIT; $(mark b_commit)"; fi
      run P "BEGIN ISOLATION LEVEL $lvl;"
      purge_opening_gate P 20
      run P "SELECT public.locks(); COMMIT;"
      if [ $holder = acquirer ]; then collect A; else collect P1; fi
      window_report P b_commit
      run C "SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); SELECT public.locks();"
    done
  done
  stop_all
}

# How long a passed-over key stays locked: 0.3.2 gave it back right after its one-row DELETE; 0.3.3
# takes every lock of a round during the scan and gives the passed ones back after the round's
# DELETE. A holder that re-acquired the key (committed before the purge reached it) calls complete
# meanwhile: how long does complete take?
reset_keep_tail() { q "DELETE FROM idem.keys WHERE tenant_id NOT IN ('filler', 'tail'); TRUNCATE idem.retired_keys, public.marks;" >/dev/null; }
s17_passed_lock_hold() {
  start A; start P; start C
  q "INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, response_status, response_headers, response_body, created_at, resolved_at, expires_at, attempted_at)
     SELECT 'tail', idem.scope_digest('tail', '', '', 'tail-key-' || lpad(i::text, 10, '0')), 'resolved', nextval('idem.fencing_token_seq'), 1, idem.payload_hash('{}'::jsonb), 1, '', '', 'tail-key-' || lpad(i::text, 10, '0'), '30 seconds', '1 minute', 200, '{}', '', now() - interval '2 minutes', now(), now() + interval '1 day', now() - interval '2 minutes' FROM generate_series(1, ${TAIL:-300000}) i" >/dev/null
  for wt in 5s 0; do
  reset_keep_tail; echo "## holder's idem.wait_timeout = $wt"
  run A "SET idem.wait_timeout = '$wt';"
  hist hold-key-00000000 3 '10 minutes'
  gate P
  behind_gate A "$(acq hold-key-00000000 "" 1) $(mark b_commit) SELECT pg_sleep(${HOLD_DELAY:-0.07}); SELECT set_config('x.c0', clock_timestamp()::text, false) IS NOT NULL, idem.complete($(h 1), 200, NULL, 'done') IS NULL, 'INFO complete_ms=' || round(extract(epoch FROM clock_timestamp() - current_setting('x.c0')::timestamptz) * 1000), 'INFO complete_started_ms=' || round(extract(epoch FROM current_setting('x.c0')::timestamptz - (SELECT at FROM public.marks WHERE what = 'b_commit')) * 1000);"
  purge_opening_gate P 5
  collect A
  window_report P b_commit
  run C "SELECT public.locks(), public.waiting(); SELECT * FROM public.st('t1');"
  done
  q "DELETE FROM idem.keys WHERE tenant_id = 'tail'" >/dev/null
  stop_all
}

# run_scenarios LIST [EXTRA_NORM]: each scenario of LIST against ATTACK_OLD and ATTACK_NEW, in the
# databases ${ATTACK_PREFIX}_<version> (made when missing or unless KEEP_DB), then a diff of the two
# transcripts, normalized (timings, tokens, times, and EXTRA_NORM's sed expression).
run_scenarios() {
  local list=$1 extra=${2:-s/^//} ver s
  for ver in "$ATTACK_OLD" "$ATTACK_NEW"; do
    DB=${ATTACK_PREFIX}_${ver//./}
    if [ "${KEEP_DB:-}" = "" ] || [ "$(psql_admin "SELECT count(*) FROM pg_database WHERE datname = '$DB'")" = 0 ]; then
      setup_db "$DB" "$ver"
      psql -X -q "$PGURL_BASE/$DB" -c "CREATE TABLE public.marks (what text, at timestamptz)" \
        -c "INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme, caller_id, resource, client_key, lease_interval, ttl, response_status, response_headers, response_body, created_at, resolved_at, expires_at, attempted_at)
            SELECT 'filler', idem.scope_digest('filler', '', '', ('filler-key-' || lpad(i::text, 10, '0'))), 'resolved', nextval('idem.fencing_token_seq'), 1, idem.payload_hash('{}'::jsonb), 1, '', '', ('filler-key-' || lpad(i::text, 10, '0')), '30 seconds', '1 day', 200, '{}', '', now() - interval '2 days', now(), now() + interval '30 days', now() - interval '2 days' FROM generate_series(1, $FILLER) i" \
        -c "VACUUM ANALYZE idem.keys" >/dev/null
    fi
    for s in $list; do
      reset
      echo "== $s on $ver" >&2
      { echo "==== $s ($ver)"; $s; } >"$OUT/$s.$ver.txt" 2>&1
      stop_all
    done
  done
  norm() { sed -E -e 's/ms=[0-9-]+/ms=N/g' -e 's/attempt [0-9]+/attempt N/g' -e "s/\\(($ATTACK_OLD|$ATTACK_NEW)\\)//" \
                  -e 's/at [0-9]{4}-[0-9: .+-]+/at TS/g' -e "$extra" "$1"; }
  for s in $list; do
    if diff <(norm "$OUT/$s.$ATTACK_OLD.txt") <(norm "$OUT/$s.$ATTACK_NEW.txt") >"$OUT/$s.diff"; then
      echo "$s: same"; rm -f "$OUT/$s.diff"
    else
      echo "$s: DIFFERS (see $OUT/$s.diff)"
    fi
  done
}

[ -n "${SCEN_LIB_ONLY:-}" ] && return 0
ALL="s01_batch_bounds s02_acquire_vs_purge s03_own_transaction s04_concurrent_purges s05_window_purge_vs_purge s06_window_acquirer s07_isolation_levels s08_due_but_not_history s09_checkpointed s10_bound_role s11_rollback s12_prepare s13_forget s14_abandoned s15_three_sessions s16_rr_second_round s17_passed_lock_hold"
run_scenarios "${*:-$ALL}"
