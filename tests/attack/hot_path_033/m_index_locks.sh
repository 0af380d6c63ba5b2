# The primary-key read gives its index lock back at once (systable_endscan), where the SPI/PL/pgSQL
# read held AccessShareLock on keys_pkey to the end of the transaction. What an operator's index
# maintenance then meets.
K='{"a":1}'
acq() { echo "SELECT outcome, generation, convert_from(response_body,'UTF8') AS body FROM idem.acquire('acme', '$1', '$K'::jsonb);"; }
mk() { echo "SELECT idem.complete(handle, attempt, 200, NULL, convert_to('$2','UTF8')) IS NULL AS done FROM idem.acquire('acme', '$1', '$K'::jsonb);"; }
rel() { echo "SELECT string_agg(relation::regclass::text || '=' || mode, ',' ORDER BY 1) FROM pg_locks WHERE locktype='relation' AND pid = (SELECT pid FROM pg_stat_activity WHERE application_name = '$1') AND relation::regclass::text LIKE 'idem.keys%';"; }
scenario() {
  start A; start B; start C
  run A "SET client_min_messages = warning;"
  run A "$(mk ix-000000000000001 one)"
  echo "## 1 A replays inside an open transaction; B runs REINDEX INDEX idem.keys_pkey"
  run A "BEGIN;"
  run A "$(acq ix-000000000000001)"
  run C "$(rel A)"
  send B "SET lock_timeout = '1s'; REINDEX INDEX idem.keys_pkey;"
  wait_s B; echo "--- B>"; out B
  run A "$(acq ix-000000000000001)"
  run A "COMMIT;"
  echo "## 2 the same with REINDEX INDEX CONCURRENTLY (new index OID)"
  run A "BEGIN;"
  run A "$(acq ix-000000000000001)"
  send B "SET lock_timeout = '1s'; REINDEX INDEX CONCURRENTLY idem.keys_pkey;"
  wait_s B; echo "--- B>"; out B
  run A "$(acq ix-000000000000001)"
  run A "COMMIT;"
  run B "RESET lock_timeout; REINDEX INDEX CONCURRENTLY idem.keys_pkey;"
  run A "$(acq ix-000000000000001)"
  run A "$(mk ix-000000000000002 two)"
  run A "$(acq ix-000000000000002)"
  echo "## 3 A waits while B holds REINDEX's lock (B inside a transaction)"
  run B "BEGIN; REINDEX INDEX idem.keys_pkey;"
  run A "BEGIN; SET LOCAL lock_timeout = '500ms';"
  run A "$(acq ix-000000000000001)"
  run A "ROLLBACK;"
  run B "COMMIT;"
  echo "## 4 the index renamed by a superuser, then back (warm A, fresh C)"
  run B "ALTER INDEX idem.keys_pkey RENAME TO keys_pkey_renamed;"
  run A "$(acq ix-000000000000001)"
  run C "$(acq ix-000000000000001)"
  run A "$(mk ix-000000000000003 three)"
  run B "ALTER INDEX idem.keys_pkey_renamed RENAME TO keys_pkey;"
  run A "$(acq ix-000000000000001)"
  run C "$(acq ix-000000000000001)"
}
