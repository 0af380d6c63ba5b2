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

# Configure and build the CMake side (core, tests, benches) into $ROOT/build.
build_cmake() {
  cmake -S "$ROOT" -B "$ROOT/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null &&
    cmake --build "$ROOT/build" -j"$JOBS" >/dev/null
}
