#!/usr/bin/env bash
# Runs every attack against the attack stack (see lib.sh); exits 1 if any found a defect.
cd "$(dirname "$0")" && rc=0
for t in partial_refunds_race refund_vs_shipment refund_overdraw crash_and_lease_races short_lease kills token_tenant_colon; do
  echo "== $t"; ./$t.sh || rc=1
done
exit $rc
