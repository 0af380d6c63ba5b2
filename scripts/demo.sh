#!/usr/bin/env bash
# `make demo`: build and install the extension, start the throwaway cluster, and walk through the
# main job on it: fingerprints, scoped keys, and a checkout that is retried, raced and crashed.
# It stops the cluster at the end (also on failure or Ctrl-C) if it started it, and leaves alone one
# that was already running; it stops, failed, if the server on the port is not this checkout's.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
echo "== building and installing pg_idempotency"
build_and_install_extension
echo "== starting the throwaway PostgreSQL 15 cluster (.pg/, port ${PGPORT:-54320})"
pg_up || { echo "demo: no PostgreSQL of this checkout on port ${PGPORT:-54320}; stopping" >&2; exit 1; }
check_installed_extension
URL=$(scripts/pg.sh url)
psql "$URL" -qAtc "DROP DATABASE IF EXISTS idem_demo" -c "CREATE DATABASE idem_demo" >/dev/null
psql "${URL%/*}/idem_demo" -X -q -v ON_ERROR_STOP=1 -f examples/demo.sql
echo
if [ "$PG_STARTED_HERE" = 1 ]; then
  echo "The database idem_demo stays in .pg/: scripts/pg.sh start, then scripts/pg.sh psql -d idem_demo to look around, scripts/pg.sh stop when done."
else
  echo "scripts/pg.sh psql -d idem_demo to look around."
fi
