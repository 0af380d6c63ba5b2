#!/usr/bin/env bash
# complete's UPDATE stays HOT (pg_stat_user_tables.n_tup_hot_upd) on 0.3.2 (generated column) and
# 0.3.3 (trigger): N new keys completed through the C path, through the general path (a plain
# handle), after a checkpoint, and a release.   Usage: hot_updates.sh [N]  (default 300)
B=${PGURL_BASE:-postgresql://postgres@127.0.0.1:54320}; N=${1:-300}
for v in 0.3.2 0.3.3; do
  DB=atk033_hot_${v//./_}
  psql -X -q "$B/postgres" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" 2>&1 | grep -v NOTICE
  psql -X -q "$B/$DB" -c "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'"
  stat() { psql -X -q -At "$B/$DB" -c "SELECT pg_stat_force_next_flush()" -c "SELECT pg_sleep(0.6)" >/dev/null; psql -X -q -At "$B/$DB" -c "SELECT n_tup_upd || ' updates, ' || n_tup_hot_upd || ' HOT' FROM pg_stat_user_tables WHERE relid = 'idem.keys'::regclass"; }
  base=$(stat)
  psql -X -q -At "$B/$DB" -c "DO \$\$ DECLARE r record; BEGIN FOR i IN 1..$N LOOP
      SELECT * INTO r FROM idem.acquire('acme', format('hot-%s-000000000000', i), '{}'::jsonb);
      COMMIT;
      PERFORM idem.complete(r.handle, r.attempt, 200, '{}', 'body');
      COMMIT; END LOOP; END \$\$" -c "SELECT pg_stat_force_next_flush()" >/dev/null
  c=$(stat)
  psql -X -q -At "$B/$DB" -c "DO \$\$ DECLARE r record; BEGIN FOR i IN 1..$N LOOP
      SELECT * INTO r FROM idem.acquire('acme', format('hotg-%s-00000000000', i), '{}'::jsonb);
      COMMIT;
      PERFORM idem.complete(regexp_replace(r.handle, ':[0-9a-f]{32}\$', ''), r.attempt, 200, '{}', 'body');
      COMMIT; END LOOP; END \$\$" -c "SELECT pg_stat_force_next_flush()" >/dev/null 2>&1
  g=$(stat)
  psql -X -q -At "$B/$DB" -c "DO \$\$ DECLARE r record; BEGIN FOR i IN 1..$N LOOP
      SELECT * INTO r FROM idem.acquire('acme', format('hotc-%s-00000000000', i), '{}'::jsonb);
      COMMIT;
      PERFORM idem.checkpoint(r.handle, r.attempt, 'cp');
      COMMIT;
      PERFORM idem.complete(r.handle, r.attempt, 200, '{}', 'body');
      COMMIT; END LOOP; END \$\$" >/dev/null
  cp=$(stat)
  psql -X -q -At "$B/$DB" -c "DO \$\$ DECLARE r record; BEGIN FOR i IN 1..$N LOOP
      SELECT * INTO r FROM idem.acquire('acme', format('hotr-%s-00000000000', i), '{}'::jsonb);
      COMMIT;
      PERFORM idem.release(r.handle, r.attempt, 'x');
      COMMIT; END LOOP; END \$\$" >/dev/null
  rl=$(stat)
  echo "$v: before: $base | +$N complete (C): $c | +$N complete (plain handle): $g | +$N checkpoint+complete: $cp | +$N release: $rl"
  psql -X -q "$B/postgres" -c "DROP DATABASE $DB"
done
