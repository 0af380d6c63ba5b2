#!/usr/bin/env bash
# Old against new: builds tests/compat/fingerprint_dump.cpp against the core library of two
# checkouts (each already built with cmake: <checkout>/<build>/libidem_core.a) and diffs what
# they print for the fuzz seeds, the golden vectors, the RFC 8785 vectors (../shared/testdata/jcs,
# when there), the unit-test edge cases and 20,000
# generated documents, with exclusions. Any difference (a byte, a hash, a refusal's words) fails.
#   scripts/compare-fingerprint-builds.sh OLD_CHECKOUT OLD_BUILD_DIR NEW_CHECKOUT NEW_BUILD_DIR
set -euo pipefail
old=$1 old_build=$2 new=$3 new_build=$4
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mktemp -d)
for side in old new; do
  if [[ $side == old ]]; then root=$old build=$old_build; else root=$new build=$new_build; fi
  # The checkout's own core headers first; the dump and its generator come from this checkout.
  g++ -std=c++17 -O1 -I"$root" -I"$here" "$here/tests/compat/fingerprint_dump.cpp" \
    "$build/libidem_core.a" -lcrypto -o "$out/dump_$side"
  inputs=("$here/fuzz/seeds" "$here/tests/golden")
  [[ -d $here/../shared/testdata/jcs ]] && inputs+=("$here/../shared/testdata/jcs")
  "$out/dump_$side" "${inputs[@]}" >"$out/$side.txt"
done
lines=$(wc -l <"$out/new.txt")
if cmp -s "$out/old.txt" "$out/new.txt"; then
  echo "old and new agree on $lines cases ($(grep -c $'\tok ' "$out/new.txt") fingerprinted)"
  rm -rf "$out"
else
  diff "$out/old.txt" "$out/new.txt" | head -20
  echo "old and new DIFFER (outputs in $out)"
  exit 1
fi
