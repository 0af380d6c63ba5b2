#!/usr/bin/env bash
# Crash after the charge, then several sessions racing the resume; a holder slower than its lease.
# Checks: one processor charge per key, one order per key, idem.double_charges() empty, replays
# byte-identical. Exits 1 on any violation.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
T=$(tok acme web)
check_key() {  # KEY SESSION
  local key=$1 hk n_ch n_ord
  n_ch=$(q "SELECT count(*) FROM processor.charges WHERE metadata->>'session_id' = '$2'")
  n_ord=$(q "SELECT count(*) FROM orders WHERE session_id = '$2'")
  [ "$n_ch" = 1 ] && [ "$n_ord" = 1 ] && ok "$key: 1 charge, 1 order" || defect "$key: $n_ch charges, $n_ord orders"
}
# 1. crash after charge; three retries at once after the lease ran out
S=$(uniq_id cs); K=$(uniq_id key-crash); B=$(checkout_body 1234)
post "/checkout/$S/complete" "$K" "$B" "$T" -H 'X-Demo-Fault: crash-after-charge' | cut -c1-80
"$ROOT/scripts/stack.sh" start service >/dev/null
echo "during lease: $(post "/checkout/$S/complete" "$K" "$B" "$T" | cut -c1-60)"
sleep 2.2
for i in 1 2 3; do post "/checkout/$S/complete" "$K" "$B" "$T" > /tmp/cr.$$.$i & done; wait
cut -c1-70 /tmp/cr.$$.*; 
r1=$(post "/checkout/$S/complete" "$K" "$B" "$T"); r2=$(post "/checkout/$S/complete" "$K" "$B" "$T")
[ "$r1" = "$r2" ] && grep -q "^${r1%% *} " <(grep '^20' /tmp/cr.$$.* -h | head -1) && ok "replays identical" || defect "replays differ: $r1 / $r2"
grep -h '^20' /tmp/cr.$$.* | sort -u | wc -l | grep -qx 1 || defect "the racing retries got different 2xx bodies"
rm -f /tmp/cr.$$.*
check_key "$K" "$S"
# 2. slow processor around the lease (2 s) and the processor timeout (2 s): A, then B and C later
for d in 1700 1950 2300 3500; do
  S=$(uniq_id cs); K=$(uniq_id key-slow-$d); B=$(checkout_body 1500)
  fault "{\"mode\":\"slow\",\"count\":1,\"delay_ms\":$d}"
  post "/checkout/$S/complete" "$K" "$B" "$T" > /tmp/sl.$$.a &
  sleep 2.05; post "/checkout/$S/complete" "$K" "$B" "$T" > /tmp/sl.$$.b &
  sleep 1.0; post "/checkout/$S/complete" "$K" "$B" "$T" > /tmp/sl.$$.c &
  wait
  echo "delay $d: $(cut -c1-40 /tmp/sl.$$.a) | $(cut -c1-40 /tmp/sl.$$.b) | $(cut -c1-40 /tmp/sl.$$.c)"
  for i in 1 2 3 4 5 6 7 8; do r=$(post "/checkout/$S/complete" "$K" "$B" "$T"); [ "${r%% *}" = 201 ] && break; sleep 1; done
  echo "  settled: $(echo "$r" | cut -c1-40)"
  check_key "$K" "$S"
  rm -f /tmp/sl.$$.*
done
# 3. timeout fault: the processor charges, then answers too late
S=$(uniq_id cs); K=$(uniq_id key-timeout); B=$(checkout_body 1600)
fault '{"mode":"timeout","count":1,"delay_ms":3000}'
echo "timeout: $(post "/checkout/$S/complete" "$K" "$B" "$T" | cut -c1-60)"
for i in 1 2 3 4 5 6; do r=$(post "/checkout/$S/complete" "$K" "$B" "$T"); [ "${r%% *}" = 201 ] && break; sleep 1; done
echo "  settled: $(echo "$r" | cut -c1-40)"; check_key "$K" "$S"
dc=$(q "SELECT count(*) FROM idem.double_charges()")
[ "$dc" = 0 ] && ok "double_charges() empty" || defect "double_charges(): $(q "SELECT * FROM idem.double_charges()")"
exit $fail
