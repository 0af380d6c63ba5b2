-- reconcile: a processor export (charges and refunds, each with the processor key we sent) against
-- the trail. A clean history reports nothing; then each kind of discrepancy is planted once and
-- found once: orphan_charge (released after charging; a key none of ours sent), orphan_refund
-- (made on the processor's dashboard), missing_charge/refund (recorded, unknown to the processor),
-- amount_mismatch, refund_exceeds_charge, duplicate_charge (one checkout under two keys).
\set SHOW_CONTEXT never
CREATE TABLE rec_export (id text PRIMARY KEY, object text NOT NULL, idempotency_key text, amount_cents bigint NOT NULL,
                         currency text NOT NULL, status text NOT NULL, created timestamptz NOT NULL, charge text);
CREATE FUNCTION rec_call(p_key text, p_resource text, p_response jsonb, p_export text[] DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE a record;
BEGIN
  -- One mutation of tenant t-rec that completes recording p_response; p_export: the rows the
  -- processor holds for it (id, object, amount, status, charge), under the handler key.
  SELECT * INTO a FROM idem.acquire('t-rec', p_key, '{"amount_cents":1999}'::jsonb, caller => 'web', resource => p_resource);
  IF p_export IS NOT NULL THEN
    INSERT INTO rec_export VALUES (p_export[1], p_export[2], idem.handler_key(a.handle, a.attempt), p_export[3]::bigint,
                                   'usd', p_export[4], now(), p_export[5]);
  END IF;
  IF p_response IS NULL THEN
    PERFORM idem.release(a.handle, a.attempt, 'processor timed out', true);
  ELSE
    PERFORM idem.complete(a.handle, a.attempt, 201, '{}'::jsonb, 'ok'::bytea, 'ord_' || p_key, p_response);
  END IF;
END $$;
CREATE VIEW rec_report AS
  SELECT kind, resource, client_key, object_id, charge_id, recorded_amount_cents AS recorded,
         processor_amount_cents AS processor, detail
    FROM idem.reconcile('rec_export', now() - interval '1 hour')
   WHERE tenant_id = 't-rec' OR tenant_id IS NULL;

-- A clean history: a charge, its partial refund, a declined charge (the processor keeps it, failed).
SELECT rec_call('rec-key-clean-0001', '/checkout/cs_clean/complete',
                '{"charge_id":"ch_rec_clean","amount_cents":1999,"currency":"usd"}', '{ch_rec_clean,charge,1999,succeeded}');
SELECT rec_call('rec-key-refund-001', '/v1/payments/p_clean/refunds',
                '{"refund_id":"re_clean","charge_id":"ch_rec_clean","amount_cents":500,"currency":"usd"}',
                '{re_clean,refund,500,succeeded,ch_rec_clean}');
SELECT rec_call('rec-key-decline-01', '/checkout/cs_declined/complete',
                '{"charge_id":"ch_declined","error":"card_declined"}', '{ch_declined,charge,700,failed}');
-- The same checkout declined, then paid under a fresh key: one charge moved money, no duplicate.
SELECT rec_call('rec-key-decline-02', '/checkout/cs_declined/complete',
                '{"charge_id":"ch_paid_later","amount_cents":700,"currency":"usd"}', '{ch_paid_later,charge,700,succeeded}');
SELECT count(*) AS clean_run_discrepancies FROM rec_report;

-- Planted: a charge whose attempt was released after calling the processor (nobody recorded it),
-- and a charge under a key none of our mutations sent.
SELECT rec_call('rec-key-orphan-001', '/checkout/cs_orphan/complete', NULL, '{ch_orphan,charge,1999,succeeded}');
INSERT INTO rec_export VALUES ('ch_stranger', 'charge', 'not-one-of-ours', 1200, 'usd', 'succeeded', now(), NULL);
-- A refund made on the processor's dashboard, of the clean charge.
INSERT INTO rec_export VALUES ('re_dashboard', 'refund', 'dashboard-key', 300, 'usd', 'succeeded', now(), 'ch_rec_clean');
-- Recorded, but the processor never made them.
SELECT rec_call('rec-key-missing-01', '/checkout/cs_missing/complete', '{"charge_id":"ch_never","amount_cents":1999,"currency":"usd"}');
SELECT rec_call('rec-key-missing-02', '/v1/payments/p_clean/refunds',
                '{"refund_id":"re_never","charge_id":"ch_rec_clean","amount_cents":100,"currency":"usd"}');
-- Recorded 900, charged 1000; then refunded 1000 on the dashboard: above what we charged.
SELECT rec_call('rec-key-amount-001', '/checkout/cs_amount/complete',
                '{"charge_id":"ch_amount","amount_cents":900,"currency":"usd"}', '{ch_amount,charge,1000,succeeded}');
INSERT INTO rec_export VALUES ('re_amount', 'refund', 'dashboard-key-2', 1000, 'usd', 'succeeded', now(), 'ch_amount');
-- One checkout under two keys (a quoted and a bare header), both charged, in one second of the
-- processor's clock (it stamps whole seconds): the trail says which came first, not the ids.
SELECT rec_call('rec-key-dup-quoted', '/checkout/cs_dup/complete',
                '{"charge_id":"ch_dup_b","amount_cents":1999,"currency":"usd"}', '{ch_dup_b,charge,1999,succeeded}');
SELECT rec_call('rec-key-dup-bare-1', '/checkout/cs_dup/complete',
                '{"charge_id":"ch_dup_a","amount_cents":1999,"currency":"usd"}', '{ch_dup_a,charge,1999,succeeded}');
UPDATE rec_export SET created = date_trunc('minute', now()) WHERE id IN ('ch_dup_a', 'ch_dup_b');
SELECT kind, resource, client_key, object_id, charge_id, recorded, processor, detail FROM rec_report ORDER BY kind, object_id;
SELECT kind, count(*) FROM rec_report GROUP BY kind ORDER BY kind;
-- Every orphan of ours names the processor key we sent (idem.handler_key), to look it up.
SELECT count(*) AS orphans_with_our_key FROM idem.reconcile('rec_export', now() - interval '1 hour') r
  JOIN rec_export e ON e.id = r.object_id AND e.idempotency_key = r.processor_key WHERE r.kind = 'orphan_charge' AND r.tenant_id = 't-rec';

-- What must not be reported. A later mutation naming a charge (a capture, a refused refund) does
-- not own it: no amount_mismatch, no duplicate. A charge awaiting the buyer's authentication and
-- one failed (in capitals) moved no money: no duplicate for cs_amount. A record an operator
-- resolved with the holder's checkpoint naming its charge accounts for that charge.
CREATE TEMP TABLE rec_before AS SELECT kind, object_id FROM rec_report;
SELECT rec_call('rec-key-capture-01', '/v1/payments/p_clean/capture', '{"charge_id":"ch_rec_clean","amount_cents":0,"currency":"usd"}');
SELECT rec_call('rec-key-refused-01', '/v1/payments/p_clean/refunds', '{"charge_id":"ch_rec_clean","error":"amount_too_large"}');
INSERT INTO rec_export VALUES ('ch_3ds', 'charge', 'k-3ds', 1000, 'usd', 'requires_action', now(), NULL),
                              ('ch_caps', 'charge', 'k-caps', 1000, 'usd', 'FAILED', now(), NULL);
SELECT rec_call('rec-key-3ds-00001', '/checkout/cs_amount/complete', '{"charge_id":"ch_3ds","error":"authentication_required"}');
SELECT rec_call('rec-key-caps-0001', '/checkout/cs_amount/complete', '{"charge_id":"ch_caps","error":"card_declined"}');
DO $$
DECLARE a record;
BEGIN
  SELECT * INTO a FROM idem.acquire('t-rec', 'rec-key-resolved-1', '{"amount_cents":1999}'::jsonb, caller => 'web',
                                    resource => '/checkout/cs_resolved/complete');
  INSERT INTO rec_export VALUES ('ch_resolved', 'charge', idem.handler_key(a.handle, a.attempt), 1999, 'usd', 'succeeded', now(), NULL);
  PERFORM idem.checkpoint(a.handle, a.attempt, 'charged', '{"charge_id":"ch_resolved"}');
  PERFORM idem.release(a.handle, a.attempt, 'crashed after charging', true);
  PERFORM idem.resolve_stuck(a.handle, a.attempt, 'the order stands: charged as ch_resolved', 201);
END $$;
SELECT kind, object_id FROM rec_report EXCEPT SELECT * FROM rec_before;
SELECT kind, object_id FROM rec_before EXCEPT SELECT kind, object_id FROM rec_report;
-- An export listed twice (a page fetched again) reports what it reports once.
CREATE VIEW rec_export_twice AS SELECT * FROM rec_export UNION ALL SELECT * FROM rec_export;
SELECT (SELECT count(*) FROM idem.reconcile('rec_export_twice', now() - interval '1 hour'))
     - (SELECT count(*) FROM idem.reconcile('rec_export', now() - interval '1 hour')) AS extra_rows_when_listed_twice;
DROP VIEW rec_export_twice;
-- A refund above a recorded charge the export lacks is still found, against what we recorded.
SELECT rec_call('rec-key-gone-0001', '/checkout/cs_gone/complete', '{"charge_id":"ch_gone","amount_cents":1999,"currency":"usd"}');
INSERT INTO rec_export VALUES ('re_gone', 'refund', 'dashboard-key-3', 2500, 'usd', 'succeeded', now(), 'ch_gone');
SELECT kind, resource, client_key, object_id, recorded, processor, detail FROM rec_report
 WHERE object_id IN ('ch_gone', 're_gone') ORDER BY kind;
-- Rows that cannot be reconciled are reported, never dropped unseen.
ALTER TABLE rec_export ALTER COLUMN status DROP NOT NULL, ALTER COLUMN object DROP NOT NULL;
INSERT INTO rec_export VALUES ('ch_nostatus', 'charge', 'k-x', 100, 'usd', NULL, now(), NULL),
                              ('ch_odd', 'charge', 'k-y', 100, 'usd', 'disputed', now(), NULL),
                              ('py_odd', 'payout', 'k-z', 100, 'usd', 'succeeded', now(), NULL),
                              ('re_nocharge', 'refund', 'k-w', 100, 'usd', 'succeeded', now(), NULL);
SELECT kind, object_id, detail FROM rec_report WHERE kind = 'unreadable_export_row' ORDER BY object_id;
DELETE FROM rec_export WHERE id IN ('ch_nostatus', 'ch_odd', 'py_odd', 're_nocharge', 're_gone');

-- Another tenant records t-rec's charge ch_rec_clean, and refunds t-rec's charge ch_amount: each is
-- reported as that tenant's row (an auditor who sees both tenants sees it).
DO $$
DECLARE a record;
BEGIN
  SELECT * INTO a FROM idem.acquire('t-rec-2', 'rec-key-other-0001', '{"amount_cents":1999}'::jsonb, caller => 'web',
                                    resource => '/checkout/cs_other/complete');
  PERFORM idem.complete(a.handle, a.attempt, 201, '{}'::jsonb, 'ok'::bytea, 'ord_other',
                        '{"charge_id":"ch_rec_clean","amount_cents":1999,"currency":"usd"}');
  SELECT * INTO a FROM idem.acquire('t-rec-2', 'rec-key-other-0002', '{"amount_cents":10}'::jsonb, caller => 'web',
                                    resource => '/v1/payments/p_other/refunds');
  PERFORM idem.complete(a.handle, a.attempt, 201, '{}'::jsonb, 'ok'::bytea, 'ord_other_2',
                        '{"refund_id":"re_other","charge_id":"ch_amount","amount_cents":10,"currency":"usd"}');
END $$;
INSERT INTO rec_export VALUES ('re_other', 'refund', 'k-other', 10, 'usd', 'succeeded', now(), 'ch_amount');
SELECT kind, tenant_id, object_id, charge_id, detail FROM idem.reconcile('rec_export', now() - interval '1 hour')
 WHERE kind = 'cross_tenant' ORDER BY object_id;
-- A refund of a refund (of a charge no one knows): above the nothing that was charged.
INSERT INTO rec_export VALUES ('re_of_re', 'refund', 'k-rr', 5000, 'usd', 'succeeded', now(), 're_clean');
SELECT kind, object_id, processor, detail FROM rec_report WHERE object_id IN ('re_clean', 're_of_re') ORDER BY kind;
DELETE FROM rec_export WHERE id IN ('re_other', 're_of_re');
-- A charge listed twice with one created time, as requires_action and as succeeded: the state
-- that moved money counts (ch_3ds is an orphan then), whichever row comes first.
CREATE VIEW rec_export_states AS
  SELECT * FROM rec_export
  UNION ALL SELECT id, object, idempotency_key, amount_cents, currency, 'succeeded', created, charge FROM rec_export WHERE id = 'ch_3ds';
SELECT kind, object_id FROM idem.reconcile('rec_export_states', now() - interval '1 hour') WHERE object_id = 'ch_3ds';
DROP VIEW rec_export_states;

-- The window: nothing in the export or the trail after tomorrow.
SELECT count(*) AS since_tomorrow FROM idem.reconcile('rec_export', now() + interval '1 day') WHERE tenant_id = 't-rec' OR tenant_id IS NULL;

-- Invoker's rights: an auditor reads the export with its own privileges, and the trail of its tenants.
CREATE ROLE rec_auditor IN ROLE idem_auditor;
SELECT idem.bind_tenant('rec_auditor', 't-rec-other');
SET SESSION AUTHORIZATION rec_auditor;
SELECT count(*) FROM idem.reconcile('rec_export');
RESET SESSION AUTHORIZATION;
GRANT SELECT ON rec_export TO rec_auditor;
SET SESSION AUTHORIZATION rec_auditor;
-- Bound to another tenant: t-rec's trail is not visible, so none of its charges is accounted for.
SELECT kind, count(*) FROM idem.reconcile('rec_export') GROUP BY kind ORDER BY kind;
RESET SESSION AUTHORIZATION;
SELECT idem.unbind_tenant('rec_auditor', 't-rec-other');
REVOKE SELECT ON rec_export FROM rec_auditor;
DROP ROLE rec_auditor;

-- Bad input: named errors.
SELECT * FROM idem.reconcile(NULL);
SELECT * FROM idem.reconcile('rec_export', NULL);
CREATE TABLE rec_bad_export (id text, object text, amount_cents text, created timestamp);
SELECT * FROM idem.reconcile('rec_bad_export');
-- Whole cents only: a numeric amount (19.99) would be rounded, a huge one would overflow.
CREATE TABLE rec_numeric_export (LIKE rec_export);
ALTER TABLE rec_numeric_export ALTER COLUMN amount_cents TYPE numeric;
SELECT * FROM idem.reconcile('rec_numeric_export');
DROP TABLE rec_numeric_export;
-- An index has the export's columns, but no rows to read.
SELECT * FROM idem.reconcile('rec_export_pkey');
SELECT * FROM idem.reconcile('no_such_export');
DROP TABLE rec_bad_export;
DROP VIEW rec_report;
DROP FUNCTION rec_call(text, text, jsonb, text[]);
DROP TABLE rec_export;
