#!/usr/bin/env bash
# FINDING: the per-backend "no tenant binding exists" cache (extension/hot_path/tenant_check.cpp)
# is refilled from a REPEATABLE READ / SERIALIZABLE snapshot that predates a binding, after the
# binding's relcache invalidation was already absorbed (it is absorbed when the transaction first
# locks a relation, after its snapshot was taken). The backend then caches "no bindings" for
# good: the bound role keeps acting for, and replaying the stored responses of, every tenant in
# all its later transactions. Runs the same steps on 0.3.1 (reference) and 0.3.2.
D=$(cd "$(dirname "$0")" && pwd)
for v in 0.3.1 0.3.2; do
  echo "================ version $v"
  (
    DB=attack_hp_tb_${v//./_}; . "$D/lib.sh"
    psql_admin "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1; psql_admin "CREATE DATABASE $DB"
    q "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'" >/dev/null
    psql_admin "DROP ROLE IF EXISTS attack_hp_svc" >/dev/null 2>&1
    psql_admin "CREATE ROLE attack_hp_svc LOGIN IN ROLE idem_service"
    # globex's own service stored a response under a key.
    q "SELECT idem.complete(handle, attempt, 200, NULL, 'globex card 4242, balance 1000000') FROM idem.acquire('globex', 'gx-00000000000001', '{\"pay\":1}'::jsonb)" >/dev/null
    start A; start B
    run B "SET SESSION AUTHORIZATION attack_hp_svc;"
    for iso in "REPEATABLE READ" ; do
      run B "BEGIN ISOLATION LEVEL $iso; SELECT 1;"                # B's snapshot: no binding yet
      run A "SELECT idem.bind_tenant('attack_hp_svc', 'acme');"   # committed
      run B "SELECT outcome FROM idem.acquire('acme', 'rr-00000000000001', '{}'::jsonb);"   # first call in this (fresh) backend
      run B "COMMIT;"
    done
    echo "### B's next transactions: the binding must apply (ERR_TENANT_FORBIDDEN for globex)"
    run B "SELECT outcome FROM idem.acquire('globex', 'after-000000000001', '{}'::jsonb);"
    run B "SELECT outcome, convert_from(response_body, 'UTF8') FROM idem.acquire('globex', 'gx-00000000000001', '{\"pay\":1}'::jsonb);"
    run B "SELECT pg_sleep(1); SELECT outcome FROM idem.acquire('globex', 'after-000000000002', '{}'::jsonb);"
    echo "### a fresh backend of the same role:"
    run A "SET SESSION AUTHORIZATION attack_hp_svc; SELECT outcome FROM idem.acquire('globex', 'after-000000000003', '{}'::jsonb);"
    finish
    psql_admin "DROP ROLE IF EXISTS attack_hp_svc" >/dev/null
  )
done
