#!/usr/bin/env bash
# `make citus-test`: the Citus suite (tests/citus/citus_test.sh) on this checkout's Citus cluster
# (scripts/citus.sh), started here when it is not running and then stopped again; a cluster that
# was running is left running. CITUS_SMOKE=1 (make test's smoke) leaves out the slow parts and
# the demo's stack on the coordinator (tests/citus/checkout_citus.sh).
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
# The client's Citus-mode program (tests/citus/client_citus.cpp) and, for the full suite, the demo's
# stack, built where make test builds.
targets="client_citus consumer_nodes"
[ "${CITUS_SMOKE:-0}" = 1 ] || targets="client_citus consumer_nodes checkout_service order_consumer payment_processor"
bash -c "source '$ROOT/scripts/lib.sh' && build_cmake build '$targets' -DIDEM_BENCH=OFF -DIDEM_TESTS=ON" || exit 1
rc=0
"$ROOT/tests/citus/citus_test.sh" || rc=$?
# The demo's stack on the coordinator (its own database and ports): in the full suite only.
if [ "${CITUS_SMOKE:-0}" != 1 ]; then
  "$ROOT/tests/citus/checkout_citus.sh" || rc=1
fi
[ "$started" = 0 ] || "$ROOT/scripts/citus.sh" stop
exit "$rc"
