-- Bug regression (review of 0.3.4): idem.handler_key(handle) answered for the generation the
-- record had by then, checking neither the lease's secret nor its attempt. A generation-1 holder
-- that stalled past lease + TTL and asked late got generation 2's key, and would have called the
-- processor under the next request's key. Now the key comes with the lease (acquire's
-- handler_key), and handler_key(handle, attempt) answers only the live lease.
\set SHOW_CONTEXT never
-- Generation 1, leased briefly; it becomes history, and a new request takes generation 2.
SELECT handle AS h1, attempt AS a1, generation AS g1, handler_key AS k1
  FROM idem.acquire('t-hk', 'handler-key-000001', '{"amount":1}'::jsonb, lease => '20 milliseconds', ttl => '20 milliseconds') \gset
SELECT :g1 AS g1, :'k1' = idem._handler_key(idem.scope_digest('t-hk', '', '', 'handler-key-000001'), 1) AS fast_path_key_is_gen1s;
SELECT idem.handler_key(:'h1', :a1) = :'k1' AS live_holder_asks;
SELECT pg_sleep(0.1);
SELECT outcome, generation AS g2, handle AS h2, attempt AS a2, handler_key AS k2
  FROM idem.acquire('t-hk', 'handler-key-000001', '{"amount":2}'::jsonb) \gset
SELECT :'outcome' AS outcome, :g2 AS g2, :'k2' <> :'k1' AS new_generation_new_key,
       :'k2' = idem._handler_key(idem.scope_digest('t-hk', '', '', 'handler-key-000001'), 2) AS general_path_key_is_gen2s;
-- The stale holder asks late: refused, and told nothing of generation 2's key.
SELECT replace(replace(expect_error(format('SELECT idem.handler_key(%L, %s)', :'h1', :a1)), :'a1', 'A1'), :'a2', 'A2') AS stale_holder;
-- Its handle with the live attempt (the secret is generation 1's): refused.
SELECT replace(expect_error(format('SELECT idem.handler_key(%L, %s)', :'h1', :a2)), :'a2', 'A2') AS stale_secret_live_attempt;
-- The plain handle (no secret) with the live attempt: refused.
SELECT replace(expect_error(format('SELECT idem.handler_key(%L, %s)', record_of(:'h2'), :a2)), :'a2', 'A2') AS no_secret;
SELECT idem.handler_key(:'h2', :a2) = :'k2' AS live_holder_of_gen2;
SELECT expect_error(format('SELECT idem.handler_key(%L, NULL)', :'h2')) AS null_attempt;
-- The one-argument form is withdrawn, with a message saying what to use.
SELECT expect_error(format('SELECT idem.handler_key(%L)', :'h2')) AS one_argument_form;
-- A resumed lease gets its generation's key with the lease too.
SELECT handle AS h3, attempt AS a3 FROM idem.acquire('t-hk', 'handler-key-000003', '{}'::jsonb, lease => '20 milliseconds') \gset
SELECT idem.checkpoint(:'h3', :a3, 'charge_created', '{"charge_id":"ch_1"}') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.1);
SELECT outcome, generation, handler_key = idem._handler_key(idem.scope_digest('t-hk', '', '', 'handler-key-000003'), 1) AS gen1_key
  FROM idem.acquire('t-hk', 'handler-key-000003', '{}'::jsonb);
-- Answers that grant nothing carry no key.
SELECT outcome, handler_key IS NULL AS no_key FROM idem.acquire('t-hk', 'handler-key-000003', '{}'::jsonb);
SELECT outcome, handler_key IS NULL AS no_key FROM idem.acquire('t-hk', 'handler-key-000003', '{"other":1}'::jsonb);
