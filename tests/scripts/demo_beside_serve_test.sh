#!/usr/bin/env bash
# `make demo` beside a running `make serve` (issue 21): the demo's stack has a database, run dir
# and ports of its own, so the serve stack keeps running and answering, with its orders and its
# token secret; a demo told to take the serve stack's port or database is refused at once and
# touches nothing; `make serve` again leaves the running stack as it is.
# Needs this checkout's cluster on $PGPORT and build/ built (make test's earlier suites). Its serve
# stack runs in .run/test-serve (database idem_test_serve), its demo in .run/test-demo (databases
# idem_test_demo, idem_test_demo_sql), on ports DEMO_BESIDE_SERVE_PORT (7420) to +3, so a user's
# own make serve and make demo stay untouched. Both stacks are stopped and the databases dropped
# on any exit.
set -uo pipefail
source "$(dirname "$0")/../../scripts/lib.sh"
cd "$ROOT" || exit 1

BASE_PORT=${DEMO_BESIDE_SERVE_PORT:-7420}
SERVE_RUN=$ROOT/.run/test-serve SERVE_DB=idem_test_serve
DEMO_RUN_DIR=$ROOT/.run/test-demo DEMO_DB_NAME=idem_test_demo
SERVE_PORT=$BASE_PORT SERVE_PROCESSOR_PORT=$((BASE_PORT + 1))
export PGPORT=${PGPORT:-54320}
WORK=$(mktemp -d)
unset STACK_RUN STACK_DB SERVICE_PORT PROCESSOR_PORT SERVICE_ARGS

