#!/usr/bin/env bash
# Scenarios aimed at 0.3.4's ctid DELETE (s18..s22), each run against 0.3.3 and 0.3.4 in the
# databases ../purge/scenarios.sh creates with the same settings (atk_p034_033 / atk_p034_034,
# created here when missing).
# Usage: tests/attack/purge_034/scenarios_034.sh [scenario-name ...]   (default: all)
export ATTACK_OLD=${ATTACK_OLD:-0.3.3} ATTACK_NEW=${ATTACK_NEW:-0.3.4} ATTACK_PREFIX=${ATTACK_PREFIX:-atk_p034}
SCEN_LIB_ONLY=1 . "$(dirname "$0")/../purge/scenarios.sh"

# where a record's row is, and what its page says about that line pointer
# (lp_flags 0 unused, 1 normal, 2 redirect, 3 dead; infomask2 0x4000 HOT_UPDATED, 0x8000 HEAP_ONLY)
at() { echo "SELECT '$1 ctid=' || ctid AS where_now FROM idem.keys WHERE tenant_id = 't1' AND client_key = '$1';"; }
remember_ctid() { q "INSERT INTO public.ctids SELECT '$2', ctid FROM idem.keys WHERE tenant_id = 't1' AND client_key = '$1'" >/dev/null; }
lp_of() {  # lp_of NAME: the line pointer remembered as NAME, as the page shows it now
  echo "SELECT '$1 lp=' || (c.t)::text || ' flags=' || p.lp_flags || coalesce(' hot_updated=' || ((p.t_infomask2 & 16384) <> 0) || ' heap_only=' || ((p.t_infomask2 & 32768) <> 0) || ' xmax_set=' || (p.t_xmax <> '0') || ' t_ctid=' || p.t_ctid::text, CASE p.lp_flags WHEN 2 THEN ' (redirect to lp ' || p.lp_off || ')' ELSE ' (no tuple)' END) AS lp
          FROM public.ctids c, heap_page_items(get_raw_page('idem.keys', ((c.t)::text::point)[0]::int)) p
         WHERE c.name = '$1' AND p.lp = ((c.t)::text::point)[1]::int;"
}
prep_034() {
  q "CREATE EXTENSION IF NOT EXISTS pageinspect; CREATE TABLE IF NOT EXISTS public.ctids (name text, t tid); TRUNCATE public.ctids;
     CREATE TABLE IF NOT EXISTS public.del_log (client_key text, generation integer, status text, expires_at timestamptz, at timestamptz, t tid);
     TRUNCATE public.del_log;" >/dev/null 2>&1
}
dels() { echo "SELECT 'deleted ' || client_key || ' g' || generation || ' ' || status || ' history_when_deleted=' || (expires_at < at) || ' from=' || t FROM public.del_log ORDER BY at;"; }
# every row the DELETE removes (whoever runs it), and what it looked like
log_trigger() {
  q "CREATE OR REPLACE FUNCTION public.log_del() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
       INSERT INTO public.del_log VALUES (OLD.client_key, OLD.generation, OLD.status, OLD.expires_at, clock_timestamp(), OLD.ctid); RETURN OLD; END \$\$;
     DROP TRIGGER IF EXISTS zz_log_del ON idem.keys; CREATE TRIGGER zz_log_del AFTER DELETE ON idem.keys FOR EACH ROW EXECUTE FUNCTION public.log_del();" >/dev/null
}
drop_triggers() { q "DROP TRIGGER IF EXISTS zz_log_del ON idem.keys; DROP TRIGGER IF EXISTS aa_gate_del ON idem.keys;" >/dev/null; }

