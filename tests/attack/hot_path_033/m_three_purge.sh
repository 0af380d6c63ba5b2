# Three sessions around one expired key: an RR reader, a purge, a new acquirer; then a record
# whose purge_after came before its expires_at (resolved after a long lease) beside the purge.
K='{"a":1}'
acq() { echo "SELECT outcome, generation, retry_after, convert_from(response_body,'UTF8') AS body FROM idem.acquire('acme', '$1', '${2:-$K}'::jsonb${3:+, on_busy => '$3'});"; }
scenario() {
  start A; start B; start C
  for s in A B C; do run $s "SET client_min_messages = warning; SET idem.wait_timeout = '700ms';"; done
  run A "SELECT idem.complete(handle, attempt, 200, NULL, 'one') IS NULL FROM idem.acquire('acme', 'tp-000000000000001', '$K'::jsonb, ttl => '1 s');"
  run A "SELECT pg_sleep(1.1);"
  echo "## 1 B (RR) sees the history record, C purges it uncommitted, A acquires, C commits, B again"
  run B "BEGIN ISOLATION LEVEL REPEATABLE READ; $(acq tp-000000000000001)"
  run C "BEGIN; SELECT idem.purge_expired() AS purged;"
  run A "$(acq tp-000000000000001)"
  send A "$(acq tp-000000000000001 "$K" wait)"
  sleep 0.2
  run C "COMMIT;"
  wait_s A; echo "--- A (waited)>"; out A
  run B "$(acq tp-000000000000001)"
  run B "ROLLBACK;"
  run B "$(acq tp-000000000000001)"
  run C "SELECT generation FROM idem.retired_keys;"
  echo "## 2 lease of 2 s, ttl 1 s, resolved after 1.5 s: purge_after (attempt + 1 s) before expires_at (resolution + 1 s)"
  run A "SELECT outcome FROM idem.acquire('acme', 'tp-000000000000002', '$K'::jsonb, lease => '2 s', ttl => '1 s') WHERE set_config('x.h', handle, false) IS NOT NULL AND set_config('x.a', attempt::text, false) IS NOT NULL;"
  run A "SELECT pg_sleep(1.5);"
  run B "BEGIN; SELECT idem.purge_expired() AS purged_while_running; COMMIT;"
  run A "SELECT idem.complete(current_setting('x.h'), current_setting('x.a')::bigint, 200, NULL, 'two') IS NULL;"
  run C "SELECT idem.purge_expired() AS purged_right_after, (SELECT purge_after < expires_at FROM idem.keys WHERE client_key = 'tp-000000000000002') AS pa_before_exp;"
  run B "$(acq tp-000000000000002)"
  run A "SELECT pg_sleep(1.1);"
  run C "SELECT idem.purge_expired() AS purged_later;"
  run B "$(acq tp-000000000000002)"
  run C "SELECT client_key, outcome, generation FROM idem.mutations ORDER BY mutation_id;"
  run C "SELECT locks();"
}
