#!/usr/bin/env bash
# Expands an include list (sql/pg_idempotency.sql.in, sql/upgrades/*.sql.in) into the script
# PostgreSQL runs: each line `#include "path"` becomes the file sql/path, every other line is kept.
# As Citus's upgrade scripts, so a function's text lives in one file (sql/udfs/<name>/) however
# many scripts carry it. Usage: sql-expand.sh LIST OUTPUT
set -euo pipefail
list=$1 out=$2
sql_dir=$(cd "$(dirname "$0")/../sql" && pwd)
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
awk -v dir="$sql_dir" -v list="$list" '
  /^#include / {
    if (match($0, /^#include "[^"]+"$/) == 0) { printf "%s:%d: malformed include: %s\n", list, NR, $0 > "/dev/stderr"; exit 1 }
    path = substr($0, 11, length($0) - 11)
    file = dir "/" path
    got = (getline line < file)
    if (got < 0) { printf "%s:%d: no such file sql/%s\n", list, NR, path > "/dev/stderr"; exit 1 }
    print "-- " path
    while (got > 0) { print line; got = (getline line < file) }
    close(file)
    next
  }
  /^#/ { printf "%s:%d: a line starting with # must be an #include\n", list, NR > "/dev/stderr"; exit 1 }
  { print }' "$list" > "$tmp"
mv "$tmp" "$out"
trap - EXIT