# (1) a record rewritten and committed between the candidate scan and its lock, HOT and not HOT
s18_rewrite_window() {
  start A; start P; start C
  prep_034; log_trigger
  for v in hot_late_complete_history hot_late_complete_live hot_late_complete_rolled_back takeover_live takeover_complete_history takeover_twice_history release_abandoned; do
    reset; q "TRUNCATE public.ctids, public.del_log" >/dev/null
    echo "## variant $v"
    case $v in
      hot_*|release_*) run A "$(acq rw-key-0000000000 ", lease => '1 second', ttl => '1 millisecond'" 1)" ;;
      *) run A "$(acq rw-key-0000000000 ", lease => '1 second', ttl => '1 second'" 1)" ;;
    esac
    hist rw-key-0000000001 1 '5 minutes'
    run A "SELECT pg_sleep(2.2);"
    run C "SELECT client_key, status, generation, expires_at < now() AS history FROM idem.keys WHERE tenant_id = 't1' ORDER BY 1;"
    remember_ctid rw-key-0000000000 scanned
    gate P
    case $v in
      hot_late_complete_history) behind_gate A "SELECT idem.complete($(h 1), 200, NULL, convert_to('late', 'UTF8')); $(mark b_commit)" ;;
      hot_late_complete_live) q "UPDATE idem.keys SET ttl = '1 hour' WHERE client_key = 'rw-key-0000000000'" >/dev/null
                              behind_gate A "SELECT idem.complete($(h 1), 200, NULL, convert_to('late', 'UTF8')); $(mark b_commit)" ;;
      hot_late_complete_rolled_back) behind_gate A "BEGIN; SELECT idem.complete($(h 1), 200, NULL, convert_to('late', 'UTF8')); ROLLBACK; $(mark b_commit)" ;;
      takeover_live) behind_gate A "$(acq rw-key-0000000000 "" 2) $(mark b_commit)" ;;
      takeover_complete_history) behind_gate A "BEGIN; $(acq rw-key-0000000000 ", ttl => '1 millisecond'" 2) SELECT idem.complete($(h 2), 201, NULL, convert_to('gen1 take2', 'UTF8')); COMMIT; $(mark b_commit)" ;;
      takeover_twice_history) behind_gate A "BEGIN; $(acq rw-key-0000000000 ", ttl => '1 millisecond', lease => '1 millisecond'" 2) COMMIT; SELECT pg_sleep(0.005); BEGIN; $(acq rw-key-0000000000 ", ttl => '1 millisecond'" 3) SELECT idem.complete($(h 3), 202, NULL, convert_to('take3', 'UTF8')); COMMIT; $(mark b_commit)" ;;
      release_abandoned) behind_gate A "SELECT idem.release($(h 1), 'late release'); $(mark b_commit)" ;;
    esac
    run P "BEGIN;"
    purge_opening_gate P 5
    run P "SELECT public.locks() AS purge_txn_locks;"
    collect A
    run P "COMMIT;"
    window_report P b_commit
    run C "$(lp_of scanned) $(at rw-key-0000000000)"
    run C "SELECT public.locks(), public.waiting(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); $(dels)"
    run P "BEGIN; SELECT idem.purge_expired(5) AS next_call; SELECT public.locks(); COMMIT; SELECT public.locks() AS after;"
    run C "SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); $(dels)"
    run C "$(acq_show rw-key-0000000000 "")"
    run C "SELECT public.locks();"
  done
  drop_triggers
  stop_all
}

