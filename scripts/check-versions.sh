#!/usr/bin/env bash
# One version everywhere: VERSION is read by CMake (the client
# package); the control file, the newest upgrade script, docs/sql-api.md and README's status
# heading must name it too. Fails naming each place that disagrees.
set -euo pipefail
cd "$(dirname "$0")/.."
want=$(head -1 VERSION)
bad=0
disagree() { echo "check-versions: $1 says $2, VERSION says $want" >&2; bad=1; }
control=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" pg_idempotency.control)
[ "$control" = "$want" ] || disagree pg_idempotency.control "$control"
newest=$(ls sql/pg_idempotency--*--*.sql sql/upgrades/pg_idempotency--*--*.sql.in | sed 's/.*--\([0-9.]*\)\.sql\(\.in\)\?$/\1/' | sort -V | tail -1)
[ "$newest" = "$want" ] || disagree "the newest upgrade script" "$newest"
api=$(sed -n 's/^# SQL API (version \(.*\))$/\1/p' docs/sql-api.md)
[ "$api" = "$want" ] || disagree docs/sql-api.md "$api"
readme=$(sed -n 's/^## Status (\(.*\))$/\1/p' README.md)
[ "$readme" = "$want" ] || disagree README.md "$readme"
[ "$bad" = 0 ] && echo "versions agree: $want"
