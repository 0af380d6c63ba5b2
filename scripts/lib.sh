# Shared helpers for the project scripts (sourced, not run).
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

# Run a command as root: directly when we are root, through sudo otherwise.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Build the extension with PGXS and install it into the PostgreSQL 15 server directories.
build_and_install_extension() {
  make -C "$ROOT" -s -j"$JOBS" >/dev/null && as_root make -C "$ROOT" -s install >/dev/null
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
