#!/usr/bin/env bash
# Released SQL scripts are history: a changed byte would give two installs of one version two
# different catalogs. Fails when a script listed in sql/RELEASED differs from its recorded hash,
# or when an upgrade script types one of our SQLSTATEs by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! grep -v '^#' sql/RELEASED | sha256sum --check --quiet --strict; then
  echo "check-released: a released script changed; ship the change as a new upgrade script instead" >&2
  exit 1
fi
# One error table: SQL after 0.1.0 raises through idem._raise(name, ...), never a typed IK code.
if grep -n "ERRCODE *= *'IK" sql/pg_idempotency--*--*.sql; then
  echo "check-released: raise our errors with idem._raise('ERR_...', message), not a hand-typed SQLSTATE" >&2
  exit 1
fi
echo "released scripts unchanged: $(grep -vc '^#' sql/RELEASED)"
