#!/usr/bin/env bash
# Released SQL scripts are history: a changed byte would give two installs of one version two
# different catalogs. Fails when a script listed in sql/RELEASED differs from its recorded hash.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! grep -v '^#' sql/RELEASED | sha256sum --check --quiet --strict; then
  echo "check-released: a released script changed; ship the change as a new upgrade script instead" >&2
  exit 1
fi
echo "released scripts unchanged: $(grep -vc '^#' sql/RELEASED)"
