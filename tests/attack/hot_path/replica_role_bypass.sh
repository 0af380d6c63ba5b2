#!/usr/bin/env bash
# HELD (after the ENABLE ALWAYS change now in the 0.3.2 script): with session_replication_role = replica
# (what logical replication's apply worker and pg_restore --disable-triggers use) ordinary
# triggers do not fire. 0.3.1's CHECK constraints still refused a broken record; 0.3.2's
# invariant trigger does not, and a binding written that way never reaches the warm backends'
# "no bindings" cache (the statement trigger that invalidates it does not fire either).
D=$(cd "$(dirname "$0")" && pwd)
for v in 0.3.1 0.3.2; do
  echo "================ version $v"
  (
    DB=attack_hp_rep_${v//./_}; . "$D/lib.sh"
    psql_admin "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1; psql_admin "CREATE DATABASE $DB"
    q "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'" >/dev/null
    psql_admin "DROP ROLE IF EXISTS attack_hp_rsvc" >/dev/null 2>&1
    psql_admin "CREATE ROLE attack_hp_rsvc LOGIN IN ROLE idem_service"
    q "SELECT outcome FROM idem.acquire('acme', 'rp-00000000000001', '{}'::jsonb)" >/dev/null
    start A; start B
    run A "SET session_replication_role = replica; UPDATE idem.keys SET status = 'bogus', generation = 0, attempt = -1 RETURNING status, generation, attempt;"
    run B "SET SESSION AUTHORIZATION attack_hp_rsvc; SELECT outcome FROM idem.acquire('globex', 'rp-00000000000002', '{}'::jsonb);"
    run A "INSERT INTO idem.tenant_bindings VALUES ('attack_hp_rsvc'::regrole, 'acme', 'replica', now()); RESET session_replication_role;"
    run B "SELECT outcome FROM idem.acquire('globex', 'rp-00000000000003', '{}'::jsonb);"
    finish
    psql_admin "DROP ROLE IF EXISTS attack_hp_rsvc" >/dev/null
  )
done
