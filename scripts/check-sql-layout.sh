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

# Bash's own globs and tests where a loop runs once per function: a process per check made
# this script take 14 s (and its self-test, which runs it nine times, two minutes).
for dir in sql/udfs/*/; do
  name=${dir%/}; name=${name##*/}
  [ -f "$dir/latest.sql" ] || { fail "$dir has no latest.sql"; continue; }
  snapshots=()
  for path in "$dir"*; do
    file=${path##*/}
    if [[ $file =~ ^[0-9]+\.[0-9]+\.[0-9]+\.sql$ ]]; then
      snapshots+=("$file")
    elif [ "$file" != latest.sql ]; then
      fail "$dir$file: only latest.sql and <version>.sql belong here"
    fi
  done
  [ "${#snapshots[@]}" -gt 0 ] || { fail "$dir has no <version>.sql snapshot"; continue; }
  newest=${snapshots[0]}
  [ "${#snapshots[@]}" = 1 ] || newest=$(printf '%s\n' "${snapshots[@]}" | sort -V | tail -1)
  cmp -s "$dir/latest.sql" "$dir/$newest" || fail "${dir}latest.sql differs from its newest snapshot $newest"
  created=$(grep -iE '^CREATE (OR REPLACE )?FUNCTION ' "$dir/latest.sql" || true)
  [ -n "$created" ] || fail "${dir}latest.sql creates no function"
  others=$(grep -viE "FUNCTION idem\.$name\(" <<<"$created" || true)
  [ -z "$others" ] || fail "${dir}latest.sql creates a function not named idem.$name: $others"
done

includes() { sed -n 's/^#include "\(.*\)"$/\1/p' "$1"; }
install=sql/pg_idempotency.sql.in
declare -A included=()
while read -r path; do included[$path]=$((${included[$path]:-0} + 1)); done < <(includes "$install")
for dir in sql/udfs/*/; do
  want=${dir%/}; want="udfs/${want##*/}/latest.sql"
  n=${included[$want]:-0}
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
