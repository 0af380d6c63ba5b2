-- The triggers that keep the store's invariants, refuse audit edits and invalidate caches;
-- ALWAYS ones fire under session_replication_role = replica too.

CREATE TRIGGER consumer_bindings_changed AFTER INSERT OR DELETE OR UPDATE ON idem.consumer_bindings FOR EACH STATEMENT EXECUTE FUNCTION idem._consumer_bindings_changed();
ALTER TABLE idem.consumer_bindings ENABLE ALWAYS TRIGGER consumer_bindings_changed;
CREATE TRIGGER consumer_bindings_truncated AFTER TRUNCATE ON idem.consumer_bindings FOR EACH STATEMENT EXECUTE FUNCTION idem._consumer_bindings_changed();
ALTER TABLE idem.consumer_bindings ENABLE ALWAYS TRIGGER consumer_bindings_truncated;
CREATE TRIGGER keys_invariants BEFORE INSERT OR UPDATE ON idem.keys FOR EACH ROW EXECUTE FUNCTION idem._check_invariants();
ALTER TABLE idem.keys ENABLE ALWAYS TRIGGER keys_invariants;
CREATE TRIGGER machine_states_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON idem.machine_states FOR EACH STATEMENT EXECUTE FUNCTION idem._machines_changed();
CREATE TRIGGER machine_transitions_changed AFTER INSERT OR DELETE OR UPDATE OR TRUNCATE ON idem.machine_transitions FOR EACH STATEMENT EXECUTE FUNCTION idem._machines_changed();
CREATE TRIGGER machine_transitions_guard BEFORE INSERT OR UPDATE OF guard ON idem.machine_transitions FOR EACH ROW EXECUTE FUNCTION idem._check_guard();
CREATE TRIGGER mutations_append_only BEFORE DELETE OR UPDATE ON idem.mutations FOR EACH ROW EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER mutations_invariants BEFORE INSERT ON idem.mutations FOR EACH ROW EXECUTE FUNCTION idem._check_invariants();
ALTER TABLE idem.mutations ENABLE ALWAYS TRIGGER mutations_invariants;
CREATE TRIGGER mutations_no_truncate BEFORE TRUNCATE ON idem.mutations FOR EACH STATEMENT EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER tenant_bindings_changed AFTER INSERT OR DELETE OR UPDATE ON idem.tenant_bindings FOR EACH STATEMENT EXECUTE FUNCTION idem._tenant_bindings_changed();
ALTER TABLE idem.tenant_bindings ENABLE ALWAYS TRIGGER tenant_bindings_changed;
CREATE TRIGGER tenant_bindings_truncated AFTER TRUNCATE ON idem.tenant_bindings FOR EACH STATEMENT EXECUTE FUNCTION idem._tenant_bindings_changed();
ALTER TABLE idem.tenant_bindings ENABLE ALWAYS TRIGGER tenant_bindings_truncated;
CREATE TRIGGER transition_log_append_only BEFORE DELETE OR UPDATE ON idem.transition_log FOR EACH ROW EXECUTE FUNCTION idem._refuse_audit_change();
CREATE TRIGGER transition_log_no_truncate BEFORE TRUNCATE ON idem.transition_log FOR EACH STATEMENT EXECUTE FUNCTION idem._refuse_audit_change();

CREATE EVENT TRIGGER idem_machine_tables_dropped ON sql_drop EXECUTE FUNCTION idem._machine_tables_dropped();