# (2) pruning and slot reuse between the scan and the DELETE. A BEFORE DELETE trigger holds the
# DELETE on the first candidate (advisory lock 43) while the second candidate's scanned version
# (a heap-only tuple, rewritten HOT inside the window) is dead: VACUUM, page pruning and HOT
# updates of other keys on that page run meanwhile. Then the DELETE reaches the second candidate.
s19_slot_reuse() {
  start A; start P; start C; start G
  prep_034; log_trigger
  q "CREATE OR REPLACE FUNCTION public.gate_del() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
       IF OLD.client_key = 'reuse-key-000000001' THEN PERFORM pg_advisory_lock(43); PERFORM pg_advisory_unlock(43); END IF; RETURN OLD; END \$\$;
     DROP TRIGGER IF EXISTS aa_gate_del ON idem.keys; CREATE TRIGGER aa_gate_del BEFORE DELETE ON idem.keys FOR EACH ROW EXECUTE FUNCTION public.gate_del();" >/dev/null
  for v in complete_hot vacuum_only other_key_hot_updates; do
    reset; q "TRUNCATE public.ctids, public.del_log" >/dev/null
    echo "## variant $v"
    # a fresh page at the end of the heap: all three keys (plus neighbours) on it
    hist reuse-key-000000001 1 '10 minutes'
    run A "$(acq reuse-key-000000002 ", lease => '1 second', ttl => '1 millisecond'" 1)"
    q "SELECT public.mk_hist('t1', 'reuse-nbr-' || lpad(i::text, 9, '0'), 1, '-1 day') FROM generate_series(1, 8) i" >/dev/null  # neighbours, live
    # one HOT rewrite before the purge (superuser, no key lock: setup only): the scanned version is heap-only
    q "UPDATE idem.keys SET last_error = 'pre' WHERE tenant_id = 't1' AND client_key = 'reuse-key-000000002'" >/dev/null
    run A "SELECT pg_sleep(2.2);"
    remember_ctid reuse-key-000000002 scanned; remember_ctid reuse-key-000000001 first
    run C "$(lp_of scanned) $(lp_of first)"
    run G "SELECT pg_advisory_lock(43) IS NOT NULL AS delete_gate_closed;"
    gate P
    case $v in
      complete_hot|other_key_hot_updates) behind_gate A "SELECT idem.complete($(h 1), 200, NULL, convert_to('late', 'UTF8')); $(mark b_commit)" ;;
      vacuum_only) behind_gate A "BEGIN; $(acq reuse-key-000000002 ", ttl => '1 millisecond'" 2) SELECT idem.complete($(h 2), 201, NULL, 'take2'); COMMIT; $(mark b_commit)" ;;
    esac
    run P "BEGIN;"
    send P "SELECT set_config('x.t0', clock_timestamp()::text, false) IS NOT NULL AS t0, pg_advisory_unlock(42) AS gate_opened, idem.purge_expired(5) AS removed, set_config('x.t1', clock_timestamp()::text, false) IS NOT NULL AS t1;"
    collect A
    sleep 0.5
    run C "SELECT public.waiting(); SELECT public.locks();"
    run C "$(lp_of scanned) $(at reuse-key-000000002)"
    echo "--- VACUUM (VERBOSE, TRUNCATE false) idem.keys during the held DELETE:"
    psql -X -q "$PGURL_BASE/$DB" -c "VACUUM (VERBOSE, TRUNCATE false) idem.keys" 2>&1 | grep -E "^tuples: [0-9]+ removed, 3000|not removed" | sed -E 's/^tuples: [0-9]+ removed, [0-9]+ remain, /    /'
    run C "$(lp_of scanned)"
    if [ $v = other_key_hot_updates ]; then
      for i in 1 2 3 4 5 6 7 8; do q "UPDATE idem.keys SET last_error = 'x$i' WHERE tenant_id = 't1' AND client_key = 'reuse-nbr-00000000$i'" >/dev/null; done
      q "SELECT public.mk_hist('t1', 'reuse-new-' || lpad(i::text, 9, '0'), 1, '1 hour') FROM generate_series(1, 4) i" >/dev/null
      run C "SELECT client_key || ' at ' || ctid || CASE WHEN ctid = (SELECT t FROM public.ctids WHERE name = 'scanned') THEN '  <== ON THE SCANNED SLOT' ELSE '' END FROM idem.keys WHERE tenant_id = 't1' AND client_key LIKE 'reuse-%' ORDER BY ctid;"
    fi
    run G "SELECT pg_advisory_unlock(43) AS delete_gate_opened;"
    collect P
    run P "SELECT public.locks() AS purge_txn_locks; COMMIT; SELECT public.locks() AS after_commit;"
    run C "$(dels) SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1');"
    run P "SELECT idem.purge_expired(20) AS next_call, public.locks();"
    run C "$(dels) SELECT * FROM public.ret('t1');"
    run C "$(acq_show reuse-key-000000002 "")"
    run C "$(acq_show reuse-key-000000001 "")"
  done
  drop_triggers
  stop_all
}

