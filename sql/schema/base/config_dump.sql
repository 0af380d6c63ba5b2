-- What pg_dump keeps of the extension's tables and sequences (all their rows): the store and the
-- outbox are data, not schema.

SELECT pg_catalog.pg_extension_config_dump('idem.keys', '');
SELECT pg_catalog.pg_extension_config_dump('idem.fencing_token_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.retired_keys', '');
SELECT pg_catalog.pg_extension_config_dump('idem.operator_actions', '');
SELECT pg_catalog.pg_extension_config_dump('idem.machine_states', '');
SELECT pg_catalog.pg_extension_config_dump('idem.machine_transitions', '');
SELECT pg_catalog.pg_extension_config_dump('idem.transition_log', '');
SELECT pg_catalog.pg_extension_config_dump('idem.mutations', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_topics', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_consumers', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_subscriptions', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_txn_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_events', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_commits', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_groups', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_cursors', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_state_seq', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_cursor_states', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_dead_letters', '');
SELECT pg_catalog.pg_extension_config_dump('idem.outbox_consumed', '');
SELECT pg_catalog.pg_extension_config_dump('idem.machine_tables', '');
