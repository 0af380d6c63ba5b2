#!/usr/bin/env bash
# `make docker-check`: docker/'s images built and its compose stack run and driven, with podman,
# on a machine with no Docker engine and no registry (Debian's package mirror is enough):
#   1. what it needs from apt (podman, podman-compose, mmdebstrap, runc...) and install-deps.sh's;
#   2. a Debian 12 base image made from Debian's packages with mmdebstrap (podman import), tagged
#      $BASE and given to every Dockerfile as DEBIAN_IMAGE (the official debian:12 elsewhere);
#   3. a container tried on it, and each refusal of this kind of VM that has a known way round
#      (rlimits, crun on hybrid cgroups, the cgroup manager) printed and worked around;
#   4. the images built from this checkout's sources (podman-compose build; podman build for
#      docker/Dockerfile, which also runs `scripts/install-deps.sh` in it to show nothing is missing);
#   5. the stack created by podman-compose and started by docker/stack.sh in depends_on order;
#   6. the demo driver (build/examples/demo-driver, built here) through every scenario, killing and
#      restarting containers through docker/stack.sh; the operator's queries in the container;
#   7. the stack stopped and its volume dropped (also on failure or Ctrl-C). Images stay (cache).
# Host ports, all on 127.0.0.1: IDEM_PG_PORT (54840), IDEM_SERVICE_PORT (7840),
# IDEM_PROCESSOR_PORT (7841). DOCKER_CHECK_DIR holds the base tarball while it is made and the
# podman config; DOCKER_CHECK_REBASE=1 makes the base again; DOCKER_CHECK_JOBS (2) compile jobs;
# DOCKER_CHECK_MAKE_TEST=1 also runs `make test` in the test image (about 30 minutes more).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
if [ "$(id -u)" -ne 0 ]; then
  echo "docker-check: needs root (apt, rootful podman): sudo -E make docker-check" >&2
  exit 1
fi

WORK=${DOCKER_CHECK_DIR:-/var/tmp/pg_idempotency-docker-check}
BASE=${DOCKER_CHECK_BASE:-localhost/pg_idempotency-base:debian12}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
BUILD_JOBS=${DOCKER_CHECK_JOBS:-2}
TEST_IMAGE=localhost/pg_idempotency-test:local
export COMPOSE_PROJECT=${DOCKER_CHECK_PROJECT:-idem_docker_check}
export IDEM_PG_PORT=${IDEM_PG_PORT:-54840} IDEM_SERVICE_PORT=${IDEM_SERVICE_PORT:-7840}
export IDEM_PROCESSOR_PORT=${IDEM_PROCESSOR_PORT:-7841}
export DOCKER_STACK_RUN=$ROOT/.run/docker-check
STACK=$ROOT/docker/stack.sh
LOG=$DOCKER_STACK_RUN/compose.log
mkdir -p "$WORK" "$DOCKER_STACK_RUN"
: >"$LOG"
compose() { podman-compose -p "$COMPOSE_PROJECT" -f docker/compose.yaml "$@" >>"$LOG" 2>&1; }
step_start=$SECONDS
step() {
  echo "== $* (at $((SECONDS - step_start)) s)"
}

step "packages: podman, podman-compose, mmdebstrap and the project's own (scripts/install-deps.sh)"
PACKAGES=(podman podman-compose mmdebstrap runc crun catatonit netavark aardvark-dns iptables jq openssl)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "docker-check: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
scripts/install-deps.sh
podman --version
podman-compose version 2>/dev/null | grep -i 'podman-compose.* version' || true

# ---- 2. the base image ------------------------------------------------------------------------
if [ "${DOCKER_CHECK_REBASE:-0}" = 1 ] || ! podman image exists "$BASE"; then
  step "base image $BASE: mmdebstrap bookworm (minbase, slim's dpkg excludes) from $MIRROR"
  tarball=$WORK/base.tar
  # The official debian:12-slim's path excludes (no docs but copyrights, no man pages, no
  # locales); kept in the image's dpkg config, so packages installed later stay slim too.
  mmdebstrap --variant=minbase --mode=root --format=tar --quiet \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
    --aptopt='Acquire::Languages "none"' \
    bookworm "$tarball" \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" "deb $SECURITY_MIRROR bookworm-security main"
  podman import --change 'CMD ["bash"]' "$tarball" "$BASE" >>"$LOG" 2>&1
  echo "base tarball $(du -h "$tarball" | cut -f1); removed now that it is imported"
  rm -f "$tarball"
else
  step "base image $BASE: reusing the one made $(podman image inspect -f '{{.Created}}' "$BASE") (DOCKER_CHECK_REBASE=1 remakes it)"