# The key check in the DELETE itself: the statement 0.3.4 runs, fed a tid that holds another
# key's row (what a reused slot would hold), another tenant's, and a dead version.
s19b_key_check() {
  start C
  prep_034
  hist keycheck-key-00000001 3; hist keycheck-key-00000002 4
  q "SELECT public.mk_hist('t2', 'keycheck-key-00000001', 9)" >/dev/null
  remember_ctid keycheck-key-00000001 old_version
  q "UPDATE idem.keys SET last_error = 'v2' WHERE tenant_id = 't1' AND client_key = 'keycheck-key-00000001'" >/dev/null
  run C "SELECT tenant_id, client_key, ctid FROM idem.keys WHERE client_key LIKE 'keycheck-%' ORDER BY 1, 2; $(lp_of old_version)"
  del() {  # del LABEL TENANT CLIENT-KEY TID-EXPRESSION: the 0.3.4 DELETE, fed one locked key and one tid
    echo "BEGIN; WITH d AS (DELETE FROM idem.keys k USING unnest(ARRAY['$2'], ARRAY[public.dg('$2', '$3')], ARRAY[($4)]::tid[]) AS l(tenant_id, scope_digest, row_at)
      WHERE k.ctid = l.row_at AND k.tenant_id = l.tenant_id COLLATE \"C\" AND k.scope_digest = l.scope_digest AND k.expires_at < clock_timestamp() RETURNING k.client_key, k.generation)
      SELECT '$1: deleted ' || count(*) || coalesce(' ' || string_agg(client_key || ' g' || generation, ','), '') FROM d; ROLLBACK;"
  }
  run C "$(del 'tid of another key' t1 keycheck-key-00000001 "SELECT ctid FROM idem.keys WHERE tenant_id = 't1' AND client_key = 'keycheck-key-00000002'")"
  run C "$(del 'tid of another tenant, same client key' t1 keycheck-key-00000001 "SELECT ctid FROM idem.keys WHERE tenant_id = 't2' AND client_key = 'keycheck-key-00000001'")"
  run C "$(del 'tid of a dead version of the key' t1 keycheck-key-00000001 "SELECT t FROM public.ctids WHERE name = 'old_version'")"
  run C "$(del 'tid past the last line pointer' t1 keycheck-key-00000001 "SELECT ('(' || ((t::text::point)[0])::int || ',250)')::tid FROM public.ctids WHERE name = 'old_version'")"
  run C "$(del 'tid past the end of the heap' t1 keycheck-key-00000001 "'(99999999,1)'")"
  run C "$(del 'tid of the key itself (control)' t1 keycheck-key-00000001 "SELECT ctid FROM idem.keys WHERE tenant_id = 't1' AND client_key = 'keycheck-key-00000001'")"
  q "VACUUM (TRUNCATE false) idem.keys" >/dev/null
  run C "$(lp_of old_version)"
  run C "$(del 'tid of the pruned root (now a redirect)' t1 keycheck-key-00000001 "SELECT t FROM public.ctids WHERE name = 'old_version'")"
  run C "SELECT count(*) AS keycheck_rows_left FROM idem.keys WHERE client_key LIKE 'keycheck-%';"
  run C "SET enable_seqscan = off; EXPLAIN (COSTS OFF) DELETE FROM idem.keys k USING unnest(ARRAY['t1'], ARRAY[public.dg('t1', 'keycheck-key-00000001')], ARRAY['(0,1)']::tid[]) AS l(tenant_id, scope_digest, row_at) WHERE k.ctid = l.row_at AND k.tenant_id = l.tenant_id COLLATE \"C\" AND k.scope_digest = l.scope_digest AND k.expires_at < clock_timestamp();"
  stop_all
}

