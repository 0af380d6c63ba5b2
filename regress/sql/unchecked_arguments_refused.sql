-- Regressions from the SQL-surface fuzzer (make fuzz-sql), named after what broke: arguments that
-- reached PostgreSQL unchecked and came back as an internal error (XX000), "searching for elements
-- in multidimensional arrays is not supported" (0A000) or "index row requires N bytes" (54000).
-- Each is now a named error, and the refused call changes nothing.
\set SHOW_CONTEXT never
SELECT expect_error($$SELECT idem._decide('absent', false, false, false, false, false, false)$$) AS unknown_status;
SELECT idem.create_topic('ua.events');
SELECT expect_error($$SELECT idem.create_consumer('ua_c', ARRAY[ARRAY['ua.events'], ARRAY['ua.events']])$$) AS consumer_2d_topics;
SELECT count(*) AS consumers_created FROM idem.outbox_consumers WHERE consumer = 'ua_c';
SELECT idem.create_consumer('ua_c', ARRAY['ua.events']);
SELECT expect_error($$SELECT * FROM idem.claim('ua_c', ARRAY[ARRAY['ua.events']], 10)$$) AS claim_2d_topics;
SELECT expect_error($$SELECT idem.ack('ua_c', ARRAY[ARRAY[1::bigint], ARRAY[2::bigint]], gen_random_uuid())$$) AS ack_2d_ids;
SELECT expect_error($$SELECT idem.bind_tenant('idem_service', repeat('a', 1048576))$$) AS bind_huge_tenant;
SELECT count(*) AS bindings FROM idem.tenant_bindings;
SELECT handle AS h, attempt AS a FROM idem.acquire('t-ua', 'ua-key-0000000001', '{"a":1}'::jsonb) \gset
SELECT expect_error(format('SELECT idem.complete(%L, %s, 201, %L, %L, %L)', :'h', :a, '{}', '', repeat('o', 1048576))) AS complete_huge_order_id;
SELECT status, order_id FROM idem.keys WHERE tenant_id = 't-ua';
SELECT expect_error(format('SELECT idem.complete(%L, %s, 201, %L, %L, %L)', :'h', :a, '{}', 'ok', repeat('o', 256))) AS order_id_of_256_bytes;
SELECT status, length(order_id) FROM idem.keys WHERE tenant_id = 't-ua';
