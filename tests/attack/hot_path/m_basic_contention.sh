# Two/three sessions on one key: holder open, contenders reject/wait, commit, complete, replay;
# lock holders after each step.
scenario() {
  start A; start B; start C
  for s in A B C; do run $s "SET idem.wait_timeout = '800ms';"; done
  run A "BEGIN; SELECT outcome FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":1}'::jsonb) WHERE set_config('x.h', handle, false) IS NOT NULL AND set_config('x.a', attempt::text, false) IS NOT NULL;"
  run B "SELECT outcome, retry_after, generation FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":1}'::jsonb);"
  run B "SELECT outcome FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":1}'::jsonb, on_busy => 'wait');"
  run C "SELECT outcome FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":2}'::jsonb);"
  run C "SELECT locks();"
  run A "COMMIT;"
  run C "SELECT locks();"
  run B "SELECT outcome, generation FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":1}'::jsonb, on_busy => 'wait');"
  run B "SELECT outcome FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":2}'::jsonb);"
  run C "SELECT locks();"
  run A "BEGIN; SELECT idem.complete(current_setting('x.h'), current_setting('x.a')::bigint, 201, NULL, 'done');"
  run C "SELECT locks();"
  run B "SELECT outcome FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":1}'::jsonb);"
  send B "SELECT outcome, convert_from(response_body, 'UTF8') FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":1}'::jsonb, on_busy => 'wait');"
  sleep 0.3
  run A "COMMIT;"
  wait_s B; echo "--- B (waited)>"; out B
  run C "SELECT outcome FROM idem.acquire('acme', 'mk-00000000000001', '{\"a\":1}'::jsonb);"
  echo "## new key held open by A; B waits, A rolls back; B must acquire"
  run A "BEGIN; SELECT outcome FROM idem.acquire('acme', 'mk-00000000000002', '{\"a\":1}'::jsonb);"
  run C "SELECT outcome FROM idem.acquire('acme', 'mk-00000000000002', '{\"a\":1}'::jsonb);"
  send B "SELECT outcome, generation FROM idem.acquire('acme', 'mk-00000000000002', '{\"a\":1}'::jsonb, on_busy => 'wait');"
  sleep 0.2
  run A "ROLLBACK;"
  wait_s B; echo "--- B (waited)>"; out B
  run C "SELECT locks();"
  run C "SELECT outcome FROM idem.acquire('acme', 'mk-00000000000002', '{\"a\":1}'::jsonb);"
  run A "SELECT client_key, outcome, generation, retry_count FROM idem.mutations ORDER BY mutation_id;"
}
