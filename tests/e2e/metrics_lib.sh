# shellcheck shell=bash
# Reading a Prometheus text exposition in the end-to-end tests. Needs METRICS_URL.
# metric NAME{LABELS}: its value in a scrape, 0 when absent. The value is the last field; a
# label value may hold spaces ("POST /v1/charges").
metric() {
  curl -s "$METRICS_URL" | awk -v m="$1" '{ n = $0; sub(/ [^ ]*$/, "", n) } n == m { v = $NF } END { print (v == "" ? 0 : v) }'
}
# metric_is NAME{LABELS} VALUE: the value is VALUE, or becomes it within 2 s (a request is
# counted just after its answer is written; an event once its transaction commits).
metric_is() {
  local i
  for i in $(seq 20); do
    [ "$(metric "$1")" = "$2" ] && return 0
    sleep 0.1
  done
  echo "metrics: $1 is $(metric "$1"), not $2" >&2
  return 1
}
