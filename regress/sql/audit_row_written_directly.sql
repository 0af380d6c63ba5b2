-- The audit row written without the planner (0.4.0, issue 24 item 3): on one node idem._audit and
-- the hot path insert it as logical replication's apply worker does (ExecSimpleRelationInsert).
-- It must be the row the INSERT wrote: its identity drawn from the sequence, the invariants
-- trigger fired (under session_replication_role = replica too), a user's AFTER trigger fired,
-- and a column it does not fill sends the row through the INSERT, whose default then applies.
\set SHOW_CONTEXT never
CREATE FUNCTION audit_row(outcome text) RETURNS void LANGUAGE sql AS $$
  SELECT idem._audit('t-direct', idem.scope_digest('t-direct', 'svc', 'POST /x', 'direct-key-000001'), 'direct-key-000001',
                     'svc', 'POST /x', 1, 7, 'create', outcome, true, 'ord-d', '{"ok":true}', 'paid', NULL, NULL, 0,
                     '2026-12-06 10:00:00+00', '2026-12-06 10:00:01+00')
$$;
SELECT last_value AS id_before FROM idem.mutations_mutation_id_seq \gset
SELECT audit_row('completed');
SELECT mutation_id = :id_before + 1 AS identity_drawn, tenant_id, client_key, caller_id, resource, generation, attempt,
       mutation_type, outcome, handler_called, order_id, handler_response, local_status, error_message, recovery_point,
       retry_count, attempted_at, completed_at
  FROM idem.mutations WHERE tenant_id = 't-direct';
-- The invariants trigger refuses a bad row, with replication's role too (the trigger is ALWAYS).
SELECT expect_error($$SELECT audit_row('charged')$$) AS bad_outcome;
SET session_replication_role = replica;
SELECT expect_error($$SELECT audit_row('charged')$$) AS bad_outcome_as_replica;
RESET session_replication_role;
-- A user's AFTER INSERT trigger on the trail (a forwarder to a log pipeline) sees every row.
CREATE TABLE forwarded (outcome text, mutation_id bigint);
CREATE FUNCTION forward_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.forwarded VALUES (NEW.outcome, NEW.mutation_id);
  RETURN NULL;
END $$;
CREATE TRIGGER forward_audit AFTER INSERT ON idem.mutations FOR EACH ROW EXECUTE FUNCTION forward_audit();
BEGIN;
SELECT handle AS h, attempt AS a FROM idem.acquire('t-direct', 'direct-key-000002', '{"n":2}'::jsonb) \gset
SELECT idem.complete(:'h', :a, 201, '{}', 'two');
COMMIT;
SELECT f.outcome, f.mutation_id = m.mutation_id AS same_row
  FROM forwarded f JOIN idem.mutations m USING (mutation_id) WHERE m.client_key = 'direct-key-000002';
DROP TRIGGER forward_audit ON idem.mutations;
DROP FUNCTION forward_audit();
DROP TABLE forwarded;
-- A column the row does not fill (a later release's, with a default): the INSERT writes it.
BEGIN;
ALTER TABLE idem.mutations ADD COLUMN written_by text DEFAULT 'the insert';
SELECT audit_row('released');
SELECT outcome, written_by FROM idem.mutations WHERE tenant_id = 't-direct' AND outcome = 'released';
ROLLBACK;
-- A statement-level trigger or a rule of the user's on the trail (what only a statement runs):
-- the INSERT writes the row, so they run.
CREATE TABLE audit_statements (n int);
CREATE FUNCTION count_audit_statement() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO public.audit_statements VALUES (1);
  RETURN NULL;
END $$;
BEGIN;
CREATE TRIGGER count_audit_statement AFTER INSERT ON idem.mutations FOR EACH STATEMENT EXECUTE FUNCTION count_audit_statement();
SELECT audit_row('released');
SELECT count(*) AS statement_trigger_ran FROM audit_statements;
ROLLBACK;
BEGIN;
CREATE RULE copy_audit AS ON INSERT TO idem.mutations DO ALSO INSERT INTO public.audit_statements VALUES (2);
SELECT audit_row('released');
SELECT count(*) AS rule_ran FROM audit_statements WHERE n = 2;
ROLLBACK;
DROP FUNCTION count_audit_statement();
DROP TABLE audit_statements;
-- A read-only transaction is refused the row by name, as the INSERT refused it.
BEGIN READ ONLY;
SELECT expect_error($$SELECT audit_row('released')$$) AS read_only;
ROLLBACK;
SELECT outcome, count(*) FROM idem.mutations WHERE tenant_id = 't-direct' GROUP BY outcome ORDER BY outcome;
DROP FUNCTION audit_row(text);
