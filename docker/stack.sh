#!/usr/bin/env bash
# The compose stack's scripts/stack.sh: the same commands, on the containers podman-compose made
# from docker/compose.yaml, for the demo driver (its --stack) and scripts/docker-check.sh.
#   docker/stack.sh up                   start the created containers in depends_on order, each
#                                        once its health check passes (podman-compose 1.0.3 ignores
#                                        `condition: service_healthy`, and without systemd podman
#                                        runs no periodic health checks: this runs them)
#   docker/stack.sh start|stop|kill NAME processor, service or consumer (kill: SIGKILL)
#   docker/stack.sh token TENANT CALLER  a bearer token the service accepts
#   docker/stack.sh status
# SERVICE_ARGS / CONSUMER_ARGS are added to the compose file's command, as scripts/stack.sh adds
# them to the local programs: a container whose command differs is recreated with
# `podman-compose run` (same image, network, alias, ports and health check as `up` gives it).
# Needs the stack created (`podman-compose up --no-start`) and the same environment as that
# command: COMPOSE_PROJECT (podman-compose -p), IDEM_TOKEN_SECRET and the IDEM_*_PORT variables.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROJECT=${COMPOSE_PROJECT:?set COMPOSE_PROJECT (the podman-compose project name)}
RUN=${DOCKER_STACK_RUN:-$ROOT/.run/docker-stack}  # the compose file's commands, podman-compose's log
LOG=$RUN/compose.log
mkdir -p "$RUN"

compose() { podman-compose -p "$PROJECT" -f "$ROOT/docker/compose.yaml" "$@" >>"$LOG" 2>&1; }
container() { echo "${PROJECT}_$1_1"; }  # podman-compose 1.0.3's container names
running() { [ "$(podman inspect -f '{{.State.Running}}' "$(container "$1")" 2>/dev/null)" = true ]; }

# The compose file's command for NAME, as `up` created it (kept before any recreation).
base_command() {
  local file=$RUN/$1.cmd
  [ -s "$file" ] || podman inspect -f '{{json .Config.Cmd}}' "$(container "$1")" >"$file"
  cat "$file"
}

# wait_ready NAME: its health check passes (postgres, processor, service) or it has said it
# claims (consumer, which has no port); 60 s at most, and a container that exits fails at once.
wait_ready() {
  local name=$1 ctr
  ctr=$(container "$name")
  for _ in $(seq 1 300); do
    if ! running "$name"; then
      echo "docker/stack.sh: $name exited; its last log lines:" >&2
      podman logs --tail 20 "$ctr" >&2 || true
      return 1
    fi
    case $name in
      consumer) podman logs "$ctr" 2>&1 | grep -q "order-consumer claiming" && return 0 ;;
      *) podman healthcheck run "$ctr" >/dev/null 2>&1 && return 0 ;;
    esac
    sleep 0.2
  done
  echo "docker/stack.sh: $name not ready within 60 s; podman logs $ctr" >&2
  return 1
}

start() {
  local name=$1 extra="" want have ctr
  ctr=$(container "$name")
  case $name in
    service) extra=${SERVICE_ARGS:-} ;;
    consumer) extra=${CONSUMER_ARGS:-} ;;
    postgres | processor) ;;
    *) echo "docker/stack.sh: unknown component $name (postgres, processor, service, consumer)" >&2; return 2 ;;
  esac
  want=$(base_command "$name" | jq -c .)
  if [ -n "$extra" ]; then
    # shellcheck disable=SC2086  # *_ARGS are lists of flags
    want=$(printf '%s\n' $extra | jq -R . | jq -cs --argjson base "$want" '$base + .')
  fi
  have=$(podman inspect -f '{{json .Config.Cmd}}' "$ctr" | jq -c .)
  if [ "$want" = "$have" ]; then
    podman start "$ctr" >>"$LOG" 2>&1
  else
    local ports=()
    [ "$name" = consumer ] || ports=(--service-ports)
    podman rm -f "$ctr" >>"$LOG" 2>&1
    mapfile -t argv < <(jq -r '.[]' <<<"$want")
    compose run -d -T --no-deps "${ports[@]}" --name "$ctr" "$name" "${argv[@]}"
  fi
  wait_ready "$name"
}

# stop NAME [SIGNAL]: SIGTERM through the container's init (SIGKILL after 5 s), or SIGKILL.
stop() {
  local ctr
  ctr=$(container "$1")
  if [ "${2:-}" = KILL ]; then
    podman kill "$ctr" >>"$LOG" 2>&1 || true
    podman wait "$ctr" >/dev/null 2>&1 || true
  else
    podman stop -t 5 "$ctr" >>"$LOG" 2>&1
  fi
}

cmd=${1:-status}
shift || true
case $cmd in
  up) for n in postgres processor service consumer; do start "$n"; done ;;
  start) start "$1" ;;
  stop) stop "$1" ;;
  kill) stop "$1" KILL ;;
  status)
    for n in postgres processor service consumer; do
      echo "$n: $(podman inspect -f '{{.State.Status}}' "$(container "$n")" 2>/dev/null || echo absent) ($(container "$n"))"
    done
    ;;
  # The service's own image and secret (CHECKOUT_TOKEN_SECRET in its environment).
  token) podman exec "$(container service)" checkout-service --mint-token "$1" "$2" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
