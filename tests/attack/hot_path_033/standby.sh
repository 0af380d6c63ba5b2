#!/usr/bin/env bash
# A hot standby (a throwaway primary + streaming standby on ports 54391/54392 under /tmp, same
# binaries and library): replay, mismatch, in_progress and a new key on the standby, read through
# the primary key in recovery; compared with a 0.3.1 database on the same pair.
set -u
BIN=/usr/lib/postgresql/15/bin; R=/tmp/atk033_standby; P1=54391; P2=54392
as() { (cd / && runuser -u postgres -- "$@"); }
stop() { for d in standby primary; do [ -f $R/$d/postmaster.pid ] && as $BIN/pg_ctl -D $R/$d -m fast -w stop >/dev/null; done; }
trap 'stop; rm -rf $R' EXIT
rm -rf $R; mkdir -p $R/sock; chown -R postgres $R
as $BIN/initdb -D $R/primary -U postgres -A trust -E UTF8 --locale=C.UTF-8 >/dev/null
as tee -a $R/primary/postgresql.conf >/dev/null <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$R/sock'
port = $P1
shared_buffers = 32MB
max_connections = 20
wal_level = replica
max_wal_senders = 3
hot_standby = on
max_prepared_transactions = 5
CONF
echo "host replication postgres 127.0.0.1/32 trust" | as tee -a $R/primary/pg_hba.conf >/dev/null
as $BIN/pg_ctl -D $R/primary -l $R/primary.log -w start >/dev/null
as $BIN/pg_basebackup -h 127.0.0.1 -p $P1 -U postgres -D $R/standby -R -X stream >/dev/null
as sed -i "s/^port = $P1/port = $P2/" $R/standby/postgresql.conf
as $BIN/pg_ctl -D $R/standby -l $R/standby.log -w start >/dev/null
PRI=postgresql://postgres@127.0.0.1:$P1; STB=postgresql://postgres@127.0.0.1:$P2
for v in 0.3.1 0.3.3; do
  db=atk033_sb_${v//./_}
  psql -X -q $PRI/postgres -c "CREATE DATABASE $db"
  psql -X -q -At $PRI/$db <<SQL
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '$v';
SELECT idem.complete(handle, attempt, 201, '{"h":"v"}', convert_to(repeat('big', 400000), 'UTF8'), 'ord-1') IS NULL FROM idem.acquire('acme', 'sb-000000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'sb-000000000000002', '{"a":1}'::jsonb, lease => '1 hour');
SELECT pg_sleep(0.5);
SQL
  until [ "$(psql -X -At $STB/postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$db'" 2>/dev/null)" = 1 ] && \
        [ "$(psql -X -At $STB/$db -c "SELECT count(*) FROM idem.keys" 2>/dev/null)" = 2 ]; do sleep 0.2; done
  echo "== $v on the standby (pg_is_in_recovery=$(psql -X -At $STB/$db -c 'SELECT pg_is_in_recovery()'))"
  psql -X -q -At $STB/$db <<'SQL' 2>&1 | sed -E 's/[0-9a-f]{32}/<S>/g'
\set VERBOSITY terse
SELECT outcome, response_status, octet_length(response_body), md5(response_body) = md5(convert_to(repeat('big', 400000), 'UTF8')), response_headers, order_id FROM idem.acquire('acme', 'sb-000000000000001', '{"a":1}'::jsonb);
SELECT outcome, generation FROM idem.acquire('acme', 'sb-000000000000001', '{"a":2}'::jsonb);
SELECT outcome, retry_after FROM idem.acquire('acme', 'sb-000000000000002', '{"a":1}'::jsonb);
SELECT outcome, retry_after FROM idem.acquire('acme', 'sb-000000000000002', '{"a":1}'::jsonb, on_busy => 'wait');
SELECT outcome FROM idem.acquire('acme', 'sb-000000000000003', '{"a":1}'::jsonb);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT outcome FROM idem.acquire('acme', 'sb-000000000000001', '{"a":1}'::jsonb);
SELECT outcome FROM idem.acquire('acme', 'sb-000000000000003', '{"a":1}'::jsonb);
ROLLBACK;
SELECT count(*) AS key_locks_left FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SQL
done
psql -X -q -At $PRI/atk033_sb_0_3_3 -c "SELECT count(*) AS audit_rows_on_primary FROM idem.mutations"
