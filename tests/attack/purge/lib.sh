# Helpers for the purge_expired attack scripts: several psql sessions driven from bash, run once
# against a database of ATTACK_OLD and once against one of ATTACK_NEW (VERSION picks which).
# `run S sql` sends and waits; `send S sql` sends without waiting; `wait_s S` waits for S.
set -u
PGURL_BASE=${PGURL_BASE:-postgresql://postgres@127.0.0.1:54320}
declare -A FD SEQ POS
# The two versions compared and the name prefix of databases, roles and prepared transactions.
ATTACK_OLD=${ATTACK_OLD:-0.3.2}
ATTACK_NEW=${ATTACK_NEW:-0.3.3}
ATTACK_PREFIX=${ATTACK_PREFIX:-atk_purge}
WORK=$(mktemp -d /tmp/$ATTACK_PREFIX.XXXXXX)
psql_admin() { psql -X -q -At "$PGURL_BASE/postgres" -c "$1"; }
q() { psql -X -q -At "$PGURL_BASE/$DB" -c "$1" 2>&1; }
setup_db() {  # setup_db DB VERSION
  psql_admin "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1
  psql_admin "CREATE DATABASE $1"
  psql -X -q -At "$PGURL_BASE/$1" -v ON_ERROR_STOP=1 -f - >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION pg_idempotency VERSION '$2';
-- Key locks (advisory, objsubid 3) held, by session name (prepared transactions as 'prepared').
CREATE FUNCTION public.locks() RETURNS text LANGUAGE sql AS \$\$
  SELECT coalesce(string_agg(who || '=' || n, ' ' ORDER BY who), 'none') FROM (
    SELECT coalesce(a.application_name, CASE WHEN l.pid IS NULL THEN 'prepared' ELSE 'pid' END) AS who, count(*) AS n
      FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.objsubid = 3 AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
     GROUP BY 1) s \$\$;
CREATE FUNCTION public.waiting() RETURNS text LANGUAGE sql AS \$\$
  SELECT coalesce(string_agg(application_name || ':' || wait_event_type || '/' || wait_event, ' '), 'nobody waits')
    FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' \$\$;
-- A history record written directly: resolved long ago, expired 'age' ago (ttl 1 s).
CREATE FUNCTION public.mk_hist(t text, k text, gen integer DEFAULT 1, age interval DEFAULT '1 hour') RETURNS void LANGUAGE sql AS \$\$
  INSERT INTO idem.keys (tenant_id, scope_digest, status, attempt, generation, payload_hash, hash_scheme,
                         caller_id, resource, client_key, lease_interval, ttl, response_status,
                         response_headers, response_body, created_at, resolved_at, expires_at, attempted_at)
  VALUES (t, idem.scope_digest(t, '', '', k), 'resolved', nextval('idem.fencing_token_seq'), gen,
          idem.payload_hash('{}'::jsonb), 1, '', '', k, '30 seconds', '1 second', 200, '{}',
          convert_to('resp ' || k || ' g' || gen, 'UTF8'), now() - age - interval '1 second',
          now() - age - interval '1 second', now() - age, now() - age - interval '1 second') \$\$;
CREATE FUNCTION public.st(t text) RETURNS TABLE (client_key text, status text, generation integer, live boolean) LANGUAGE sql AS \$\$
  SELECT client_key, status, generation, expires_at IS NULL OR expires_at > clock_timestamp() FROM idem.keys WHERE tenant_id = t ORDER BY 1 \$\$;
CREATE FUNCTION public.ret(t text) RETURNS TABLE (client_key text, generation integer) LANGUAGE sql AS \$\$
  SELECT coalesce((SELECT k.client_key FROM idem.keys k WHERE k.scope_digest = g.scope_digest), '(gone) ' || left(encode(g.scope_digest, 'hex'), 8)), g.generation
    FROM idem.retired_keys g WHERE g.tenant_id = t ORDER BY 1 \$\$;
CREATE FUNCTION public.dg(t text, k text) RETURNS bytea LANGUAGE sql IMMUTABLE AS \$\$ SELECT idem.scope_digest(t, '', '', k) \$\$;
SQL
}
start() {  # start NAME
  local n=$1
  mkfifo "$WORK/$n.in"
  PGAPPNAME=$n psql -X -q -At -v VERBOSITY=terse "$PGURL_BASE/$DB" <"$WORK/$n.in" >"$WORK/$n.out" 2>&1 &
  exec {fd}>"$WORK/$n.in"
  FD[$n]=$fd; SEQ[$n]=0; POS[$n]=0
  printf '\\set SHOW_CONTEXT never\n' >&$fd
}
send() { local n=$1; shift; printf '%s\n' "$*" >&${FD[$n]}; printf -- '--- %s> %s   (sent, not waited for)\n' "$n" "$*"; }
wait_s() {
  local n=$1; SEQ[$n]=$(( ${SEQ[$n]} + 1 )); local m="__done_${n}_${SEQ[$n]}__"
  printf '\\echo %s\n' "$m" >&${FD[$n]}
  local i=0; until grep -q "$m" "$WORK/$n.out"; do sleep 0.05; i=$((i+1)); [ $i -gt 600 ] && { echo "TIMEOUT waiting for $n"; return 1; }; done
}
out() { local n=$1 p=${POS[$1]}; local total; total=$(wc -c <"$WORK/$n.out"); tail -c +$((p+1)) "$WORK/$n.out" | head -c $((total - p)) | grep -v '^__done_' >"$WORK/last"; POS[$n]=$total; sed 's/^/    /' "$WORK/last"; }
run() { local n=$1; shift; send_quiet "$n" "$*"; wait_s "$n"; printf -- '--- %s> %s\n' "$n" "$*"; out "$n"; }
send_quiet() { local n=$1; shift; printf '%s\n' "$*" >&${FD[$n]}; }
collect() { local n=$1; wait_s "$n"; printf -- '--- %s (result of the step sent before)\n' "$n"; out "$n"; }
stop_all() {
  for n in "${!FD[@]}"; do printf '\\q\n' >&${FD[$n]} 2>/dev/null; eval "exec ${FD[$n]}>&-"; done
  wait 2>/dev/null
  FD=(); SEQ=(); POS=()
  rm -f "$WORK"/*.in "$WORK"/*.out
}
