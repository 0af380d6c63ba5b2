#!/usr/bin/env bash
# Runs diff_single_session.sql against 0.3.1 (the PL/pgSQL reference) and 0.3.2 (the C fast
# path), each in a fresh attack_hp_* database, and diffs the normalized outputs.
B=postgresql://postgres@127.0.0.1:54320
D=$(dirname "$0"); W=$(mktemp -d)
NEW=${ATTACK_NEW_VERSION:-0.3.3}  # the C fast path (0.3.2 and later share the library)
for v in 0.3.1 "$NEW"; do
  db=attack_hp_diff_${v//./_}
  psql -X -q "$B/postgres" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" 2>/dev/null
  psql -X -q "$B/$db" -c "SET client_min_messages=warning; CREATE EXTENSION pg_idempotency VERSION '$v'"
  psql -X -q -P pager=off "$B/$db" -f "$D/diff_single_session.sql" 2>&1 \
    | sed -E 's/[0-9a-f]{32}/<S>/g; s/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.+]+/<ts>/g; /^LOCATION:/d; s/^psql:[^:]+:[0-9]+: //' >"$W/$v"
  psql -X -q "$B/postgres" -c "DROP DATABASE $db"
done
cp "$W/0.3.1" /tmp/attack_hp_ref.out; cp "$W/$NEW" /tmp/attack_hp_new.out
diff "$W/0.3.1" "$W/$NEW" && echo "no difference"
rm -rf "$W"
