#!/usr/bin/env bash
# `make demo`: build and install the extension, start the throwaway cluster, and walk through the
# main job on it: fingerprints, scoped keys, and a checkout that is retried, raced and crashed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
echo "== building and installing pg_idempotency"
build_and_install_extension
echo "== starting the throwaway PostgreSQL 15 cluster (.pg/, port ${PGPORT:-54320})"
scripts/pg.sh start
URL=$(scripts/pg.sh url)
psql "$URL" -qAtc "DROP DATABASE IF EXISTS idem_demo" -c "CREATE DATABASE idem_demo" >/dev/null
psql "${URL%/*}/idem_demo" -X -q -v ON_ERROR_STOP=1 -f examples/demo.sql
echo
echo "The cluster is still running: scripts/pg.sh psql -d idem_demo to look around, scripts/pg.sh stop to stop it."
