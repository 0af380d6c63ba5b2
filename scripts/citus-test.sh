#!/usr/bin/env bash
# `make citus-test`: the Citus suite (tests/citus/citus_test.sh) on this checkout's Citus cluster
# (scripts/citus.sh), started here when it is not running and then stopped again; a cluster that
# was running is left running. CITUS_SMOKE=1 (make test's smoke) leaves out the slow parts.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
started=0
if ! "$ROOT/scripts/citus.sh" status >/dev/null 2>&1; then
  started=1
  "$ROOT/scripts/citus.sh" start || { "$ROOT/scripts/citus.sh" stop; exit 1; }
else
  # A running cluster is left alone, but it must run the library just built (it is preloaded).
  so=$(readlink -f "$ROOT/build/pg-install")/usr/lib/postgresql/15/lib/pg_idempotency.so
  make -C "$ROOT" -s >/dev/null && bash -c "source '$ROOT/scripts/lib.sh' && pg_install_extension" || exit 1
  if [ "$(sha256sum "$so" | cut -d' ' -f1)" != "$(cat "$ROOT/.citus/library.sha256" 2>/dev/null)" ]; then
    echo "citus-test: the running Citus cluster preloaded another pg_idempotency than the one just built; restart it (scripts/citus.sh stop) and run again" >&2
    exit 1
  fi
fi
# The client's Citus-mode program (tests/citus/client_citus.cpp), built where make test builds.
bash -c "source '$ROOT/scripts/lib.sh' && build_cmake build client_citus -DIDEM_BENCH=OFF -DIDEM_TESTS=ON" || exit 1
rc=0
"$ROOT/tests/citus/citus_test.sh" || rc=$?
[ "$started" = 0 ] || "$ROOT/scripts/citus.sh" stop
exit "$rc"
