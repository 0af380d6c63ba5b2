#!/usr/bin/env bash
# libFuzzer on the strict parser + RFC 8785 canonicalizer (fuzz/fuzz_canonical.cpp), with
# AddressSanitizer and UBSan. FUZZ_SECONDS sets the run time (make test: 20, make fuzz: 600).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
SECONDS_TO_RUN=${FUZZ_SECONDS:-20}
CXX=clang++ cmake -S . -B build-fuzz -DIDEM_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$JOBS" --target fuzz_canonical >/dev/null
mkdir -p fuzz/corpus
# The corpus grows across runs (git-ignored); the committed seeds start it.
./build-fuzz/fuzz_canonical -max_total_time="$SECONDS_TO_RUN" -print_final_stats=1 -max_len=4096 \
  -artifact_prefix=fuzz/ fuzz/corpus fuzz/seeds 2>&1 | tail -n 25
