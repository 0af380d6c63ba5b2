#!/usr/bin/env bash
# A heavier randomized mix aimed at 0.3.4's ctid DELETE (about $SECONDS_EACH s per version):
# 3 acquirers over 8 keys (acquire, then complete (ttl 5..20 ms), or abandon the lease (30 ms) and
# complete it late a few rounds later: HOT rewrites of records the purge may have scanned; 15 % of
# transactions rolled back), 3 purgers (purge_expired(3), short transactions, 15 % rolled back,
# every 4th REPEATABLE READ, every 7th SERIALIZABLE), one session running VACUUM every 100 ms
# (pruning, freed line pointers), idem.keys at fillfactor 50 (room for HOT on every page).
# Afterwards, from an AFTER DELETE log of idem.keys (only committed deletes stay):
#   - a record deleted while not history, a (key, generation) deleted twice,
#   - a deleted generation above the key's retired generation,
#   - committed acquired generations per key not 1, 2, 3, ... in token order,
#   - a replay of generation g after an acquire of a higher generation had been logged 100 ms before,
#   - key locks left.
export ATTACK_OLD=${ATTACK_OLD:-0.3.3} ATTACK_NEW=${ATTACK_NEW:-0.3.4} ATTACK_PREFIX=${ATTACK_PREFIX:-atk_p034}
cd "$(dirname "$0")/../purge" && . ./lib.sh
SECONDS_EACH=${SECONDS_EACH:-20}
for ver in "$ATTACK_OLD" "$ATTACK_NEW"; do
  DB=${ATTACK_PREFIX}_stress2_${ver//./}
  setup_db "$DB" "$ver"
  q "ALTER TABLE idem.keys SET (fillfactor = 50);
     CREATE TABLE public.acq_log (client_key text, generation integer, attempt bigint, at timestamptz DEFAULT clock_timestamp());
     CREATE TABLE public.replay_log (client_key text, generation integer, started timestamptz);
     CREATE TABLE public.errs (who text, state text, msg text);
     CREATE TABLE public.del_log (client_key text, generation integer, status text, expires_at timestamptz, at timestamptz, t tid, iso text);
     CREATE FUNCTION public.log_del() RETURNS trigger LANGUAGE plpgsql AS \$\$ BEGIN
       INSERT INTO public.del_log VALUES (OLD.client_key, OLD.generation, OLD.status, OLD.expires_at, clock_timestamp(), OLD.ctid, current_setting('transaction_isolation')); RETURN OLD; END \$\$;
     CREATE TRIGGER zz_log_del AFTER DELETE ON idem.keys FOR EACH ROW EXECUTE FUNCTION public.log_del();" >/dev/null
  acquirer() {
    psql -X -q "$PGURL_BASE/$DB" -c "DO \$\$ DECLARE r record; k text; t0 timestamptz := clock_timestamp(); started timestamptz;
        late_h text; late_a bigint; late_n integer := 0; BEGIN
      WHILE clock_timestamp() < t0 + interval '$SECONDS_EACH seconds' LOOP
        k := 'stress-key-' || lpad((1 + floor(random() * 8))::text, 6, '0');
        started := clock_timestamp();
        BEGIN
          SELECT * INTO r FROM idem.acquire('t1', k, '{\"a\":1}'::jsonb, ttl => make_interval(secs => (5 + floor(random() * 16)) / 1000.0), lease => '30 milliseconds');
          IF r.outcome = 'acquired' THEN
            INSERT INTO public.acq_log VALUES (k, r.generation, r.attempt);
            IF random() < 0.2 AND late_h IS NULL THEN late_h := r.handle; late_a := r.attempt; late_n := 0;   -- abandoned, completed late
            ELSE PERFORM idem.complete(r.handle, r.attempt, 200, NULL, convert_to(k || ' g' || r.generation, 'UTF8')); END IF;
          ELSIF r.outcome = 'replay' THEN
            INSERT INTO public.replay_log VALUES (k, r.generation, started);
          END IF;
        EXCEPTION WHEN OTHERS THEN INSERT INTO public.errs VALUES ('acquirer', SQLSTATE, SQLERRM);
        END;
        IF late_h IS NOT NULL THEN
          late_n := late_n + 1;
          IF late_n > 3 THEN
            BEGIN PERFORM idem.complete(late_h, late_a, 200, NULL, 'late');
            EXCEPTION WHEN OTHERS THEN INSERT INTO public.errs VALUES ('late complete', SQLSTATE, left(SQLERRM, 40)); END;
            late_h := NULL;
          END IF;
        END IF;
        IF random() < 0.15 THEN ROLLBACK; ELSE COMMIT; END IF;
        PERFORM pg_sleep(0.002);
      END LOOP; END \$\$;" 2>&1
  }
  purger() {
    local n
    for n in $(seq 1 $((SECONDS_EACH * 100))); do
      if [ $((n % 7)) = 0 ]; then echo "BEGIN ISOLATION LEVEL SERIALIZABLE;"
      elif [ $((n % 4)) = 0 ]; then echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"; else echo "BEGIN;"; fi
      echo "SELECT idem.purge_expired(3);"
      if [ $((RANDOM % 100)) -lt 15 ]; then echo "ROLLBACK;"; else echo "COMMIT;"; fi
      echo "SELECT pg_sleep(0.004);"
    done | psql -X -q -At "$PGURL_BASE/$DB" >/dev/null 2>>"$WORK/purger.err"
  }
  vacuumer() {
    local n
    for n in $(seq 1 $((SECONDS_EACH * 10))); do echo "VACUUM (TRUNCATE false) idem.keys;"; echo "SELECT pg_sleep(0.1);"; done | psql -X -q -At "$PGURL_BASE/$DB" >/dev/null 2>>"$WORK/vacuum.err"
  }
  acquirer & acquirer & acquirer & purger & purger & purger & vacuumer &
  wait
  echo "== $ver"
  q "SELECT 'acquired (committed): ' || count(*) || ', distinct keys ' || count(DISTINCT client_key) FROM public.acq_log"
  q "SELECT 'records deleted (committed): ' || count(*) || ', by isolation: ' || coalesce((SELECT string_agg(iso || '=' || n, ' ') FROM (SELECT iso, count(*) n FROM public.del_log GROUP BY 1) s), '-') FROM public.del_log"
  q "SELECT 'replays: ' || count(*) FROM public.replay_log"
  q "SELECT 'errors: ' || coalesce(string_agg(who || ' ' || state || ' ' || msg || ' x' || n, '; '), 'none') FROM (SELECT who, state, msg, count(*) n FROM public.errs GROUP BY 1, 2, 3) e"
  echo "purger errors: $(grep ERROR "$WORK/purger.err" | sed 's/ at character.*//' | sort | uniq -c | tr '\n' ';')"; rm -f "$WORK/purger.err"
  echo "vacuum errors: $(grep -c ERROR "$WORK/vacuum.err" 2>/dev/null)"; rm -f "$WORK/vacuum.err"
  q "SELECT 'VIOLATION deleted while not history: ' || count(*) FROM public.del_log WHERE expires_at IS NULL OR expires_at >= at"
  q "SELECT 'VIOLATION (key, generation) deleted twice: ' || count(*) FROM (SELECT client_key, generation FROM public.del_log GROUP BY 1, 2 HAVING count(*) > 1) s"
  q "SELECT 'VIOLATION deleted generation above retired: ' || count(*) FROM public.del_log d WHERE NOT EXISTS (SELECT 1 FROM idem.retired_keys g WHERE g.scope_digest = idem.scope_digest('t1', '', '', d.client_key) AND g.generation >= d.generation)"
  q "SELECT 'VIOLATION generation sequence: ' || count(*) FROM (SELECT client_key, generation, row_number() OVER (PARTITION BY client_key ORDER BY attempt) AS n FROM public.acq_log) s WHERE generation <> n"
  q "SELECT 'VIOLATION retired generation >= live record''s: ' || count(*) FROM idem.keys k JOIN idem.retired_keys g USING (tenant_id, scope_digest) WHERE g.generation >= k.generation"
  q "SELECT 'VIOLATION stale replay (a higher generation acquired 100 ms before): ' || count(*) FROM public.replay_log r WHERE EXISTS (SELECT 1 FROM public.acq_log a WHERE a.client_key = r.client_key AND a.generation > r.generation AND a.at < r.started - interval '100 milliseconds')"
  q "SELECT 'VIOLATION replay of a generation whose delete was logged 100 ms before: ' || count(*) FROM public.replay_log r WHERE EXISTS (SELECT 1 FROM public.del_log d WHERE d.client_key = r.client_key AND d.generation = r.generation AND d.at < r.started - interval '100 milliseconds')"
  q "SELECT 'key locks left: ' || public.locks()"
  [ -n "${KEEP_DB:-}" ] || psql_admin "DROP DATABASE $DB"
done
