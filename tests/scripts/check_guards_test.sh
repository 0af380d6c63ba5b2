#!/usr/bin/env bash
# scripts/check-guards.sh on fixtures: it must name each bad guard of check_guards/bad.cpp.in,
# exactly those and with the reason, exit 1 on it, and pass check_guards/good.cpp.in.
set -uo pipefail
REPO=$(cd "$(dirname "$0")/../.." && pwd)
FIX=$REPO/tests/scripts/check_guards

checks=0 fails=0
pass() { checks=$((checks + 1)); echo "holds: $1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAILED: $1" >&2; }
expect_eq() { if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: got '$3', expected '$2'"; fi; }

bad_out=$("$REPO/scripts/check-guards.sh" "$FIX/bad.cpp.in" 2>&1)
bad_rc=$?
expect_eq "a bad fixture fails the check" 1 "$bad_rc"
expected="$FIX/bad.cpp.in:5: C++ in a guard (uses std::)
$FIX/bad.cpp.in:13: C++ in a guard (throws)
$FIX/bad.cpp.in:17: a guard of more than one statement (one PostgreSQL call a guard; plain-C sequences go in an ..._unsafe helper)
$FIX/bad.cpp.in:21: control flow in a guard (one PostgreSQL call a guard)
$FIX/bad.cpp.in:25: C++ in a guard (a call of ours: use pg::call(f, args...))
$FIX/bad.cpp.in:29: C++ in a guard (calls a helper that throws)
$FIX/bad.cpp.in:33: pg::call takes a function, not a lambda
$FIX/bad.cpp.in:37: C++ in pg::call arguments (uses std::)
$FIX/bad.cpp.in:41: C++ in a guard (new/delete)
$FIX/bad.cpp.in:45: pg::guarded takes a lambda (a function goes to pg::call)
$FIX/bad.cpp.in:48: C++ in a plain-C helper (uses std::)
$FIX/bad.cpp.in:53: C++ in a plain-C helper (throws)"
expect_eq "each bad guard named, with its reason, and nothing else" "$expected" "$bad_out"

good_out=$("$REPO/scripts/check-guards.sh" "$FIX/good.cpp.in" 2>&1)
good_rc=$?
expect_eq "a good fixture passes" 0 "$good_rc"
expect_eq "a good fixture: no finding" "check-guards: 1 files, every guard holds one PostgreSQL call and no C++" "$good_out"

tree_out=$("$REPO/scripts/check-guards.sh" 2>&1)
expect_eq "the tree passes" 0 "$?"
expect_eq "the tree: no finding" 1 "$(grep -c '^check-guards: [0-9]* files, every guard' <<<"$tree_out")"

echo "check_guards_test: $((checks - fails)) of $checks checks passed"
[ "$fails" -eq 0 ]
