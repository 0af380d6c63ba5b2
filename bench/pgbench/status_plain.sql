-- The peer of status_guarded.sql: the same UPDATE of a status column, without the trigger.
\set id random(1, 10000)
UPDATE bench_status_plain SET status = CASE status WHEN 'a' THEN 'b' ELSE 'a' END WHERE id = :id;
