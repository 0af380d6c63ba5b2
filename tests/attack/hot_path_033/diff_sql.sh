#!/usr/bin/env bash
# Usage: diff_sql.sh FILE.sql [v1 v2 ...]  (default 0.3.1 0.3.3): runs FILE.sql in a fresh atk033_* database
# per version, normalizes secrets/timestamps and diffs each against the first version.
B=${PGURL_BASE:-postgresql://postgres@127.0.0.1:54320}
F=$1; shift; VERS=("${@:-0.3.1 0.3.3}"); [ $# -eq 0 ] && VERS=(0.3.1 0.3.3)
W=$(mktemp -d); name=$(basename "$F" .sql)
for v in "${VERS[@]}"; do
  db=atk033_${name}_${v//./_}
  psql -X -q "$B/postgres" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" 2>/dev/null
  psql -X -q "$B/$db" -c "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'"
  psql -X -q -P pager=off -v db="$db" "$B/$db" -f "$F" 2>&1 \
    | sed -E 's/[0-9a-f]{32}/<S>/g; s/[0-9]{4}-[0-9]{2}-[0-9]{2}[ T][0-9:.+]+/<ts>/g; /^LOCATION:/d; s/^psql:[^:]+:[0-9]+: //' >"$W/$v"
  [ -n "${KEEP:-}" ] || psql -X -q "$B/postgres" -c "DROP DATABASE $db"
done
cp "$W/${VERS[0]}" /tmp/atk033_${name}_ref.out
for v in "${VERS[@]:1}"; do cp "$W/$v" /tmp/atk033_${name}_$v.out; echo "=== diff ${VERS[0]} -> $v"; diff "$W/${VERS[0]}" "$W/$v" && echo "no difference"; done
rm -rf "$W"