serve_env() { env STACK_RUN="$SERVE_RUN" STACK_DB="$SERVE_DB" SERVICE_PORT="$SERVE_PORT" PROCESSOR_PORT="$SERVE_PROCESSOR_PORT" "$@"; }
demo_env() {
  env DEMO_RUN="$DEMO_RUN_DIR" DEMO_DB="$DEMO_DB_NAME" DEMO_SQL_DB=idem_test_demo_sql \
    DEMO_SERVICE_PORT=$((BASE_PORT + 2)) DEMO_PROCESSOR_PORT=$((BASE_PORT + 3)) "$@"
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  STACK_RUN=$DEMO_RUN_DIR scripts/stack.sh down >/dev/null 2>&1
  STACK_RUN=$SERVE_RUN scripts/stack.sh down >/dev/null 2>&1
  psql "$(scripts/pg.sh url)" -qAtX -c "DROP DATABASE IF EXISTS $SERVE_DB WITH (FORCE)" \
    -c "DROP DATABASE IF EXISTS $DEMO_DB_NAME WITH (FORCE)" -c "DROP DATABASE IF EXISTS idem_test_demo_sql WITH (FORCE)" >/dev/null 2>&1
  rm -rf "$SERVE_RUN" "$DEMO_RUN_DIR" "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

checks=0 fails=0
ok() { checks=$((checks + 1)); echo "holds: $1"; }
fail() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAILED: $1" >&2; }
expect_eq() { if [ "$3" = "$2" ]; then ok "$1"; else fail "$1: got '$3', expected '$2'"; fi; }
expect_in() { if [[ "$3" == *"$2"* ]]; then ok "$1"; else fail "$1: '$2' not in:
$3"; fi; }

# checkout KEY [CENTS]: POST a checkout to the serve stack with the token minted before the demo;
# the status, then the body in $WORK/body and the headers in $WORK/headers.
checkout() {
  curl -sS -o "$WORK/body" -D "$WORK/headers" -w '%{http_code}' -X POST \
    "http://127.0.0.1:$SERVE_PORT/checkout/cs_beside_$1/complete" -H "Authorization: Bearer $TOKEN" \
    -H "Idempotency-Key: beside-serve-key-$1-0000" \
    -d "{\"amount_cents\":${2:-1999},\"currency\":\"usd\",\"payment_method\":\"tok_visa\"}" 2>&1
}
serve_pids() { cat "$SERVE_RUN"/{processor,service,consumer}.pid 2>/dev/null | tr '\n' ' '; }
serve_sql() { psql "postgresql://postgres@127.0.0.1:$PGPORT/$SERVE_DB" -qAtX -c "$1"; }

for port in $(seq "$BASE_PORT" $((BASE_PORT + 3))); do
  # shellcheck disable=SC2016  # $1 is the inner shell's
  if timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$port" 2>/dev/null; then
    echo "port $port is taken: choose four free ports with DEMO_BESIDE_SERVE_PORT=<first>" >&2
    exit 1
  fi
done

echo "== make serve (its stack on $SERVE_PORT and $SERVE_PROCESSOR_PORT, database $SERVE_DB)"
if ! serve_env scripts/serve.sh >"$WORK/serve.log" 2>&1; then
  tail -20 "$WORK/serve.log" >&2
  echo "make serve did not start" >&2
  exit 1
fi
TOKEN=$(STACK_RUN=$SERVE_RUN scripts/stack.sh token acme web)
PIDS=$(serve_pids)
expect_eq "a checkout on the serve stack" 201 "$(checkout 1)"
FIRST_BODY=$(cat "$WORK/body")

echo "== make demo beside it (its stack on $((BASE_PORT + 2)) and $((BASE_PORT + 3)), database $DEMO_DB_NAME)"
start=$SECONDS
demo_env scripts/demo.sh >"$WORK/demo.log" 2>&1
rc=$?
expect_eq "make demo ran to the end beside the serve stack ($((SECONDS - start)) s)" 0 "$rc"
[ "$rc" -eq 0 ] || tail -30 "$WORK/demo.log" >&2
expect_in "the demo drove every scenario" "every step returned what it must" "$(cat "$WORK/demo.log")"
expect_eq "the serve stack's three programs still run, the same processes" "$PIDS" "$(serve_pids)"
expect_eq "STACK_RUN=.run/test-serve scripts/stack.sh status: all running" 3 \
  "$(STACK_RUN=$SERVE_RUN scripts/stack.sh status | grep -c ': running')"
expect_eq "the serve stack's service answers /health" 200 \
  "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$SERVE_PORT/health")"
expect_eq "the first checkout again: 201 (the token minted before the demo still holds)" 201 "$(checkout 1)"
expect_in "... as a replay" "Idempotent-Replayed: true" "$(cat "$WORK/headers")"
expect_eq "... of the same bytes" "$FIRST_BODY" "$(cat "$WORK/body")"
expect_eq "a new checkout on the serve stack" 201 "$(checkout 2 2500)"
expect_eq "the serve stack's database kept its orders (2)" 2 "$(serve_sql 'SELECT count(*) FROM orders')"
expect_eq "the serve stack's processor charged twice in all" 2 \
  "$(curl -s "http://127.0.0.1:$SERVE_PROCESSOR_PORT/v1/charges" | jq '.data | length')"
expect_eq "the demo stopped its own stack" 0 "$(STACK_RUN=$DEMO_RUN_DIR scripts/stack.sh status | grep -c ': running')"
if scripts/pg.sh owned >/dev/null 2>&1; then ok "the cluster still runs"; else fail "the cluster still runs"; fi

echo "== make demo told to take the serve stack's port, then its database: refused at once"
start=$SECONDS
out=$(env DEMO_RUN="$DEMO_RUN_DIR" DEMO_DB="$DEMO_DB_NAME" DEMO_SQL_DB=idem_test_demo_sql DEMO_SERVICE_PORT="$SERVE_PORT" \
  DEMO_PROCESSOR_PORT=$((BASE_PORT + 3)) scripts/demo.sh 2>&1)
rc=$?
sed 's/^/   | /' <<<"$out"
expect_eq "refused (exit 1)" 1 "$rc"
expect_in "it names the port and what holds it" "port $SERVE_PORT is taken by checkout-service" "$out"
expect_in "it says how to stop that stack" "STACK_RUN=$SERVE_RUN scripts/stack.sh down" "$out"
out=$(env DEMO_RUN="$DEMO_RUN_DIR" DEMO_DB="$SERVE_DB" DEMO_SQL_DB=idem_test_demo_sql DEMO_SERVICE_PORT=$((BASE_PORT + 2)) \
  DEMO_PROCESSOR_PORT=$((BASE_PORT + 3)) scripts/demo.sh 2>&1)
rc=$?
sed 's/^/   | /' <<<"$out"
expect_eq "refused (exit 1)" 1 "$rc"
expect_in "it names the database in use" "database $SERVE_DB is in use by a stack's programs" "$out"
expect_in "it names the stack using it and how to stop it" "the stack in $SERVE_RUN uses it; STACK_RUN=$SERVE_RUN scripts/stack.sh down stops it" "$out"
expect_eq "both refusals came before any build or set-up (under 15 s)" 1 $(( SECONDS - start < 15 ))
expect_eq "the serve stack still runs, the same processes" "$PIDS" "$(serve_pids)"
expect_eq "its orders are still there" 2 "$(serve_sql 'SELECT count(*) FROM orders')"

echo "== make serve again while its stack runs: left as it is"
serve_env scripts/serve.sh >"$WORK/serve2.log" 2>&1
expect_eq "make serve again exits 0" 0 "$?"
expect_in "it says the stack already runs" "already runs: left as it is" "$(cat "$WORK/serve2.log")"
expect_eq "the same processes" "$PIDS" "$(serve_pids)"
expect_eq "the token minted first still holds (the secret was kept): a replay" 201 "$(checkout 2 2500)"
expect_eq "its orders are still there" 2 "$(serve_sql 'SELECT count(*) FROM orders')"

echo
echo "demo_beside_serve_test: $((checks - fails)) of $checks checks passed"
[ "$fails" -eq 0 ]
