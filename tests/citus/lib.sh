# shellcheck shell=bash
# What the Citus suites share: checks that count, SQL on a node, and sessions that stay open
# between steps (a psql fed through a FIFO), for the interleavings of two and three sessions.
# Needs ROOT and DB (the suite's database, made by scripts/citus.sh database).

checks=0 fails=0
check() { # check NAME WANT GOT
  checks=$((checks + 1))
  if [ "$2" = "$3" ]; then echo "ok: $1"; else echo "FAILED: $1: want '$2', got '$3'"; fails=$((fails + 1)); fi
}
# check_has NAME NEEDLE TEXT: TEXT contains NEEDLE.
check_has() {
  checks=$((checks + 1))
  if grep -qF -- "$2" <<<"$3"; then echo "ok: $1"; else echo "FAILED: $1: want '$2' in '$3'"; fails=$((fails + 1)); fi
}
finish() {
  echo "$1: $((checks - fails)) of $checks checks passed"
  [ "$fails" = 0 ]
}

url_of() { "$ROOT/scripts/citus.sh" url "${1:-coordinator}" "$DB"; }
# q [NODE] SQL: one statement's rows (unaligned, |-separated), errors included.
q() {
  local node=coordinator
  if [ $# -gt 1 ]; then node=$1; shift; fi
  PGOPTIONS="-c client_min_messages=warning" psql "$(url_of "$node")" -qAtX -v ON_ERROR_STOP=1 -c "$1" 2>&1
}
# q_script [NODE] < SQL: a script on stdin (psql's meta-commands allowed), stopping at an error.
q_script() {
  PGOPTIONS="-c client_min_messages=warning" psql "$(url_of "${1:-coordinator}")" -qAtX -v ON_ERROR_STOP=1 2>&1
}
# The error name in a psql output (ERR_... or PostgreSQL's message), or the output itself.
error_of() { grep -o 'ERR_[A-Z_]*' <<<"$1" | head -1 || true; }

# Sessions: session_open NAME [NODE] [ROLE]; session_run NAME SQL (waits until it has run, up to
# 30 s, and prints what it printed); session_send NAME SQL (does not wait); session_close NAME.
declare -A SESSION_FD SESSION_OUT SESSION_PID
session_dir=$(mktemp -d)
session_open() {
  local name=$1 node=${2:-coordinator} role=${3:-postgres} fifo=$session_dir/$1.in
  mkfifo "$fifo"
  SESSION_OUT[$name]=$session_dir/$name.out
  : >"${SESSION_OUT[$name]}"
  # Line-buffered: psql writes to a file in blocks otherwise, and a step would wait for its output.
  # It must not hold the other sessions' FIFOs open, or they never see their end.
  (
    for other in "${SESSION_FD[@]}"; do eval "exec $other>&-"; done
    PGOPTIONS="-c client_min_messages=warning" exec stdbuf -oL psql "postgresql://$role@127.0.0.1:$(port_of "$node")/$DB" \
      -qAtX <"$fifo" >"${SESSION_OUT[$name]}" 2>&1
  ) &
  SESSION_PID[$name]=$!
  exec {fd}>"$fifo"
  SESSION_FD[$name]=$fd
  echo 0 >"$session_dir/$name.seen"  # a file: session_run's output is read in a subshell
}
# node_ctl_command NODE stop|start|hang|resume: the command line that stops or starts one node's
# server as the server's user, or holds its postmaster and lets it go again (for a program to run
# mid-test: tests/citus/consumer_nodes.cpp).
node_ctl_command() {
  local data pg_bin as_user=""
  data=$(readlink -f "$ROOT/.citus")/$1
  pg_bin=$(readlink -f "$ROOT/build/pg-install")/usr/lib/postgresql/15/bin
  [ "$(id -u)" -eq 0 ] && as_user="cd / && runuser -u postgres --"
  case $2 in
    stop) echo "$as_user $pg_bin/pg_ctl -D $data/data -m fast -w stop >/dev/null" ;;
    start) echo "$as_user $pg_bin/pg_ctl -D $data/data -l $data/server.log -o '-p $(port_of "$1")' -w -t 60 start >/dev/null" ;;
    # The postmaster held (SIGSTOP): connections are accepted by the kernel and never answered.
    hang) echo "kill -STOP \$(head -1 $data/data/postmaster.pid)" ;;
    resume) echo "kill -CONT \$(head -1 $data/data/postmaster.pid)" ;;
  esac
}
port_of() { "$ROOT/scripts/citus.sh" url "$1" | sed 's|.*:\([0-9]*\)/.*|\1|'; }
session_send() { printf '%s\n' "$2" >&"${SESSION_FD[$1]}"; }
session_run() {
  local name=$1 marker="--done-$RANDOM$RANDOM" i
  session_send "$name" "$2"
  session_send "$name" "\\echo $marker"
  for i in $(seq 300); do
    grep -q -- "$marker" "${SESSION_OUT[$name]}" && break
    sleep 0.1
  done
  session_output "$name" | grep -v -- "$marker"
}
# What the session printed since the last look.
session_output() {
  local name=$1 total seen
  total=$(wc -l <"${SESSION_OUT[$name]}")
  seen=$(cat "$session_dir/$name.seen")
  tail -n +"$((seen + 1))" "${SESSION_OUT[$name]}" | head -n "$((total - seen))"
  echo "$total" >"$session_dir/$name.seen"
}
# without_sessions CMD...: CMD with the sessions' FIFOs closed, for a command that leaves a process
# behind (pg_ctl start: a postmaster holding a FIFO open would keep its session from ever ending).
without_sessions() {
  (
    for other in "${SESSION_FD[@]}"; do eval "exec $other>&-"; done
    "$@"
  )
}
session_close() {
  eval "exec ${SESSION_FD[$1]}>&-"
  wait "${SESSION_PID[$1]}" 2>/dev/null || true
}
