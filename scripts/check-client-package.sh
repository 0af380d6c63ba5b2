#!/usr/bin/env bash
# The client as a service links it: install build/ into a scratch prefix, then build docs/client.md's
# examples against the installed package, once through find_package(pg_idempotency_client) and
# once through pkg-config. Fails when either does not compile and link, or when an internal
# header includes a public one.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
# No arrow up: the client's internal headers include only idem/types.hpp of the public ones.
if grep -n '#include "idem/' client/src/*.hpp | grep -v '"idem/types.hpp"'; then
  echo "check-client-package: an internal header of client/ includes a public one (use idem/types.hpp)" >&2
  exit 1
fi
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install build --prefix "$prefix/usr" >/dev/null
test -f "$prefix/usr/include/idem/client.hpp"
cmake -S examples/installed -B "$prefix/examples" -DCMAKE_PREFIX_PATH="$prefix/usr" >/dev/null
cmake --build "$prefix/examples" -j"$JOBS" >/dev/null
test -x "$prefix/examples/client_run" && test -x "$prefix/examples/client_lease"
pc_dir=$(dirname "$(find "$prefix/usr" -name pg_idempotency_client.pc)")
# shellcheck disable=SC2046  # pkg-config prints a list of flags
g++ -std=c++17 -o "$prefix/client_run_pc" examples/client_run.cpp $(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs pg_idempotency_client)
echo "installed client: find_package and pkg-config builds of examples/client_{run,lease}.cpp link ($(PKG_CONFIG_PATH="$pc_dir" pkg-config --modversion pg_idempotency_client))"
