#!/usr/bin/env bash
# `make model`: the model-based protocol test (tests/integration/model_test.cpp) for MODEL_SECONDS
# on the throwaway cluster, started (and stopped again) if it is not running. Prints the seed and a
# summary line with the operations done; IDEM_MODEL_SEED=<seed> replays a run's choices.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
export PGPORT=${PGPORT:-54320}
build_and_install_extension
build_cmake build integration_tests -DIDEM_BENCH=OFF
pg_up || { echo "model: no PostgreSQL of this checkout on port $PGPORT; stopping" >&2; exit 1; }
check_installed_extension
IDEM_TEST_URL=$(scripts/pg.sh url) IDEM_MODEL_SECONDS="${MODEL_SECONDS:-600}" \
  build/integration_tests --gtest_filter='ProtocolModel.*'