fi

# ---- 3. can this machine run a container? ------------------------------------------------------
step "engine: a container on $BASE"
conf=$WORK/containers.conf
ulimits="" runtime="" cgroup_manager=""
write_conf() {
  {
    echo "# written by scripts/docker-check.sh: the workarounds this machine needed (printed above)"
    echo "[containers]"
    [ -z "$ulimits" ] || echo "default_ulimits = [$ulimits]"
    echo "[engine]"
    [ -z "$runtime" ] || echo "runtime = \"$runtime\""
    [ -z "$cgroup_manager" ] || echo "cgroup_manager = \"$cgroup_manager\""
  } >"$conf"
  export CONTAINERS_CONF=$conf
}
unset CONTAINERS_CONF
for attempt in 1 2 3 4; do
  if err=$(podman run --rm "$BASE" true 2>&1); then
    echo "podman run: ok${CONTAINERS_CONF:+, with $CONTAINERS_CONF:}"
    [ -z "${CONTAINERS_CONF:-}" ] || grep -v '^#' "$CONTAINERS_CONF" | sed 's/^/    /'
    break
  fi
  echo "podman run refused: $err"
  before="$ulimits|$runtime|$cgroup_manager"
  case $err in
    *rlimit* | *RLIMIT*)
      # podman asks for rlimits above the hard limits this VM gives root, and root here lacks
      # CAP_SYS_RESOURCE: ask for what the shell has (open files) and a plain process cap.
      if [ -z "$ulimits" ]; then
        ulimits="\"nofile=$(ulimit -Hn):$(ulimit -Hn)\", \"nproc=4096:4096\""
      elif [ -z "$runtime" ]; then
        runtime=runc  # the other OCI runtime sets them its own way
      fi
      ;;
    *"hybrid mode"* | *crun:*) [ -n "$runtime" ] || runtime=runc ;;
    *cgroup*) [ -n "$cgroup_manager" ] || cgroup_manager=cgroupfs ;;
  esac
  if [ "$before" = "$ulimits|$runtime|$cgroup_manager" ]; then
    echo "docker-check: no known workaround for that refusal; stopping (what ran is above)" >&2
    exit 1
  fi
  echo "trying again with:${ulimits:+ default_ulimits [$ulimits]}${runtime:+ runtime $runtime}${cgroup_manager:+ cgroup_manager $cgroup_manager}"
  write_conf
done
podman run --rm "$BASE" true >/dev/null 2>&1 || { echo "docker-check: still refused after $attempt tries" >&2; exit 1; }

# ---- 4. the images ----------------------------------------------------------------------------
BUILD_ARGS=(--build-arg "DEBIAN_IMAGE=$BASE" --build-arg "DEBIAN_SLIM_IMAGE=$BASE" --build-arg "JOBS=$BUILD_JOBS")
# Every compose command interpolates the secret (compose.yaml refuses to run without one).
IDEM_TOKEN_SECRET=$(openssl rand -hex 24)
export IDEM_TOKEN_SECRET
step "images: podman-compose build (docker/postgres.Dockerfile, docker/service.Dockerfile; JOBS=$BUILD_JOBS)"
build_start=$SECONDS
if ! compose build "${BUILD_ARGS[@]}"; then
  tail -40 "$LOG" >&2
  echo "docker-check: the compose build failed (log: $LOG)" >&2
  exit 1
fi
echo "built in $((SECONDS - build_start)) s (layers cached from earlier runs are reused)"
step "image: podman build docker/Dockerfile (make test's dependencies through install-deps.sh)"
build_start=$SECONDS
if ! podman build -f docker/Dockerfile -t "$TEST_IMAGE" "${BUILD_ARGS[@]}" . >>"$LOG" 2>&1; then
  tail -40 "$LOG" >&2
  echo "docker-check: docker/Dockerfile failed to build (log: $LOG)" >&2
  exit 1
fi
echo "built in $((SECONDS - build_start)) s"
podman run --rm "$TEST_IMAGE" sh -c 'scripts/install-deps.sh && echo "in the test image: install-deps.sh has nothing to install; $(pg_config --version), $(g++ --version | head -1)"'
podman image ls --format '{{.Repository}}:{{.Tag}}  {{.Size}}' |
  grep -E "pg_idempotency-(base|test|demo-postgres|demo-programs)" | sort

if [ "${DOCKER_CHECK_MAKE_TEST:-0}" = 1 ]; then
  step "make test in the test image (the RFC 8785 vectors mounted from ../shared)"
  # SYS_PTRACE: the crash loop reads the postmaster's /proc/PID/cwd (docker/Dockerfile).
  podman run --rm --cap-add SYS_PTRACE -v "$ROOT/../shared:/shared:ro" "$TEST_IMAGE"
