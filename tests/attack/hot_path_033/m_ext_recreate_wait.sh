# An acquire that waits behind another session's uncommitted DROP EXTENSION + CREATE EXTENSION
# (or ALTER EXTENSION UPDATE), warm backend (relation OIDs cached) and cold backend.
K='{"a":1}'
acq() { echo "SELECT outcome, generation, convert_from(response_body,'UTF8') AS body FROM idem.acquire('acme', '$1', '$K'::jsonb);"; }
mk() { echo "SELECT idem.complete(handle, attempt, 200, NULL, convert_to('$2','UTF8')) IS NULL AS done FROM idem.acquire('acme', '$1', '$K'::jsonb);"; }
scenario() {
  start A; start B
  run A "SET client_min_messages = warning;"; run B "SET client_min_messages = warning;"
  run A "$(mk rw-000000000000001 one)"
  run A "$(acq rw-000000000000001)"
  echo "## 1 B recreates the extension in an open transaction; warm A's replay waits, then B commits"
  run B "BEGIN; DROP EXTENSION pg_idempotency CASCADE; CREATE EXTENSION pg_idempotency;"
  send A "$(acq rw-000000000000001)"
  sleep 0.5
  run B "COMMIT;"
  wait_s A; echo "--- A (waited)>"; out A
  run A "$(acq rw-000000000000001)"
  echo "## 2 the same for a new key"
  run B "BEGIN; DROP EXTENSION pg_idempotency CASCADE; CREATE EXTENSION pg_idempotency;"
  send A "$(acq rw-000000000000002)"
  sleep 0.5
  run B "COMMIT;"
  wait_s A; echo "--- A (waited)>"; out A
  run A "$(acq rw-000000000000002)"
  echo "## 3 B rolls back instead"
  run A "$(mk rw-000000000000003 three)"
  run B "BEGIN; DROP EXTENSION pg_idempotency CASCADE; CREATE EXTENSION pg_idempotency;"
  send A "$(acq rw-000000000000003)"
  sleep 0.5
  run B "ROLLBACK;"
  wait_s A; echo "--- A (waited)>"; out A
  echo "## 4 VACUUM FULL / CLUSTER / TRUNCATE of idem.keys in B while A waits"
  run B "BEGIN; VACUUM FULL idem.keys;" 
  run B "ROLLBACK;"
  run B "BEGIN; LOCK idem.keys IN ACCESS EXCLUSIVE MODE; CLUSTER idem.keys USING keys_pkey;"
  send A "$(acq rw-000000000000003)"
  sleep 0.5
  run B "COMMIT;"
  wait_s A; echo "--- A (waited)>"; out A
  run B "BEGIN; TRUNCATE idem.keys;"
  send A "$(acq rw-000000000000003)"
  sleep 0.5
  run B "COMMIT;"
  wait_s A; echo "--- A (waited)>"; out A
}
