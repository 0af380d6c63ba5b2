-- Bug regression (review of 0.2.0): the tenant, caller and resource of a scoped key were not
-- checked: a 1,000,000-byte tenant failed deep in the index (54000), a 10 MB caller was stored in
-- every record and audit row, and control characters went into logs. Now: tenant 1..256 bytes,
-- caller and resource at most 1,024, no control characters; ERR_ARGUMENT_INVALID, nothing stored.
\set SHOW_CONTEXT never
SELECT expect_error($$SELECT idem.scope_digest(repeat('t', 257), '', '', 'scope-part-key-0001')$$) AS long_tenant;
SELECT octet_length(idem.scope_digest(repeat('t', 256), '', '', 'scope-part-key-0001')) AS longest_tenant_ok;
SELECT expect_error($$SELECT idem.scope_digest('', '', '', 'scope-part-key-0001')$$) AS empty_tenant;
SELECT expect_error($$SELECT idem.scope_digest('t' || chr(1), '', '', 'scope-part-key-0001')$$) AS control_in_tenant;
SELECT expect_error($$SELECT idem.scope_digest('t', repeat('c', 1025), '', 'scope-part-key-0001')$$) AS long_caller;
SELECT expect_error($$SELECT idem.scope_digest('t', '', 'POST /x' || chr(10), 'scope-part-key-0001')$$) AS newline_in_resource;
SELECT octet_length(idem.scope_digest('tenant-ü', 'svc', 'POST /payments/{id}/refunds', 'scope-part-key-0001')) AS unicode_tenant_ok;
SELECT expect_error($$SELECT idem.acquire(repeat('t', 1000000), 'scope-part-key-0001', '{}'::jsonb)$$) AS acquire_long_tenant;
SELECT count(*) AS nothing_stored FROM idem.keys WHERE client_key = 'scope-part-key-0001';
