#!/usr/bin/env bash
# A database restored from pg_dump is the one dumped: records replay, the audit trail, transition
# log and operator log go on counting where they stopped, bindings still bind, the user's own
# state machines and registered tables come back, and the built-in machines are not doubled.
# Needs IDEM_TEST_URL (the throwaway server); uses databases idem_dump_src and idem_dump_dst.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
url=${IDEM_TEST_URL:?set IDEM_TEST_URL to the throwaway server}
base=${url%/*}
bin=$root/build/pg-install/usr/lib/postgresql/15/bin
[ -x "$bin/pg_dump" ] || bin=/usr/lib/postgresql/15/bin
src=$base/idem_dump_src dst=$base/idem_dump_dst
checks=0 fails=0
check() { # check NAME WANT GOT
  checks=$((checks + 1))
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: want '$2', got '$3'"; fails=$((fails + 1)); fi
}
q() { psql "$1" -qAtX -v ON_ERROR_STOP=1 -c "$2" 2>&1; }

export PGOPTIONS="-c client_min_messages=warning"
for db in idem_dump_src idem_dump_dst; do
  psql "$url" -qAtX -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
done
psql "$src" -qAtX -v ON_ERROR_STOP=1 >/dev/null <<'SQL'
CREATE EXTENSION pg_idempotency;
DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'idem_dump_svc') THEN
  CREATE ROLE idem_dump_svc NOLOGIN IN ROLE idem_service; END IF; END $$;
SELECT idem.bind_tenant('idem_dump_svc', 'acme');
-- two records: one completed (replays), one in progress
SELECT idem.complete(handle, attempt, 201, '{"Location":"/orders/1"}', 'order one')
  FROM idem.acquire('acme', 'dump-key-0000001', '{"n":1}'::jsonb);
SELECT count(*) FROM idem.acquire('acme', 'dump-key-0000002', '{"n":2}'::jsonb);
-- a machine of the user's own beside the built-in ones, guarding a registered table
INSERT INTO idem.machine_states (machine, state, description) VALUES ('ticket', 'open', 'new'), ('ticket', 'closed', 'done');
INSERT INTO idem.machine_transitions (machine, from_state, to_state) VALUES ('ticket', 'open', 'closed');
CREATE TABLE tickets (ticket_id text PRIMARY KEY, tenant_id text COLLATE "C" NOT NULL, status text NOT NULL);
CREATE TRIGGER tickets_status BEFORE INSERT OR UPDATE ON tickets
  FOR EACH ROW EXECUTE FUNCTION idem.enforce_transitions('ticket', 'status', 'ticket_id');
SELECT idem.register_machine_table('tickets', 'ticket', 'status', 'ticket_id', 'tenant_id');
INSERT INTO tickets VALUES ('t-1', 'acme', 'open'), ('t-2', 'acme', 'open');
UPDATE tickets SET status = 'closed' WHERE ticket_id = 't-1';
SQL
check "source database set up" "0" "$?"

out=$("$bin/pg_dump" -d "$src" -f "$root/build/dump_restore_test.sql" 2>&1)
check "pg_dump succeeds" "" "$out"
check "the binding is dumped by role name, for a restore into another cluster" "idem_dump_svc acme" \
  "$(awk '/^COPY idem.tenant_bindings /{copy=1; next} copy && /^\\\./{copy=0} copy {print $1, $2}' "$root/build/dump_restore_test.sql")"
out=$(psql "$dst" -qAtX -v ON_ERROR_STOP=1 -f "$root/build/dump_restore_test.sql" 2>&1 >/dev/null)
check "the dump restores without an error" "" "$out"

for table in keys mutations transition_log tenant_bindings machine_states machine_transitions machine_tables; do
  check "idem.$table has as many rows as dumped" "$(q "$src" "SELECT count(*) FROM idem.$table")" "$(q "$dst" "SELECT count(*) FROM idem.$table")"
done
check "the user's machine is back" "ticket open closed" "$(q "$dst" "SELECT machine || ' ' || from_state || ' ' || to_state FROM idem.machine_transitions WHERE machine = 'ticket'")"
check "the completed record replays its response" "replay 201 order one" \
  "$(q "$dst" "SELECT outcome || ' ' || response_status || ' ' || convert_from(response_body, 'UTF8') FROM idem.acquire('acme', 'dump-key-0000001', '{\"n\":1}'::jsonb)")"
check "the record in progress is still busy" "in_progress" \
  "$(q "$dst" "SELECT outcome FROM idem.acquire('acme', 'dump-key-0000002', '{\"n\":2}'::jsonb)")"

max_mutation=$(q "$src" "SELECT max(mutation_id) FROM idem.mutations")
max_log=$(q "$src" "SELECT max(log_id) FROM idem.transition_log")
out=$(q "$dst" "SELECT count(idem.complete(handle, attempt, 201, '{}', 'order three')) FROM idem.acquire('acme', 'dump-key-0000003', '{\"n\":3}'::jsonb)")
check "a new record completes after the restore" "1" "$out"
check "the audit trail counts on from the dump" "t" "$(q "$dst" "SELECT min(mutation_id) > $max_mutation FROM idem.mutations WHERE client_key = 'dump-key-0000003'")"
out=$(q "$dst" "UPDATE tickets SET status = 'closed' WHERE ticket_id = 't-2'")
check "a guarded transition is logged after the restore" "" "$out"
check "the transition log counts on from the dump" "1" "$(q "$dst" "SELECT count(*) FROM idem.transition_log WHERE log_id > $max_log AND row_key = 't-2' AND to_state = 'closed'")"
out=$(q "$dst" "SET SESSION AUTHORIZATION idem_dump_svc; SELECT outcome FROM idem.acquire('initech', 'dump-key-0000004', '{}'::jsonb)")
check "a bound role is still bound after the restore" "ERR_TENANT_FORBIDDEN" "$(grep -o 'ERR_TENANT_FORBIDDEN' <<<"$out" | head -1)"

for db in idem_dump_src idem_dump_dst; do psql "$url" -qAtX -c "DROP DATABASE IF EXISTS $db" >/dev/null; done
rm -f "$root/build/dump_restore_test.sql"
echo "dump_restore_test: $((checks - fails)) of $checks checks passed"
[ "$fails" = 0 ]
