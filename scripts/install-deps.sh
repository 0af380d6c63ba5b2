#!/usr/bin/env bash
# Installs the Debian 12 packages pg_idempotency needs to build, test, fuzz and benchmark.
# Does nothing (and needs no network) when every package is already installed.
set -euo pipefail

PACKAGES=(
  build-essential make cmake pkg-config git
  postgresql-15 postgresql-client-15 postgresql-server-dev-15
  libpqxx-dev libssl-dev
  libcpp-httplib-dev curl jq # the demo service, its processor and the tests that drive them speak real HTTP
  prometheus-cpp-dev         # the demo service's /metrics
  nlohmann-json3-dev         # the reference parser of the differential tests and fuzzer
  libgtest-dev libgmock-dev libbenchmark-dev
  clang libclang-rt-14-dev   # libFuzzer + sanitizers for `make fuzz`
  nodejs                     # reference ECMAScript number formatting in the conformance test
  procps iproute2            # pgrep/ps and ss, which the scripts use; minimal images lack them
)
# `install-deps.sh citus`: also what building Citus from ../shared/vendor needs (scripts/citus.sh).
if [ "${1:-}" = citus ]; then
  PACKAGES+=(libkrb5-dev liblz4-dev libzstd-dev libreadline-dev libselinux1-dev libxslt1-dev libpam0g-dev zlib1g-dev)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  # A package counts as present when dpkg says it is installed (any version).
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# node may come from outside Debian (the CI image ships its own); accept any node on PATH.
if command -v node >/dev/null 2>&1; then
  missing=("${missing[@]/nodejs}")
fi
read -r -a missing <<<"${missing[*]}"

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO="sudo"
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
