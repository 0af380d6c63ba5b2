#!/usr/bin/env bash
# One source of truth for the SQL (docs/sql-layout.md). Fails naming each breach:
# - each sql/udfs/<name>/ holds latest.sql and its snapshots <version>.sql, and latest.sql equals
#   the newest snapshot; every function it creates is idem.<name>;
# - the full install list (sql/pg_idempotency.sql.in) includes every latest.sql once, and no snapshot;
# - an upgrade list (sql/upgrades/pg_idempotency--A--B.sql.in) includes only B's snapshots and
#   B's schema change, never a latest.sql, so a released script never changes when latest moves;
# - with a database URL (argument 1), a fresh install's functions are exactly those the latest.sql
#   files create, overload for overload.
set -euo pipefail
cd "$(dirname "$0")/.."
bad=0
fail() { echo "check-sql-layout: $*" >&2; bad=1; }
creates() { grep -ciE '^CREATE (OR REPLACE )?FUNCTION ' "$1" || true; }

for dir in sql/udfs/*/; do
  name=$(basename "$dir")
  [ -f "$dir/latest.sql" ] || { fail "$dir has no latest.sql"; continue; }
  snapshots=$(ls "$dir" | grep -E '^[0-9]+\.[0-9]+\.[0-9]+\.sql$' | sort -V || true)
  [ -n "$snapshots" ] || { fail "$dir has no <version>.sql snapshot"; continue; }
  for file in $(ls "$dir"); do
    case "$file" in latest.sql) ;; *) grep -qxF "$file" <<<"$snapshots" || fail "$dir$file: only latest.sql and <version>.sql belong here";; esac
  done
  newest=$(tail -1 <<<"$snapshots")
  cmp -s "$dir/latest.sql" "$dir/$newest" || fail "${dir}latest.sql differs from its newest snapshot $newest"
  others=$(grep -iE '^CREATE (OR REPLACE )?FUNCTION ' "$dir/latest.sql" | grep -viE "FUNCTION idem\.$name\(" || true)
  [ -z "$others" ] || fail "${dir}latest.sql creates a function not named idem.$name: $others"
  [ "$(creates "$dir/latest.sql")" -gt 0 ] || fail "${dir}latest.sql creates no function"
done

includes() { sed -n 's/^#include "\(.*\)"$/\1/p' "$1"; }
install=sql/pg_idempotency.sql.in
for dir in sql/udfs/*/; do
  want="udfs/$(basename "$dir")/latest.sql"
  n=$(includes "$install" | grep -cxF "$want" || true)
  [ "$n" = 1 ] || fail "$install includes $want $n times, not once"
done
while read -r path; do
  fail "$install includes the snapshot $path: the full install takes latest.sql"
done < <(includes "$install" | grep -E '^udfs/.*/[0-9.]+\.sql$' || true)
for list in sql/upgrades/*.sql.in; do
  [ -e "$list" ] || continue
  target=$(basename "$list" .sql.in | sed 's/.*--//')
  while read -r path; do
    case "$path" in
      udfs/*/"$target".sql | schema/"$target".sql | schema/"$target"-*.sql) ;;
      *) fail "$list (to $target) includes $path: an upgrade includes only udfs/<name>/$target.sql and schema/$target.sql" ;;
    esac
  done < <(includes "$list")
done

if [ -n "${1:-}" ]; then
  db=idem_sql_layout_check
  PGOPTIONS="-c client_min_messages=warning" psql "$1" -qAtX -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
  url="${1%/*}/$db"
  catalog=$(psql "$url" -qAtX -v ON_ERROR_STOP=1 -c "CREATE EXTENSION pg_idempotency" \
    -c "SELECT proname || ' ' || count(*) FROM pg_proc WHERE pronamespace = 'idem'::regnamespace GROUP BY proname ORDER BY proname COLLATE \"C\"")
  psql "$1" -qAtX -c "DROP DATABASE $db" >/dev/null
  files=$(for dir in sql/udfs/*/; do echo "$(basename "$dir") $(creates "$dir/latest.sql")"; done | LC_ALL=C sort)
  diff <(echo "$catalog") <(echo "$files") | sed -n 's/^< /in the catalog, not (or not as many) in sql\/udfs: /p; s/^> /in sql\/udfs, not (or not as many) in the catalog: /p' |
    while read -r line; do echo "check-sql-layout: $line" >&2; done
  [ "$catalog" = "$files" ] || bad=1
fi
[ "$bad" = 0 ] && echo "sql layout: $(ls -d sql/udfs/*/ | wc -l) functions, each in one latest.sql; the include lists agree"
exit "$bad"
