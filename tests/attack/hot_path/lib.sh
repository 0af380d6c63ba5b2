# Shared helpers for the hot-path attack scripts: several psql sessions driven from bash.
# Each session is a psql reading a FIFO; `run S sql` sends and waits for S to finish it,
# `send S sql` sends without waiting (for a step expected to block), `wait_s S` waits.
set -u
PGURL_BASE=${PGURL_BASE:-postgresql://postgres@127.0.0.1:54320}
DB=${DB:-${ATTACK_PREFIX:-attack_hp}_$$}
WORK=$(mktemp -d "/tmp/${ATTACK_PREFIX:-attack_hp}.XXXXXX")
declare -A FD SEQ
psql_admin() { psql -X -q -At "$PGURL_BASE/postgres" -c "$1"; }
setup_db() {
  psql_admin "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1
  psql_admin "CREATE DATABASE $DB"
  psql -X -q -At "$PGURL_BASE/$DB" -c "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency; SET idem.allow_non_atomic_store = off;" >/dev/null
}
q() { psql -X -q -At "$PGURL_BASE/$DB" -c "$1" 2>&1; }
start() {  # start NAME
  local n=$1
  mkfifo "$WORK/$n.in"
  PGAPPNAME=$n psql -X -q -At -v VERBOSITY=default "$PGURL_BASE/$DB" <"$WORK/$n.in" >"$WORK/$n.out" 2>&1 &
  exec {fd}>"$WORK/$n.in"
  FD[$n]=$fd; SEQ[$n]=0
  echo "\\set SHOW_CONTEXT never" >&$fd
}
send() { local n=$1; shift; printf '%s\n' "$*" >&${FD[$n]}; printf '[%s] %s\n' "$n" "$*" >>"$WORK/log"; }
wait_s() {
  local n=$1; SEQ[$n]=$(( ${SEQ[$n]} + 1 )); local m="__done_${n}_${SEQ[$n]}__"
  printf '\\echo %s\n' "$m" >&${FD[$n]}
  local i=0; until grep -q "$m" "$WORK/$n.out"; do sleep 0.05; i=$((i+1)); [ $i -gt 400 ] && { echo "TIMEOUT waiting for $n"; return 1; }; done
}
# Output of session n since the last call of out n.
declare -A POS
out() { local n=$1 p=${POS[$1]:-0}; local total; total=$(wc -c <"$WORK/$n.out"); tail -c +$((p+1)) "$WORK/$n.out" | grep -v '^__done_'; POS[$n]=$total; }
run() { local n=$1; shift; send "$n" "$*"; wait_s "$n"; printf -- '--- %s> %s\n' "$n" "$*"; out "$n" >"$WORK/last"; sed 's/^/    /' "$WORK/last"; }
blocked() {  # blocked NAME: true while NAME's backend waits on a lock
  sleep 0.3; [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE datname='$DB' AND wait_event_type='Lock'")" != 0 ]
}
finish() {
  for n in "${!FD[@]}"; do printf '\\q\n' >&${FD[$n]}; eval "exec ${FD[$n]}>&-"; done
  wait 2>/dev/null
  psql_admin "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname='$DB'" >/dev/null
  psql_admin "DROP DATABASE IF EXISTS $DB" >/dev/null
  rm -rf "$WORK"
}
# grab VAR: the first line of the last run's output, into the bash variable VAR.
grab() { printf -v "$1" '%s' "$(grep -v '^$' "$WORK/last" | head -1)"; }
