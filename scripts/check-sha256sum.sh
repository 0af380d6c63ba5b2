#!/usr/bin/env bash
# payload_hash must be the SHA-256 of the canonical bytes, as an independent tool (sha256sum)
# computes it from canonical_json's output: the fingerprint is reproducible outside our code.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
URL=$("$ROOT/scripts/pg.sh" url)
export PGOPTIONS="-c client_min_messages=warning"
DB=idem_sha_check
psql "$URL" -qAtc "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" >/dev/null
trap 'psql "$URL" -qAtc "DROP DATABASE IF EXISTS $DB" >/dev/null' EXIT
DBURL=${URL%/*}/$DB
psql "$DBURL" -qAtc "CREATE EXTENSION pg_idempotency" >/dev/null

docs=(
  '{"amount_cents":1999,"currency":"EUR","reason":"damaged"}'
  '{"b":[1,2.50,{"z":null,"a":true}],"a":"\u00e9\ud83d\ude00","c":1E30,"d":-0}'
  '[1e-7,1e21,0.1,123456789012345,"line\nbreak"]'
  '"just a string"'
)
checked=0
for doc in "${docs[@]}"; do
  # psql interpolates :'doc' (quoted safely) only in SQL it reads, not in -c: feed it on stdin.
  canonical=$(psql "$DBURL" -qAtX -v ON_ERROR_STOP=1 -v doc="$doc" <<<"SELECT idem.canonical_json(:'doc'::text);")
  ours=$(psql "$DBURL" -qAtX -v ON_ERROR_STOP=1 -v doc="$doc" <<<"SELECT encode(idem.payload_hash(:'doc'::text), 'hex');")
  theirs=$(printf '%s' "$canonical" | sha256sum | cut -d' ' -f1)
  if [ "$ours" != "$theirs" ]; then
    echo "MISMATCH for $doc: payload_hash=$ours sha256sum(canonical)=$theirs (canonical: $canonical)" >&2
    exit 1
  fi
  checked=$((checked + 1))
done
echo "payload_hash equals sha256sum of the canonical bytes for $checked documents"
