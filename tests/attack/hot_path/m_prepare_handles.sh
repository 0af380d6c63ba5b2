# PREPARE TRANSACTION holding a key or a complete, and another session acting with the holder's
# handle (passed across sessions); complete rolled back to a savepoint while another session uses it.
scenario() {
  start A; start B; start C
  for s in A B C; do run $s "SET idem.wait_timeout = '500ms';"; done
  run A "BEGIN; SELECT handle || ' ' || attempt FROM idem.acquire('acme', 'pp-00000000000001', '{\"a\":1}'::jsonb);"; grab HA
  set -- $HA; H=$1; AT=$2
  run A "PREPARE TRANSACTION 'attack_hp_p1';"
  run C "SELECT locks();"
  run B "SELECT outcome, generation FROM idem.acquire('acme', 'pp-00000000000001', '{\"a\":1}'::jsonb);"
  run B "SELECT outcome, generation FROM idem.acquire('acme', 'pp-00000000000001', '{\"a\":1}'::jsonb, on_busy => 'wait');"
  run B "SELECT idem.complete('$H', $AT, 200, NULL, 'from B while prepared');"
  run A "COMMIT PREPARED 'attack_hp_p1';"
  run B "SELECT outcome FROM idem.acquire('acme', 'pp-00000000000001', '{\"a\":1}'::jsonb);"
  run A "BEGIN; SELECT idem.complete('$H', $AT, 200, NULL, 'prepared complete'); PREPARE TRANSACTION 'attack_hp_p2';"
  run C "SELECT locks();"
  run B "SELECT outcome FROM idem.acquire('acme', 'pp-00000000000001', '{\"a\":1}'::jsonb);"
  run B "SELECT idem.complete('$H', $AT, 200, NULL, 'twice');"
  run A "ROLLBACK PREPARED 'attack_hp_p2';"
  run B "SELECT idem.complete('$H', $AT, 202, NULL, 'after rollback prepared');"
  run C "SELECT outcome, convert_from(response_body, 'UTF8') FROM idem.acquire('acme', 'pp-00000000000001', '{\"a\":1}'::jsonb);"
  echo "## complete in a savepoint rolled back; meanwhile B completes with the same handle"
  run A "SELECT handle || ' ' || attempt FROM idem.acquire('acme', 'sv-00000000000001', '{\"a\":1}'::jsonb);"; grab HA
  set -- $HA; H=$1; AT=$2
  run A "BEGIN; SAVEPOINT s; SELECT idem.complete('$H', $AT, 200, NULL, 'sp');"
  run B "SELECT idem.complete('$H', $AT, 200, NULL, 'B while A holds');"
  run A "ROLLBACK TO s;"
  run C "SELECT locks();"
  run B "BEGIN; SELECT idem.complete('$H', $AT, 203, NULL, 'B meanwhile');"
  run A "SELECT idem.complete('$H', $AT, 201, NULL, 'A final');"
  run B "COMMIT;"
  run A "COMMIT;"
  run C "SELECT outcome, convert_from(response_body, 'UTF8') FROM idem.acquire('acme', 'sv-00000000000001', '{\"a\":1}'::jsonb);"
  echo "## prepared acquire of a released key (fresh attempt); contender in wait mode"
  run A "SELECT handle || ' ' || attempt FROM idem.acquire('acme', 'rl-00000000000001', '{\"a\":1}'::jsonb);"; grab HA
  set -- $HA; H=$1; AT=$2
  run A "SELECT idem.release('$H', $AT, 'failed');"
  run A "BEGIN; SELECT outcome FROM idem.acquire('acme', 'rl-00000000000001', '{\"a\":2}'::jsonb); PREPARE TRANSACTION 'attack_hp_p3';"
  run B "SELECT outcome FROM idem.acquire('acme', 'rl-00000000000001', '{\"a\":3}'::jsonb);"
  run B "SELECT outcome FROM idem.acquire('acme', 'rl-00000000000001', '{\"a\":3}'::jsonb, on_busy => 'wait');"
  run A "ROLLBACK PREPARED 'attack_hp_p3';"
  run B "SELECT outcome FROM idem.acquire('acme', 'rl-00000000000001', '{\"a\":3}'::jsonb);"
  run A "SELECT client_key, outcome, generation, attempt IS NULL, retry_count, convert_from(k.response_body,'UTF8') FROM idem.mutations m LEFT JOIN idem.keys k USING (tenant_id, scope_digest, client_key) ORDER BY mutation_id;"
  q "ROLLBACK PREPARED 'attack_hp_p1'" >/dev/null 2>&1; q "ROLLBACK PREPARED 'attack_hp_p2'" >/dev/null 2>&1; q "ROLLBACK PREPARED 'attack_hp_p3'" >/dev/null 2>&1
}
