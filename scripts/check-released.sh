#!/usr/bin/env bash
# Released SQL scripts are history: a changed byte would give two installs of one version two
# different catalogs. Fails when a script listed in sql/RELEASED differs from its recorded hash
# (an upgrade script expanded from its include list is expanded again here and compared), or when
# an upgrade script types one of our SQLSTATEs by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build/sql
for list in sql/upgrades/*.sql.in; do
  [ -e "$list" ] || continue
  scripts/sql-expand.sh "$list" "build/sql/$(basename "$list" .in)"
done
if ! grep -v '^#' sql/RELEASED | sha256sum --check --quiet --strict; then
  echo "check-released: a released script changed; ship the change as a new upgrade script instead" >&2
  exit 1
fi
# One error table: SQL after 0.1.0 raises through idem._raise(name, ...), never a typed IK code.
if grep -rn "ERRCODE *= *'IK" sql/pg_idempotency--*--*.sql sql/udfs sql/schema; then
  echo "check-released: raise our errors with idem._raise('ERR_...', message), not a hand-typed SQLSTATE" >&2
  exit 1
fi
echo "released scripts unchanged: $(grep -vc '^#' sql/RELEASED)"
