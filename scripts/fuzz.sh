#!/usr/bin/env bash
# libFuzzer, with AddressSanitizer and UBSan, on the strict parser + RFC 8785 canonicalizer
# (fuzz/fuzz_canonical.cpp), on the parser against its nlohmann-json reference
# (fuzz/fuzz_differential.cpp) and on the member digests and their decoder, which reads bytes a
# caller sends (fuzz/fuzz_member_digests.cpp). FUZZ_SECONDS is the total run time, split evenly
# between the three (make test: 20, make fuzz: 600).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
SECONDS_TO_RUN=${FUZZ_SECONDS:-20}
TARGETS=(fuzz_canonical fuzz_differential fuzz_member_digests)
PER_TARGET=$(( SECONDS_TO_RUN / ${#TARGETS[@]} ))
(( PER_TARGET >= 1 )) || PER_TARGET=1
CXX=clang++ build_cmake build-fuzz "${TARGETS[*]}" -DIDEM_FUZZ=ON
for target in "${TARGETS[@]}"; do
  # Each corpus grows across runs (git-ignored); the committed seeds start both.
  mkdir -p "fuzz/corpus/$target"
  echo "== $target (${PER_TARGET} s)"
  # The full output (the recommended dictionary and all) stays in a log; a crash prints its tail.
  log="build-fuzz/$target.log"
  if ! ./build-fuzz/"$target" -max_total_time="$PER_TARGET" -print_final_stats=1 -max_len=4096 \
      -artifact_prefix=fuzz/ "fuzz/corpus/$target" fuzz/seeds >"$log" 2>&1; then
    tail -n 60 "$log"
    echo "$target: FAILED (full output: $log)"
    exit 1
  fi
  grep -E '^(Done [0-9]+ runs|stat::(number_of_executed_units|new_units_added|peak_rss_mb))' "$log"
done
