#!/usr/bin/env bash
# Keeps regress/schedule complete: every regress/sql/*.sql must be scheduled exactly once, and
# every scheduled test must have its regress/sql/<name>.sql. Exit 1 names each offending file.
# usage: scripts/check-schedule.sh [regress-dir]   (default: regress/ next to this script)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${1:-"$ROOT/regress"}
SCHEDULE="$DIR/schedule"

if [[ ! -f "$SCHEDULE" ]]; then
  echo "check-schedule: $SCHEDULE does not exist" >&2
  exit 1
fi

# Test names from "test: a b c" lines; '#' starts a comment (pg_regress's schedule syntax).
scheduled=()
while IFS= read -r line || [[ -n "$line" ]]; do
  line=${line%%#*}
  if [[ "$line" =~ ^[[:space:]]*test:(.*)$ ]]; then
    for name in ${BASH_REMATCH[1]}; do scheduled+=("$name"); done
  elif [[ "$line" =~ [^[:space:]] ]]; then
    echo "check-schedule: $SCHEDULE: not a 'test:' line: $line" >&2
    exit 1
  fi
done <"$SCHEDULE"

status=0
declare -A seen=()
for name in "${scheduled[@]+"${scheduled[@]}"}"; do
  if [[ -n "${seen[$name]:-}" ]]; then
    echo "check-schedule: $name is scheduled more than once in $SCHEDULE" >&2
    status=1
  fi
  seen[$name]=1
  if [[ ! -f "$DIR/sql/$name.sql" ]]; then
    echo "check-schedule: $SCHEDULE names $name, but $DIR/sql/$name.sql does not exist" >&2
    status=1
  fi
done

shopt -s nullglob
for file in "$DIR"/sql/*.sql; do
  name=$(basename "$file" .sql)
  if [[ -z "${seen[$name]:-}" ]]; then
    echo "check-schedule: $file is not in $SCHEDULE (add 'test: $name')" >&2
    status=1
  fi
done

exit "$status"
