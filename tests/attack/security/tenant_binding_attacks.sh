#!/usr/bin/env bash
# Adversarial review of 0.3.1 (tenant binding, lease secrets, RLS). Runs against the shared dev
# cluster in its own database and roles (both removed on exit). Prints "DEFECT: ..." for every
# hole still open and "held: ..." for what resisted; exits 1 while any defect exists.
#   tests/attack/security/tenant_binding_attacks.sh        (PGHOST/PGPORT default to the dev cluster)
set -u
export PGHOST=${PGHOST:-127.0.0.1} PGPORT=${PGPORT:-54320}
DB=sec_attack_r$$
P=secatk_r$$_                       # role prefix
fail=0
defect() { echo "DEFECT: $*"; fail=1; }
ok() { echo "held: $*"; }
su() { psql -U postgres -d "$DB" -qAtX -v ON_ERROR_STOP=1 "$@"; }
as() { local r=$1; shift; psql -U "$P$r" -d "$DB" -qAtX "$@" 2>&1; }
cleanup() {
  psql -U postgres -d postgres -qAtX -c "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1
  for r in svc_a svc_b svc_c op_a aud_a cons tmp ren; do
    psql -U postgres -d postgres -qAtX -c "DROP ROLE IF EXISTS ${P}$r" >/dev/null 2>&1
  done
}
trap cleanup EXIT
psql -U postgres -d postgres -qAtX -c "CREATE DATABASE $DB" || exit 2
su -c "CREATE EXTENSION pg_idempotency" || exit 2
su <<EOF >/dev/null || exit 2
CREATE ROLE ${P}svc_a LOGIN IN ROLE idem_service;
CREATE ROLE ${P}svc_b LOGIN IN ROLE idem_service;
CREATE ROLE ${P}op_a  LOGIN IN ROLE idem_operator;
CREATE ROLE ${P}aud_a LOGIN IN ROLE idem_auditor;
CREATE ROLE ${P}cons  LOGIN IN ROLE idem_consumer;
SELECT idem.bind_tenant('${P}svc_a','acme'), idem.bind_tenant('${P}svc_b','globex'),
       idem.bind_tenant('${P}op_a','acme'),  idem.bind_tenant('${P}aud_a','acme');
SELECT idem.create_topic('refunds'), idem.create_consumer('ledger', '{refunds}', 1);
EOF

# globex: a released record with a checkpoint (stuck) holding a charge id in its recovery data.
as svc_b <<'EOF' >/dev/null
SELECT handle, attempt FROM idem.acquire('globex','globex-key-stuck-0001','{"amount":99900}'::jsonb,'web','charges') \gset
SELECT idem.checkpoint(:'handle', :attempt, 'charge_created', '{"charge_id":"ch_GLOBEX_SECRET_42"}');
SELECT idem.release(:'handle', :attempt, 'processor timeout');
EOF
plain=$(su -c "SELECT idem._handle('globex', idem.scope_digest('globex','web','charges','globex-key-stuck-0001'))")

# --- 1. resolve_stuck on another tenant's released record: no tenant check on that path.
out=$(as op_a -c "SELECT idem.resolve_stuck('$plain', NULL, 'acme operator', 200, 'forged'::bytea)")
st=$(su -c "SELECT status || '/' || encode(response_body,'escape') FROM idem.keys WHERE client_key='globex-key-stuck-0001'")
[ "$st" = "resolved/forged" ] && defect "1 operator bound to acme resolved globex's record (now $st): $out" \
                             || ok "1 resolve_stuck refused another tenant's released record ($out)"

# --- 2. resolve_stuck says whether another tenant's key exists, its attempt and lease end.
as svc_b -c "SELECT 1 FROM idem.acquire('globex','globex-key-live-00001','{}'::jsonb,'web','charges',lease=>'10 minutes')" >/dev/null
live=$(su -c "SELECT idem._handle('globex', idem.scope_digest('globex','web','charges','globex-key-live-00001'))")
out=$(as op_a -c "SELECT idem.resolve_stuck('$live', NULL, 'probe', 200)")
echo "$out" | grep -q "leased to attempt" && defect "2 resolve_stuck leaks another tenant's live lease: $(echo "$out" | head -1)" \
                                          || ok "2 resolve_stuck gives a bound operator nothing about another tenant ($out)"

