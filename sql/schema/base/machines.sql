-- The built-in state machines (order, payment).

INSERT INTO idem.machine_states (machine, state, description) VALUES ('order', 'created', 'just placed at the merchant');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('order', 'confirmed', 'the merchant confirmed receipt');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('order', 'shipped', 'fulfillment initiated (terminal)');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('order', 'cancelled', 'not proceeding, no refund (terminal)');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('order', 'refunded', 'money returned to the buyer (terminal)');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('payment', 'authorized', 'funds held, not captured');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('payment', 'captured', 'funds taken');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('payment', 'voided', 'authorization released before capture (terminal)');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('payment', 'failed', 'the processor refused (terminal)');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('payment', 'partially_refunded', 'part of the capture returned');
INSERT INTO idem.machine_states (machine, state, description) VALUES ('payment', 'refunded', 'the whole capture returned (terminal)');
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('order', 'created', 'confirmed', 'idem.guard_stock_available(jsonb)', 'stock available');
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('order', 'created', 'cancelled', 'idem.guard_before_capture(jsonb)', 'before payment capture');
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('order', 'created', 'refunded', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('order', 'confirmed', 'shipped', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('order', 'confirmed', 'refunded', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('payment', 'authorized', 'captured', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('payment', 'authorized', 'voided', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('payment', 'authorized', 'failed', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('payment', 'captured', 'refunded', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('payment', 'captured', 'partially_refunded', NULL, NULL);
INSERT INTO idem.machine_transitions (machine, from_state, to_state, guard, guard_name) VALUES ('payment', 'partially_refunded', 'refunded', NULL, NULL);
