#!/usr/bin/env bash
# Index entries one purge_expired call reads (keys_purge_after_idx, keys_pkey) and index scans it
# starts, on ATTACK_OLD and ATTACK_NEW (lib.sh), with FILLER records due by purge_after but not history (expires_at in
# the future) ahead of DUE history records. Run after scenarios.sh created the databases (KEEP_DB).
cd "$(dirname "$0")" && . ./lib.sh
for ver in "${ATTACK_OLD//./}" "${ATTACK_NEW//./}"; do
  for due in 0 3 600; do
    for batch in 5 500; do
      psql -X -q -At "$PGURL_BASE/${ATTACK_PREFIX}_$ver" <<SQL
\set SHOW_CONTEXT never
DELETE FROM idem.keys WHERE tenant_id <> 'filler'; TRUNCATE idem.retired_keys;
SELECT public.mk_hist('t1', 'due-key-' || lpad(i::text, 10, '0')) FROM generate_series(1, $due) i \g /dev/null
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE b AS SELECT indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes WHERE relname = 'keys';
SELECT idem.purge_expired($batch) AS removed \gset
SELECT pg_stat_force_next_flush();
SELECT '$ver due=$due batch=$batch removed=' || :removed || ' ' || string_agg(s.indexrelname || ': scans=' || (s.idx_scan - b.idx_scan) || ' entries=' || (s.idx_tup_read - b.idx_tup_read), ', ' ORDER BY s.indexrelname)
  FROM pg_stat_user_indexes s JOIN b USING (indexrelname) WHERE s.relname = 'keys';
SQL
    done
  done
done