# --- 3. outbox_discard / outbox_replay of another tenant's dead letter.
dead_letter() {
  as svc_b -c "SELECT idem.emit('globex','refunds','{\"refund_cents\":500}')" >/dev/null
  as cons <<'EOF' >/dev/null
SELECT event_id, token FROM idem.claim('ledger') \gset
SELECT idem.nack('ledger', :event_id, :'token', 'boom');
EOF
  su -c "SELECT max(event_id) FROM idem.outbox_dead_letters WHERE resolved_at IS NULL"
}
e=$(dead_letter)
out=$(as op_a -c "SELECT idem.outbox_discard('ledger', $e, 'acme operator drops globex refund')")
[ "$(su -c "SELECT resolution FROM idem.outbox_dead_letters WHERE event_id=$e")" = discarded ] \
  && defect "3a operator bound to acme discarded globex dead letter $e" || ok "3a outbox_discard refused ($out)"
e=$(dead_letter)
out=$(as op_a -c "SELECT idem.outbox_replay('ledger', $e)")
[ "$(su -c "SELECT replay_requested_at IS NOT NULL FROM idem.outbox_dead_letters WHERE event_id=$e")" = t ] \
  && defect "3b operator bound to acme requested a replay of globex dead letter $e" || ok "3b outbox_replay refused ($out)"

# --- 4. A bound operator unbinds (itself, or acme's service) and the role becomes unbound: every tenant.
as op_a -c "SELECT idem.unbind_tenant('${P}svc_a','acme')" >/dev/null
out=$(as svc_a -c "SELECT outcome FROM idem.acquire('globex','globex-key-by-acme-01','{}'::jsonb)")
[ "$out" = acquired ] && defect "4a acme's operator unbound acme's service, which then acquired for globex" \
                      || ok "4a unbinding a service's last tenant does not free it ($out)"
as op_a -c "SELECT idem.unbind_tenant('${P}op_a','acme')" >/dev/null
n=$(as op_a -c "SELECT count(*) FROM idem.keys WHERE tenant_id='globex'")
[ "$n" != 0 ] && defect "4b operator bound to acme unbound itself and now reads $n globex records" \
              || ok "4b self-unbind gives no more than before ($n)"
su -c "SELECT idem.bind_tenant('${P}svc_a','acme'), idem.bind_tenant('${P}op_a','acme')" >/dev/null

# --- 5. A bound operator binds a group role: every member, of any tenant, is affected.
su -c "CREATE ROLE ${P}svc_c LOGIN IN ROLE idem_service" >/dev/null     # initech's, unbound
as op_a -c "SELECT idem.bind_tenant('idem_service','acme')" >/dev/null
out=$(as svc_c -c "SELECT outcome FROM idem.acquire('initech','initech-key-000001','{}'::jsonb)")
echo "$out" | grep -qE 'IK024|ERR_TENANT_FORBIDDEN' && defect "5a acme's operator bound the idem_service group: initech's service is locked out of initech" \
                                                || ok "5a group binding by a bound operator refused ($out)"
out=$(as svc_b -c "SELECT outcome FROM idem.acquire('acme','acme-key-by-globex-01','{}'::jsonb)")
[ "$out" = acquired ] && defect "5b ... and globex's service may now act for acme (members inherit the group's binding)" \
                      || ok "5b globex service still refused for acme"
su -c "SELECT idem.unbind_tenant('idem_service','acme')" >/dev/null

# --- 6. Bindings store role names: ALTER ROLE RENAME silently unbinds; a re-created name inherits.
su -c "CREATE ROLE ${P}ren LOGIN IN ROLE idem_service" -c "SELECT idem.bind_tenant('${P}ren','acme')" >/dev/null
su -c "ALTER ROLE ${P}ren RENAME TO ${P}tmp" >/dev/null
out=$(as tmp -c "SELECT outcome FROM idem.acquire('globex','globex-key-renamed-1','{}'::jsonb)")
[ "$out" = acquired ] && defect "6a a role bound to acme, renamed, acts for globex (binding left on the old name)" \
                      || ok "6a renamed role still bound ($out)"
su -c "DROP ROLE ${P}tmp" -c "CREATE ROLE ${P}ren LOGIN IN ROLE idem_auditor" >/dev/null
out=$(as ren -c "SELECT idem._tenant_visible('globex')")
[ "$out" = f ] && defect "6b a new role created with a dropped role's name inherits its binding (sees globex: $out)" || ok "6b no inherited binding ($out)"