# (3) the purge's own transaction wrote the key earlier; savepoints rolled back around the call
s20_own_savepoints() {
  start A; start P; start C
  prep_034; log_trigger
  echo "## own write rolled back to a savepoint before the call: the old version is scanned and purged"
  hist own-key-000000000001 2 '10 minutes'
  run P "BEGIN; SAVEPOINT a; $(acq own-key-000000000001 ", lease => '1 millisecond', ttl => '1 millisecond'" 1) SELECT public.locks() AS in_savepoint;"
  run P "ROLLBACK TO SAVEPOINT a; SELECT public.locks() AS after_rollback_to; $(at own-key-000000000001)"
  run P "SELECT idem.purge_expired(5) AS removed; SELECT public.locks(); COMMIT; SELECT public.locks();"
  run C "SELECT * FROM public.ret('t1'); $(dels)"
  run C "$(acq_show own-key-000000000001 "")"
  reset; q "TRUNCATE public.del_log" >/dev/null
  echo "## own write kept (released savepoint), turned history within the transaction: passed over"
  hist own-key-000000000002 2 '10 minutes'
  run P "BEGIN; SAVEPOINT a; $(acq own-key-000000000002 ", lease => '1 millisecond', ttl => '1 millisecond'" 2) RELEASE SAVEPOINT a; SELECT idem.complete($(h 2), 200, NULL, 'own'); SELECT pg_sleep(0.01);"
  run P "SAVEPOINT b; SELECT idem.purge_expired(5) AS removed_own; SELECT public.locks();"
  run P "ROLLBACK TO SAVEPOINT b; SELECT public.locks() AS after_rollback_to_b; COMMIT;"
  run P "SELECT idem.purge_expired(5) AS removed_after_commit; SELECT public.locks();"
  run C "SELECT * FROM public.ret('t1'); $(dels)"
  reset; q "TRUNCATE public.del_log" >/dev/null
  echo "## purge in a savepoint, rolled back; another session rewrites the key; purge again in the same transaction"
  run A "$(acq own-key-000000000003 ", lease => '1 second', ttl => '1 millisecond'" 3)"
  run A "SELECT pg_sleep(1.1);"
  run P "BEGIN; SAVEPOINT a; SELECT idem.purge_expired(5) AS removed_in_sp; SELECT public.locks(); $(at own-key-000000000003)"
  run A "SET idem.wait_timeout = 0; SELECT idem.complete($(h 3), 200, NULL, 'late');"
  run P "ROLLBACK TO SAVEPOINT a; SELECT public.locks() AS after_rollback_to;"
  run A "SELECT idem.complete($(h 3), 200, NULL, 'late'); $(at own-key-000000000003)"
  run P "SELECT pg_sleep(0.01); SELECT idem.purge_expired(5) AS removed_again; SELECT public.locks(); COMMIT; SELECT public.locks();"
  run C "SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); $(dels)"
  run C "$(acq_show own-key-000000000003 "")"
  reset; q "TRUNCATE public.del_log" >/dev/null
  echo "## own HOT rewrite of a history record inside the purge's transaction (superuser UPDATE, no key lock), then purge"
  hist own-key-000000000004 5 '10 minutes'
  run P "BEGIN; UPDATE idem.keys SET last_error = 'own' WHERE client_key = 'own-key-000000000004'; SAVEPOINT s; UPDATE idem.keys SET last_error = 'own2' WHERE client_key = 'own-key-000000000004'; ROLLBACK TO SAVEPOINT s; $(at own-key-000000000004)"
  run P "SELECT idem.purge_expired(5) AS removed; SELECT public.locks(); COMMIT;"
  run C "SELECT * FROM public.ret('t1'); $(dels) SELECT public.locks();"
  drop_triggers
  stop_all
}

