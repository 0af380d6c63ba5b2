#!/usr/bin/env bash
# The whole pg_regress + isolation schedule with idem.fast_path = off: every acquire and complete
# takes the PL/pgSQL general path and must answer what the C fast path answers (the same
# expected files). Leaves out the tests named in regress/fast_path_only. PGPORT: the running
# server's.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p regress/results-general
schedule=regress/results-general/schedule
grep -v -x -F -f <(grep -v -e '^#' -e '^$' regress/fast_path_only | sed 's/^/test: /') regress/schedule >"$schedule"
rm -rf regress/results
scripts/with-general-path.sh make -s installcheck PGPORT="${PGPORT:-54320}" REGRESS_SCHEDULE="$schedule"