# --- 7. idem.stuck_leases reads as its owner and is not a security barrier: a bound auditor's
#        cheap predicate runs before the tenant filter, over every row of idem.keys.
as svc_b <<'EOF' >/dev/null
SELECT handle, attempt FROM idem.acquire('globex','globex-key-stuck-0002','{"amount":12300}'::jsonb,'web','charges') \gset
SELECT idem.checkpoint(:'handle', :attempt, 'charge_created', '{"charge_id":"ch_GLOBEX_SECRET_42"}');
SELECT idem.release(:'handle', :attempt, 'processor timeout');
EOF
out=$(as aud_a -c "SELECT count(*) FROM idem.stuck_leases WHERE (recovery_data->>'charge_id')::int = 0")
echo "$out" | grep -q ch_GLOBEX_SECRET_42 && defect "7a auditor bound to acme read globex recovery data through stuck_leases: $out" \
                                           || ok "7a stuck_leases filters before user predicates ($out)"
out=$(as aud_a <<'EOF'
CREATE FUNCTION pg_temp.peek(t text, k text, h text) RETURNS boolean LANGUAGE plpgsql COST 0.0001
  AS $$ BEGIN RAISE NOTICE 'row % % %', t, k, h; RETURN false; END $$;
SELECT count(*) FROM idem.stuck_leases s WHERE pg_temp.peek(s.tenant_id, s.client_key, s.handle);
EOF
)
n=$(echo "$out" | grep -c 'NOTICE:  row globex')
[ "$n" -gt 0 ] && defect "7b auditor bound to acme listed $n globex rows of idem.keys (not only stuck ones) with a temp function" \
               || ok "7b temp-function probe saw nothing"

# --- 8. A handle acquire did not return is echoed in the error, secret included.
h=$(as svc_b -c "SELECT handle FROM idem.acquire('globex','globex-key-echo-0001','{}'::jsonb)")
out=$(as svc_b -c "SELECT idem.release('$h ', 1)")
echo "$out" | grep -q "${h##*:}" && defect "8 a malformed handle's error message carries the lease secret: $(echo "$out" | head -1)" \
                                 || ok "8 malformed handle not echoed"

# --- 9. A bound operator edits the machines every tenant's rows are checked against.
before=$(su -c "SELECT idem.can_transition('order','shipped','refunded')")
as op_a -c "INSERT INTO idem.machine_transitions VALUES ('order','shipped','refunded',NULL,NULL)" >/dev/null
after=$(su -c "SELECT idem.can_transition('order','shipped','refunded')")
[ "$before" = f ] && [ "$after" = t ] && defect "9 operator bound to acme made shipped -> refunded legal for every tenant" \
                                     || ok "9 machine edit refused or no effect ($before -> $after)"

# --- What held (regressions would print DEFECT).
out=$(as svc_a -c "SET ROLE idem_service" -c "SELECT outcome FROM idem.acquire('globex','globex-key-setrole-1','{}'::jsonb)")
echo "$out" | grep -q ERR_TENANT_FORBIDDEN && ok "SET ROLE keeps the login role's binding" || defect "SET ROLE escaped the binding: $out"
h=$(as svc_b -c "SELECT handle || ' ' || attempt FROM idem.acquire('globex','globex-key-holder-001','{}'::jsonb)")
out=$(as svc_a -c "SELECT idem.complete('${h% *}', ${h#* }, 200, '{}', '')")
echo "$out" | grep -q ERR_TENANT_FORBIDDEN && ok "another tenant's full holder handle is refused by tenant" || defect "cross-tenant complete: $out"
hp=${h% *}; hp=${hp%:*}
out=$(as svc_b -c "SELECT idem.release('$hp', ${h#* })")
echo "$out" | grep -q "does not carry this lease's secret" && ok "plain handle + fencing token refused" || defect "plain handle acted: $out"
out=$(as aud_a -c "CREATE FUNCTION pg_temp.p(t text) RETURNS boolean LANGUAGE plpgsql COST 0.0001 AS \$\$ BEGIN RAISE NOTICE 'row %', t; RETURN true; END \$\$" \
               -c "SELECT count(*) FROM idem.keys k WHERE pg_temp.p(k.tenant_id)" -c "SELECT count(*) FROM idem.mutations m WHERE pg_temp.p(m.tenant_id)")
echo "$out" | grep -q 'row globex' && defect "RLS table leaked to a leaky function" || ok "RLS quals run before an auditor's leaky predicate on the tables"

exit $fail
