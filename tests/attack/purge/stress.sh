#!/usr/bin/env bash
# A light randomized mix (about $SECONDS_EACH s per version): 2 acquirers cycling over 12 keys (acquire +
# complete with a 20 ms TTL, 15 % of transactions rolled back), 3 purgers (purge_expired(3) in short
# transactions, 15 % rolled back, every 4th under REPEATABLE READ). Afterwards: every committed
# 'acquired' of a key must carry generation 1, 2, 3, ... in token order (no repeat, no step back),
# no key lock may be left, no one may have waited on a lock for long.
cd "$(dirname "$0")" && . ./lib.sh
SECONDS_EACH=${SECONDS_EACH:-15}
for ver in "$ATTACK_OLD" "$ATTACK_NEW"; do
  DB=${ATTACK_PREFIX}_stress_${ver//./}
  setup_db "$DB" "$ver"
  q "CREATE TABLE public.acq_log (client_key text, generation integer, attempt bigint); CREATE TABLE public.errs (who text, state text, msg text);" >/dev/null
  acquirer() {
    psql -X -q "$PGURL_BASE/$DB" -c "DO \$\$ DECLARE r record; k text; t0 timestamptz := clock_timestamp(); BEGIN
      WHILE clock_timestamp() < t0 + interval '$SECONDS_EACH seconds' LOOP
        k := 'stress-key-' || lpad((1 + floor(random() * 12))::text, 6, '0');
        BEGIN
          SELECT * INTO r FROM idem.acquire('t1', k, '{\"a\":1}'::jsonb, ttl => '20 milliseconds', lease => '5 seconds');
          IF r.outcome = 'acquired' THEN
            INSERT INTO public.acq_log VALUES (k, r.generation, r.attempt);
            PERFORM idem.complete(r.handle, r.attempt, 200, NULL, 'x');
          END IF;
        EXCEPTION WHEN OTHERS THEN INSERT INTO public.errs VALUES ('acquirer', SQLSTATE, SQLERRM);
        END;
        IF random() < 0.15 THEN ROLLBACK; ELSE COMMIT; END IF;
        PERFORM pg_sleep(0.003);
      END LOOP; END \$\$;" 2>&1
  }
  purger() {  # a psql script of short purge transactions; errors go to $WORK/purger.err
    local n
    for n in $(seq 1 $((SECONDS_EACH * 120))); do
      if [ $((n % 4)) = 0 ]; then echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"; else echo "BEGIN;"; fi
      echo "SELECT idem.purge_expired(3);"
      if [ $((RANDOM % 100)) -lt 15 ]; then echo "ROLLBACK;"; else echo "COMMIT;"; fi
      echo "SELECT pg_sleep(0.005);"
    done | psql -X -q -At "$PGURL_BASE/$DB" >/dev/null 2>>"$WORK/purger.err"
  }
  acquirer & acquirer & purger & purger & purger &
  wait
  echo "== $ver"
  q "SELECT 'acquired (committed): ' || count(*) FROM public.acq_log"
  q "SELECT 'errors: ' || coalesce(string_agg(who || ' ' || state || ' ' || msg || ' x' || n, '; '), 'none') FROM (SELECT who, state, msg, count(*) n FROM public.errs GROUP BY 1, 2, 3) e"
  echo "purger errors: $(grep ERROR "$WORK/purger.err" | sort | uniq -c | tr '\n' ';')"; rm -f "$WORK/purger.err"
  q "SELECT 'generation sequence violations: ' || count(*) FROM (SELECT client_key, generation, row_number() OVER (PARTITION BY client_key ORDER BY attempt) AS n FROM public.acq_log) s WHERE generation <> n"
  q "SELECT 'keys whose retired generation is above the record''s: ' || count(*) FROM idem.keys k JOIN idem.retired_keys g USING (tenant_id, scope_digest) WHERE g.generation >= k.generation"
  q "SELECT 'key locks left: ' || public.locks()"
  psql_admin "DROP DATABASE $DB"
done
