-- An UPDATE of a status column guarded by idem.enforce_transitions (checked against the cached
-- machine, logged in idem.transition_log); its peer is status_plain.sql.
\set id random(1, 10000)
UPDATE bench_status_guarded SET status = CASE status WHEN 'a' THEN 'b' ELSE 'a' END WHERE id = :id;
