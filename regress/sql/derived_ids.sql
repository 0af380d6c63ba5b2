-- Deterministic order ids (reference §2.2) and processor keys (§5): the same for every retry and
-- resume of a generation, another for another generation or tenant; ids sort by time.
\set SHOW_CONTEXT never
SELECT idem.derive_order_id('acme', 'key-A-T0', 1, '2025-12-01 00:00:00+00') AS gen1,
       idem.derive_order_id('acme', 'key-A-T0', 2, '2025-12-01 00:00:00+00') AS gen2,
       idem.derive_order_id('acme2', 'key-A-T0', 1, '2025-12-01 00:00:00+00') AS other_tenant,
       idem.derive_order_id('acme', 'key-A-T0', 1, '2025-12-01 00:00:01+00') AS a_second_later;
SELECT idem.derive_order_id('a#b', 'c', 1, 'epoch') AS left_split, idem.derive_order_id('a', 'b#c', 1, 'epoch') AS right_split;
SELECT length(idem.derive_order_id('t', 'k', 1)) AS length,
       idem.derive_order_id('t', 'k', 1, '2030-01-01 00:00:00.999+00') = idem.derive_order_id('t', 'k', 1, '2030-01-01 00:00:00+00') AS whole_seconds,
       idem.derive_order_id('z', 'k', 9, '2030-01-01 00:00:00+00') < idem.derive_order_id('a', 'k', 1, '2030-01-01 00:00:01+00') AS sorts_by_time;
SELECT expect_error($$SELECT idem.derive_order_id('t', 'k', 0, now())$$) AS generation_zero;
SELECT expect_error($$SELECT idem.derive_order_id('t', 'k', 1, '1969-12-31 23:59:59+00')$$) AS before_1970;
SELECT expect_error($$SELECT idem.derive_order_id('t', 'k', 1, '2106-02-08 00:00:00+00')$$) AS after_2106;
SELECT expect_error($$SELECT idem.derive_order_id(NULL, 'k', 1, now())$$) AS null_tenant;

-- handler_key: stable across the attempts and resumes of a generation, new for the next one;
-- given with the lease (acquire's handler_key) and to the live holder only.
SELECT handle AS h, attempt AS a, handler_key AS hk1 FROM idem.acquire('t-ids', 'handler-key-00001', '{}'::jsonb, lease => '50 milliseconds', ttl => '200 milliseconds') \gset
SELECT :'hk1' ~ '^idem_[0-9a-f]{40}$' AS well_formed, idem.handler_key(:'h', :a) = :'hk1' AS asked_again;
SELECT idem.checkpoint(:'h', :a, 'charge_created') IS NOT NULL AS checkpointed;
SELECT pg_sleep(0.1);
SELECT outcome AS resumed_outcome, attempt AS a2, handle AS h_a2, handler_key AS hk2
  FROM idem.acquire('t-ids', 'handler-key-00001', '{}'::jsonb, ttl => '200 milliseconds') \gset
SELECT :'resumed_outcome' AS outcome;
SELECT :'hk2' = :'hk1' AS same_after_resume, idem.handler_key(:'h_a2', :a2) = :'hk1' AS resumed_holder_asks;
SELECT idem.complete(:'h_a2', :a2, 200, '{}', 'ok');
SELECT pg_sleep(0.3);
SELECT outcome, generation, handler_key <> :'hk1' AS new_for_generation_2,
       handler_key = idem._handler_key(idem._handle_digest(:'h'), 2) AS derived_from_generation
  FROM idem.acquire('t-ids', 'handler-key-00001', '{}'::jsonb);
SELECT expect_error(format('SELECT idem.handler_key(%L, 1)', 't-ids:' || repeat('0', 64))) AS no_record;
SELECT expect_error($$SELECT idem.handler_key('not a handle', 1)$$) AS bad_handle;
