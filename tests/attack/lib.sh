# Shared helpers for the attack scripts. Source after exporting the attack stack's env:
#   STACK_RUN=/work/main/.run/attack STACK_DB=idem_attack SERVICE_PORT=7420 PROCESSOR_PORT=7421
#   SERVICE_ARGS="--faults --lease-ms 2000"   (the stack must be up: scripts/stack.sh up)
ROOT=${ROOT:-/work/main}
: "${STACK_RUN:=$ROOT/.run/attack}" "${STACK_DB:=idem_attack}" "${SERVICE_PORT:=7420}" "${PROCESSOR_PORT:=7421}"
: "${SERVICE_ARGS:=--faults --lease-ms 2000}"
export STACK_RUN STACK_DB SERVICE_PORT PROCESSOR_PORT SERVICE_ARGS
SVC=http://127.0.0.1:$SERVICE_PORT
PROC=http://127.0.0.1:$PROCESSOR_PORT
DB=postgresql://postgres@127.0.0.1:54320/$STACK_DB
tok() { "$ROOT/scripts/stack.sh" token "$1" "${2:-web}"; }
uniq_id() { echo "$1-$(date +%s%N)-$RANDOM"; }
q() { psql "$DB" -qAtX -c "$1"; }
# post PATH KEY BODY TOKEN [extra curl args]: prints "STATUS BODY"
post() {
  local path=$1 key=$2 body=$3 token=$4; shift 4
  curl -sS -o /tmp/attack.$$.$BASHPID -w '%{http_code}' -X POST "$SVC$path" -H "Authorization: Bearer $token" \
    -H "Idempotency-Key: $key" -H 'Content-Type: application/json' --data-binary "$body" "$@"
  echo -n " "; cat /tmp/attack.$$.$BASHPID; echo; rm -f /tmp/attack.$$.$BASHPID
}
fault() { curl -sS -X POST "$PROC/_control/faults" -d "$1" >/dev/null; }
checkout_body() { echo "{\"amount_cents\":${1:-1000},\"currency\":\"usd\",\"payment_method\":\"tok_visa\"}"; }
fail=0
defect() { echo "DEFECT: $*"; fail=1; }
ok() { echo "held: $*"; }
