#!/usr/bin/env bash
# Runs a multi-session scenario (a file defining scenario(), driven by lib.sh) against each of
# VERSIONS (default "0.3.1 0.3.3": the PL/pgSQL reference, then the C fast path), each in a fresh
# ${ATTACK_PREFIX:-attack_hp}_m_* database, and diffs each normalized transcript against the first.
# Usage: [VERSIONS="0.3.1 0.3.3"] [SHOW=1] diff_multi.sh scenario_file.sh
D=$(cd "$(dirname "$0")" && pwd); SCEN=$1; T=$(mktemp -d)
NEW=${ATTACK_NEW_VERSION:-0.3.3}  # the C fast path (0.3.2 and later share the library)
for v in ${VERSIONS:-0.3.1 $NEW}; do
  (
    DB=${ATTACK_PREFIX:-attack_hp}_m_${v//./_}; . "$D/lib.sh"
    psql_admin "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1; psql_admin "CREATE DATABASE $DB"
    q "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'" >/dev/null
    q "CREATE FUNCTION public.locks() RETURNS text LANGUAGE sql AS \$\$SELECT 'key locks held by ' || coalesce(string_agg(DISTINCT coalesce(a.application_name, 'a prepared xact'), ','), 'nobody') FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.objsubid = 3 AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())\$\$" >/dev/null
    . "$SCEN"
    scenario
    finish
  ) 2>&1 | sed -E 's/[0-9a-f]{32}/<S>/g; s/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.+]+/<ts>/g; /^LOCATION:/d' >"$T/$v"
done
VS=(${VERSIONS:-0.3.1 $NEW})
for v in "${VS[@]:1}"; do
  [ -n "${SHOW:-}" ] && cat "$T/$v"
  echo "=============== diff ${VS[0]} -> $v:"
  diff "$T/${VS[0]}" "$T/$v" && echo "no difference"
done
mkdir -p "/tmp/${ATTACK_PREFIX:-attack_hp}_out"; cp "$T"/* "/tmp/${ATTACK_PREFIX:-attack_hp}_out/" 2>/dev/null
rm -rf "$T"
