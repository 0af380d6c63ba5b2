#!/usr/bin/env bash
# Control for tenant_cache_rr_poison.sh: the same steps in READ COMMITTED. A binding committed
# by A takes effect in warm backend B's next transaction (this holds).
DB=attack_hp_tbrc; . "$(dirname "$0")/lib.sh"
setup_db
psql_admin "DROP ROLE IF EXISTS attack_hp_svc2" >/dev/null 2>&1
psql_admin "CREATE ROLE attack_hp_svc2 LOGIN IN ROLE idem_service"
start A; start B
run B "SET SESSION AUTHORIZATION attack_hp_svc2;"
run B "SELECT outcome FROM idem.acquire('globex', 'warm-0000000000001', '{}'::jsonb);"
run B "BEGIN; SELECT 1;"
run A "SELECT idem.bind_tenant('attack_hp_svc2', 'acme');"
run B "SELECT outcome FROM idem.acquire('globex', 'rc-00000000000001', '{}'::jsonb);"
run B "SELECT outcome FROM idem.acquire('globex', 'rc-00000000000002', '{}'::jsonb);"
run B "COMMIT;"
run B "SELECT outcome FROM idem.acquire('globex', 'after-000000000001', '{}'::jsonb);"
echo "### unbind, then bind again while B is warm with 'some bindings':"
run A "SELECT idem.unbind_tenant('attack_hp_svc2', 'acme');"
run B "SELECT outcome FROM idem.acquire('globex', 'after-000000000002', '{}'::jsonb);"
run A "INSERT INTO idem.tenant_bindings VALUES ('attack_hp_svc2'::regrole, 'acme', 'x', now());"
run B "SELECT outcome FROM idem.acquire('globex', 'after-000000000003', '{}'::jsonb);"
run A "TRUNCATE idem.tenant_bindings;"
run B "SELECT outcome FROM idem.acquire('globex', 'after-000000000004', '{}'::jsonb);"
run A "BEGIN; INSERT INTO idem.tenant_bindings VALUES ('attack_hp_svc2'::regrole, 'acme', 'x', now()); SAVEPOINT s; UPDATE idem.tenant_bindings SET bound_by='y'; ROLLBACK TO s; COMMIT;"
run B "SELECT outcome FROM idem.acquire('globex', 'after-000000000005', '{}'::jsonb);"
finish
psql_admin "DROP ROLE IF EXISTS attack_hp_svc2" >/dev/null