# (4) REPEATABLE READ / SERIALIZABLE purges against HOT and non-HOT rewrites
s21_isolation_rewrites() {
  start A; start P; start C
  prep_034; log_trigger
  for lvl in "REPEATABLE READ" SERIALIZABLE; do
    for v in hot_before_call hot_in_window takeover_in_window; do
      reset; q "TRUNCATE public.del_log" >/dev/null
      echo "######## $lvl, $v"
      run A "$(acq iso4-key-00000000000 ", lease => '1 second', ttl => '1 millisecond'" 1)"
      hist iso4-key-00000000001 1 '5 minutes'
      run A "SELECT pg_sleep(1.1);"
      case $v in
        hot_before_call)
          run P "BEGIN ISOLATION LEVEL $lvl; SELECT count(*) AS snapshot FROM idem.keys WHERE tenant_id = 't1';"
          run A "SELECT idem.complete($(h 1), 200, NULL, 'late'); SELECT pg_sleep(0.01);"
          run P "SELECT idem.purge_expired(5) AS removed;"
          run P "SELECT public.locks(); ROLLBACK;" ;;
        hot_in_window|takeover_in_window)
          gate P
          if [ $v = hot_in_window ]; then behind_gate A "SELECT idem.complete($(h 1), 200, NULL, 'late'); $(mark b_commit)"
          else behind_gate A "BEGIN; $(acq iso4-key-00000000000 ", ttl => '1 millisecond'" 2) SELECT idem.complete($(h 2), 201, NULL, 'take'); COMMIT; $(mark b_commit)"; fi
          run P "BEGIN ISOLATION LEVEL $lvl;"
          purge_opening_gate P 5
          collect A
          run P "SELECT public.locks(); ROLLBACK;" ;;
      esac
      run C "SELECT public.locks(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); $(dels)"
      run P "BEGIN ISOLATION LEVEL $lvl; SELECT idem.purge_expired(5) AS fresh_transaction; SELECT public.locks(); COMMIT;"
      run C "SELECT * FROM public.ret('t1'); SELECT public.locks();"
    done
  done
  drop_triggers
  stop_all
}

# (5) two and three purges at once, plus acquirers on the same keys, inside one call's window.
# P2 starts its purge 20 ms ahead of P1 (both read the filler first), deletes K and commits, and
# re-acquires K (a new row, a new generation) while P1's scan, whose snapshot still shows the old
# row, is on its way to K. P3 (variant three_purges) purges beside P1.
s22_purges_and_acquirers() {
  start P1; start P2; start P3; start C
  prep_034; log_trigger
  for v in lead_purge_new_gen_history lead_purge_new_gen_live three_purges_new_gen_history; do
    reset; q "TRUNCATE public.del_log" >/dev/null
    echo "## variant $v"
    hist mp-key-000000000000 4 '10 minutes'
    hist mp-key-000000000001 1 '5 minutes'; hist mp-key-000000000002 1 '4 minutes'
    case $v in
      *_history) send P2 "SELECT idem.purge_expired(1) AS p2; $(acq mp-key-000000000000 ", ttl => '1 millisecond'" 5) SELECT idem.complete($(h 5), 200, NULL, 'gen5'); $(mark b_commit)" ;;
      *_live) send P2 "SELECT idem.purge_expired(1) AS p2; $(acq mp-key-000000000000 "" 5) $(mark b_commit)" ;;
    esac
    sleep 0.02
    [ $v = three_purges_new_gen_history ] && send P3 "BEGIN; SELECT idem.purge_expired(5) AS p3;"
    run P1 "BEGIN;"
    run P1 "SELECT set_config('x.t0', clock_timestamp()::text, false) IS NOT NULL AS t0, idem.purge_expired(5) AS p1_removed, set_config('x.t1', clock_timestamp()::text, false) IS NOT NULL AS t1;"
    run P1 "SELECT public.locks() AS p1_txn_locks;"
    collect P2
    if [ $v = three_purges_new_gen_history ]; then collect P3; run C "SELECT public.locks() AS both_open;"; run P3 "COMMIT;"; fi
    run P1 "COMMIT;"
    window_report P1 b_commit
    run C "SELECT public.locks(), public.waiting(); SELECT * FROM public.st('t1'); SELECT * FROM public.ret('t1'); $(dels)"
    send P1 "SELECT idem.purge_expired(5) AS p1_next;"; send P2 "SELECT idem.purge_expired(5) AS p2_next;"; send P3 "SELECT idem.purge_expired(5) AS p3_next;"
    collect P1; collect P2; collect P3
    run C "SELECT public.locks(); SELECT * FROM public.ret('t1'); $(dels)"
    run C "$(acq_show mp-key-000000000000 "")"
  done
  drop_triggers
  stop_all
}

ALL="s18_rewrite_window s19_slot_reuse s19b_key_check s20_own_savepoints s21_isolation_rewrites s22_purges_and_acquirers"
export KEEP_DB=1
run_scenarios "${*:-$ALL}" 's/\([0-9]+,[0-9]+\)/(B,O)/g'