fi

# ---- 5. the stack -------------------------------------------------------------------------------
step "the demo driver on the host (build/, as make demo builds it)"
build_cmake build "demo_driver" -DIDEM_BENCH=OFF

stack_down() {
  trap - EXIT INT TERM
  echo "== stopping the stack: podman-compose down -v (containers, network, database volume)"
  compose down -v || echo "docker-check: podman-compose down failed (log: $LOG)" >&2
  # podman-compose 1.0.3's down leaves the network it made.
  podman network ls -q --filter "label=io.podman.compose.project=$COMPOSE_PROJECT" |
    xargs -r podman network rm >>"$LOG" 2>&1 || true
  podman ps -a --filter "label=io.podman.compose.project=$COMPOSE_PROJECT" --format '{{.Names}}' | grep . &&
    echo "docker-check: containers left (above)" >&2
  return 0
}
on_exit() {
  local rc=$?
  stack_down
  exit "$rc"
}
compose down -v || true  # a run interrupted before its trap could run
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
step "the stack: podman-compose up --no-start, then docker/stack.sh up (ports 127.0.0.1:$IDEM_PG_PORT, :$IDEM_PROCESSOR_PORT, :$IDEM_SERVICE_PORT)"
rm -f "$DOCKER_STACK_RUN"/*.cmd
compose up --no-build --no-start
# --faults: the service may crash on purpose (X-Demo-Fault), as in make demo.
export SERVICE_ARGS=--faults
up_start=$SECONDS
if ! "$STACK" up; then
  "$STACK" status
  echo "docker-check: the stack did not come up (log: $LOG)" >&2
  exit 1
fi
echo "up in $((SECONDS - up_start)) s (first start: initdb and the demo schema)"
"$STACK" status
podman ps --filter "label=io.podman.compose.project=$COMPOSE_PROJECT" --format '{{.Names}}  {{.Ports}}'
# What listens on the host for the published ports: loopback and nothing else.
listeners=$(ss -ltnH "( sport = :$IDEM_PG_PORT or sport = :$IDEM_PROCESSOR_PORT or sport = :$IDEM_SERVICE_PORT )" |
  awk '{print $4}' | sort | tr '\n' ' ')
echo "host listeners on those ports: $listeners"
if [ -z "$listeners" ] || tr ' ' '\n' <<<"$listeners" | grep . | grep -qv '^127\.0\.0\.1:'; then
  echo "docker-check: a published port listens beyond 127.0.0.1, or none listens (above)" >&2
  exit 1
fi
podman exec "${COMPOSE_PROJECT}_postgres_1" \
  psql -qAtX -d idem_demo -c "SELECT 'in the postgres container: ' || version()" \
  -c "SELECT 'pg_idempotency ' || extversion FROM pg_extension WHERE extname = 'pg_idempotency'"

# ---- 6. the demo driver -------------------------------------------------------------------------
step "demo driver: every scenario of make demo against the containers"
rc=0
"$ROOT/build/examples/demo-driver/demo-driver" \
  --service "http://127.0.0.1:$IDEM_SERVICE_PORT" --processor "http://127.0.0.1:$IDEM_PROCESSOR_PORT" \
  --db "postgresql://postgres@127.0.0.1:$IDEM_PG_PORT/idem_demo" --stack "$STACK" \
  --token "$("$STACK" token acme web)" --other-token "$("$STACK" token globex web)" || rc=$?

echo
echo "==== what the operator sees, in the postgres container (podman exec ... psql)"
q() {
  echo "-- $1"
  podman exec "${COMPOSE_PROJECT}_postgres_1" psql -X -q -P pager=off -d idem_demo -c "$2"
}
q "Did we charge twice? (idem.double_charges)" "SELECT * FROM idem.double_charges()"
q "Charges at the processor, orders, recorded orders" \
  "SELECT (SELECT count(*) FROM processor.charges WHERE status IN ('succeeded', 'requires_action')) AS charges,
          (SELECT count(*) FROM orders) AS orders, (SELECT count(*) FROM sync_orders) AS sync_orders"
q "The sync plane's lag (idem.outbox_lag)" "SELECT consumer, topic, backlog, dead_letters FROM idem.outbox_lag"

stack_down
if [ "$rc" -ne 0 ]; then
  echo "docker-check: some steps did not return what they must (marked MISMATCH above)" >&2
  exit "$rc"
fi
echo "docker-check: the images built, the stack ran every scenario and stopped ($((SECONDS - step_start)) s in all)"
