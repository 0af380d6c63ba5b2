# Shared helpers for the project scripts (sourced, not run).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# shellcheck source=scripts/pg-install.sh
source "$ROOT/scripts/pg-install.sh"  # the private server copy our clusters run from

# Build the extension with PGXS and install it into this checkout's private copy of the server
# (build/pg-install/, made or refreshed first), never into the system's directories.
build_and_install_extension() {
  make -C "$ROOT" -s -j"$JOBS" >/dev/null && pg_install_server && pg_install_extension
}

# build_cmake DIR "TARGETS" [cmake options...]: configure the CMake side (core, tests, benches,
# fuzzers) in $ROOT/DIR and build TARGETS ("all", or a space-separated list). One folder per use:
# make test's build/, make bench's build-bench/, make fuzz's build-fuzz/ (clang).
build_cmake() {
  local dir=$1 targets=$2
  shift 2
  # shellcheck disable=SC2086  # TARGETS is a list
  cmake -S "$ROOT" -B "$ROOT/$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null &&
    cmake --build "$ROOT/$dir" -j"$JOBS" --target $targets >/dev/null
}

# ---- the throwaway server: stop what we started, leave alone what was running ----------------
# pg_up starts this checkout's cluster (scripts/pg.sh) on ${PGPORT:-54320} unless it is already
# running, remembers which it was, and checks that the server answering on the port is ours (its
# data directory): nothing may run against a server we did not start or check. It sets an
# EXIT/INT/TERM trap that calls pg_down, which stops the server only if pg_up started it; a
# caller may call pg_down earlier itself (test.sh does, before its summary). Returns non-zero,
# having said why, when the server cannot be started or the one on the port is not ours.
PG_STARTED_HERE=0 PG_DOWN_DONE=0
pg_up() {
  trap _pg_on_exit EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  if ! "$ROOT/scripts/pg.sh" status >/dev/null 2>&1; then
    # Set before starting: a start that fails half-way may still leave a server of ours behind.
    PG_STARTED_HERE=1
    "$ROOT/scripts/pg.sh" start || return 1
  fi
  "$ROOT/scripts/pg.sh" owned
}

pg_down() {
  [ "$PG_DOWN_DONE" = 0 ] || return 0
  PG_DOWN_DONE=1
  if [ "$PG_STARTED_HERE" != 1 ]; then
    if "$ROOT/scripts/pg.sh" status >/dev/null 2>&1; then
      echo "the throwaway PostgreSQL was running before this run: left running (scripts/pg.sh stop stops it)"
    fi
    return 0
  fi
  PG_STARTED_HERE=0
  "$ROOT/scripts/pg.sh" status >/dev/null 2>&1 || return 0  # it never came up
  if "$ROOT/scripts/pg.sh" stop; then
    echo "stopped the throwaway PostgreSQL this run started"
  else
    echo "could not stop the throwaway PostgreSQL this run started: see scripts/pg.sh status" >&2
    return 1
  fi
}

# A command run on exit before the server stops (the demo stack's `stack.sh down`): set by
# stack_up, so whatever ends a run also stops the programs it started on the server.
BEFORE_PG_DOWN=""
_pg_on_exit() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$BEFORE_PG_DOWN" ]; then eval "$BEFORE_PG_DOWN" || true; fi
  pg_down || { [ "$rc" -ne 0 ] || rc=1; }
  exit "$rc"
}

# stack_up: a fresh demo database and the three programs (scripts/stack.sh, with the caller's
# STACK_* and *_PORT settings), stopped again on exit. stack_down stops them now.
stack_up() {
  BEFORE_PG_DOWN="stack_down"
  "$ROOT/scripts/stack.sh" setup && "$ROOT/scripts/stack.sh" up
}
stack_down() {
  BEFORE_PG_DOWN=""
  "$ROOT/scripts/stack.sh" down
}

# demo_driver [--plant]: the main job's scenarios against the running stack (examples/demo-driver).
demo_driver() {
  local stack="$ROOT/scripts/stack.sh" port=${PGPORT:-54320}
  "$ROOT/build/examples/demo-driver/demo-driver" \
    --service "http://127.0.0.1:${SERVICE_PORT:-7400}" --processor "http://127.0.0.1:${PROCESSOR_PORT:-7401}" \
    --db "postgresql://postgres@127.0.0.1:$port/${STACK_DB:-idem_demo}" --stack "$stack" \
    --token "$("$stack" token acme web)" --other-token "$("$stack" token globex web)" "$@"
}

# check_installed_extension: the server on $PGPORT (ours, see pg_up) runs from this checkout's
# private server copy and loads the pg_idempotency this checkout just built and installed there:
# the server's own share and lib directories are the copy's, the copy's shared library, control
# file and SQL scripts (sql/ and build/sql/pg_idempotency--*.sql) are byte-identical to the checkout's, and the server
# offers the control file's default_version.
check_installed_extension() {
  local url version offered file installed dirs want_dirs
  url=$("$ROOT/scripts/pg.sh" url)
  dirs=$(psql "$url" -qAtX -c "SELECT string_agg(setting, ' ' ORDER BY name) FROM pg_config
                                 WHERE name IN ('PKGLIBDIR', 'SHAREDIR')") || return 1
  want_dirs="$(readlink -f "$PG_PKGLIBDIR") $(readlink -f "$PG_SHAREDIR")"
  if [ "$dirs" != "$want_dirs" ]; then
    echo "the server on port ${PGPORT:-54320} does not run from this checkout's server copy: its lib and share are '$dirs', not '$want_dirs'" >&2
    return 1
  fi
  for file in "$ROOT/pg_idempotency.so" "$ROOT/pg_idempotency.control" "$ROOT"/sql/pg_idempotency--*.sql \
              "$ROOT"/build/sql/pg_idempotency--*.sql; do
    case "$file" in
      *.so) installed=$PG_PKGLIBDIR/${file##*/} ;;
      *) installed=$PG_SHAREDIR/extension/${file##*/} ;;
    esac
    if ! cmp -s "$file" "$installed"; then
      echo "the installed extension is not this build: $installed differs from $file (or one is missing)" >&2
      return 1
    fi
  done
  version=$(sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$ROOT/pg_idempotency.control")
  offered=$(psql "$url" -qAtX \
    -c "SELECT default_version FROM pg_available_extensions WHERE name = 'pg_idempotency'") || return 1
  if [ -z "$version" ] || [ "$offered" != "$version" ]; then
    echo "the server offers pg_idempotency '${offered:-(none)}', this checkout's control file says '${version:-(none)}'" >&2
    return 1
  fi
  echo "pg_idempotency $version: the server loads this build, from the private server copy ${PG_INSTALL#"$ROOT"/}"
}
