#!/usr/bin/env bash
# Lease secrets (0.3.3 pool of 256 per backend): collect the secrets of many new keys from several
# long sessions and many short ones; no duplicate, each record's lease_secret_hash is the SHA-256
# of its handle's secret, and no secret (hex, or its raw bytes) appears anywhere in idem.keys /
# idem.mutations.   Usage: secrets.sh [version]   (default 0.3.3)
B=${PGURL_BASE:-postgresql://postgres@127.0.0.1:54320}; V=${1:-0.3.3}; DB=atk033_secrets_${V//./_}
P() { psql -X -q -At "$B/$DB" "$@"; }
psql -X -q "$B/postgres" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
P -c "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$V'; CREATE TABLE public.h(sess text, handle text, attempt bigint)"
# 4 long sessions x 1,500 new keys (a COMMIT every 50: few key locks held at once)
for s in 1 2 3 4; do
  P -c "DO \$\$ BEGIN FOR i IN 1..1500 LOOP
          INSERT INTO public.h SELECT 'long$s', a.handle, a.attempt FROM idem.acquire('t$((s%2))', format('sec-%s-%s-000000000', $s, i), '{}'::jsonb) a;
          IF i % 50 = 0 THEN COMMIT; END IF; END LOOP; END \$\$" &
done; wait
# 150 short sessions x 3 new keys (each backend fills its own pool)
for s in $(seq 1 150); do
  P -c "INSERT INTO public.h SELECT 'short$s', a.handle, a.attempt FROM generate_series(1,3) g, LATERAL idem.acquire('t0', format('sshort-%s-%s-0000000', $s, g), '{}'::jsonb) a" &
  [ $((s % 10)) -eq 0 ] && wait
done; wait
P -c "CREATE TABLE public.s AS SELECT sess, handle, substring(handle from ':([0-9a-f]{32})\$') AS secret FROM public.h"
echo "handles: $(P -c "SELECT count(*) || ' total, ' || count(secret) || ' with a secret, ' || count(DISTINCT secret) || ' distinct secrets, ' || count(DISTINCT sess) || ' sessions' FROM public.s")"
echo "duplicate secrets: $(P -c "SELECT count(*) FROM (SELECT secret FROM public.s GROUP BY secret HAVING count(*) > 1) d")"
echo "records whose lease_secret_hash <> sha256(secret): $(P -c "SELECT count(*) FROM public.s JOIN idem.keys k ON k.tenant_id || ':' || encode(k.scope_digest,'hex') = regexp_replace(s.handle, ':[0-9a-f]{32}\$', '') WHERE k.lease_secret_hash IS DISTINCT FROM sha256(convert_to(s.secret,'UTF8'))")"
echo "records matched: $(P -c "SELECT count(*) FROM public.s JOIN idem.keys k ON k.tenant_id || ':' || encode(k.scope_digest,'hex') = regexp_replace(s.handle, ':[0-9a-f]{32}\$', '')")"
echo "secret hex found in a record or audit row: $(P -c "SELECT count(*) FROM public.s WHERE EXISTS (SELECT 1 FROM idem.keys k WHERE strpos(k::text, s.secret) > 0) OR EXISTS (SELECT 1 FROM idem.mutations m WHERE strpos(m::text, s.secret) > 0)")"
echo "secret raw bytes found in a record (bytea columns): $(P -c "SELECT count(*) FROM public.s JOIN idem.keys k ON true WHERE position(decode(s.secret,'hex') IN coalesce(k.lease_secret_hash,'') || k.scope_digest || k.payload_hash || coalesce(k.response_body,'')) > 0" 2>&1 | head -1)"
echo "hex digit frequency (min/max of 16 digits over all secrets): $(P -c "SELECT min(c) || '/' || max(c) FROM (SELECT count(*) c FROM public.s, regexp_split_to_table(secret, '') d GROUP BY d) x")"
echo "secrets per first byte bucket (256 buckets, min/max): $(P -c "SELECT min(c) || '/' || max(c) FROM (SELECT count(*) c FROM public.s GROUP BY left(secret,2)) x")"
echo "same secret prefix/suffix 8 hex between consecutive handles of a session: $(P -c "SELECT count(*) FROM (SELECT secret, lag(secret) OVER (PARTITION BY sess ORDER BY ctid) p FROM public.s) x WHERE left(secret,8)=left(p,8) OR right(secret,8)=right(p,8)")"
[ -n "${KEEP:-}" ] || psql -X -q "$B/postgres" -c "DROP DATABASE $DB"
