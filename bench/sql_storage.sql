-- Storage and purge (issue 11): bytes per resolved record and per audit row (heap + each index),
-- then the purge of those records once expired, beside its peers in the same run: a batched
-- DELETE of the same rows from a copy (what a hand-written table does) and dropping a partition
-- that holds them (what partitioning by expiry day would do).
-- psql -v keys=100000 -f bench/sql_storage.sql (in a database with the extension)
\set ON_ERROR_STOP on
SET client_min_messages = warning;
TRUNCATE idem.keys, idem.retired_keys;
DROP TABLE IF EXISTS storage_marks, storage_peer_keys, storage_peer_part;
CREATE TABLE storage_marks (what text, n bigint, at timestamptz);
-- The audit trail is append-only (no TRUNCATE): its figures are what this run added.
CREATE TEMP TABLE audit_before AS
  SELECT pg_total_relation_size('idem.mutations') AS bytes, (SELECT count(*) FROM idem.mutations) AS n_rows;

CREATE OR REPLACE PROCEDURE storage_fill(n int) LANGUAGE plpgsql AS $$
DECLARE r idem.acquire_result;
BEGIN
  FOR i IN 1..n LOOP
    r := idem.acquire('storage', format('storage-key-%010s', i),
                      jsonb_build_object('customer', 'cus_' || (i % 977), 'amount', i, 'currency', 'EUR'));
    PERFORM idem.complete(r.handle, r.attempt, 201, '{"content-type":"application/json"}',
                          convert_to(format('{"order_id":"ord-%s","status":"created"}', i), 'UTF8'), 'ord-' || i);
    IF i % 1000 = 0 THEN COMMIT; END IF;
  END LOOP;
END $$;
CALL storage_fill(:keys);
VACUUM ANALYZE idem.keys;
VACUUM ANALYZE idem.mutations;

\echo bytes per resolved record and per audit row (after VACUUM):
SELECT c.relname AS relation, pg_relation_size(c.oid) AS bytes,
       round(pg_relation_size(c.oid)::numeric / greatest(1, (SELECT count(*) FROM idem.keys)), 1) AS bytes_per_record
  FROM pg_class c WHERE c.oid IN (SELECT 'idem.keys'::regclass UNION ALL SELECT indexrelid FROM pg_index WHERE indrelid = 'idem.keys'::regclass
                                  UNION ALL SELECT reltoastrelid FROM pg_class WHERE oid = 'idem.keys'::regclass AND reltoastrelid <> 0)
 ORDER BY c.relname;
SELECT 'idem.keys, all' AS relation, pg_total_relation_size('idem.keys') AS bytes,
       round(pg_total_relation_size('idem.keys')::numeric / greatest(1, (SELECT count(*) FROM idem.keys)), 1) AS bytes_per_record,
       round((SELECT avg(pg_column_size(k.*)) FROM idem.keys k), 1) AS avg_tuple_bytes
UNION ALL
SELECT 'idem.mutations, all (this run)', pg_total_relation_size('idem.mutations') - b.bytes,
       round((pg_total_relation_size('idem.mutations') - b.bytes)::numeric / greatest(1, (SELECT count(*) FROM idem.mutations) - b.n_rows), 1),
       round((SELECT avg(pg_column_size(m.*)) FROM idem.mutations m WHERE m.tenant_id = 'storage'), 1)
  FROM audit_before b;

-- Expire them all, and copy them for the peers first (same rows, same indexes as idem.keys).
CREATE TABLE storage_peer_keys (LIKE idem.keys INCLUDING INDEXES);
CREATE INDEX ON storage_peer_keys (expires_at);  -- what a hand-written table's purge reads
INSERT INTO storage_peer_keys SELECT * FROM idem.keys;
CREATE TABLE storage_peer_part (LIKE idem.keys INCLUDING INDEXES);
INSERT INTO storage_peer_part SELECT * FROM idem.keys;
-- purge_after (attempted_at + ttl) must have passed too: age the attempt as well.
UPDATE idem.keys SET attempted_at = attempted_at - interval '2 days', expires_at = clock_timestamp() - interval '1 second';
UPDATE storage_peer_keys SET expires_at = clock_timestamp() - interval '1 second';
VACUUM ANALYZE idem.keys;
VACUUM ANALYZE storage_peer_keys;

CREATE OR REPLACE PROCEDURE storage_purge() LANGUAGE plpgsql AS $$
DECLARE v_total bigint := 0; v_n int;
BEGIN
  INSERT INTO storage_marks VALUES ('purge_expired', 0, clock_timestamp());
  LOOP
    v_n := idem.purge_expired(500);
    v_total := v_total + v_n;
    COMMIT;
    EXIT WHEN v_n = 0;
  END LOOP;
  INSERT INTO storage_marks VALUES ('purge_expired', v_total, clock_timestamp());
  COMMIT;
  INSERT INTO storage_marks VALUES ('batched DELETE (peer)', 0, clock_timestamp());
  v_total := 0;
  LOOP
    DELETE FROM storage_peer_keys p WHERE p.ctid IN (
      SELECT o.ctid FROM storage_peer_keys o WHERE o.expires_at < clock_timestamp() ORDER BY o.expires_at LIMIT 500);
    GET DIAGNOSTICS v_n = ROW_COUNT;
    v_total := v_total + v_n;
    COMMIT;
    EXIT WHEN v_n = 0;
  END LOOP;
  INSERT INTO storage_marks VALUES ('batched DELETE (peer)', v_total, clock_timestamp());
  COMMIT;
  SELECT count(*) INTO v_total FROM storage_peer_part;
  INSERT INTO storage_marks VALUES ('DROP of a partition (peer)', 0, clock_timestamp());
  DROP TABLE storage_peer_part;
  INSERT INTO storage_marks VALUES ('DROP of a partition (peer)', v_total, clock_timestamp());
END $$;
SET enable_seqscan = off;
CALL storage_purge();
RESET enable_seqscan;

\echo purge of the expired records (records per second):
SELECT what, max(n) AS records, round(extract(epoch FROM max(at) - min(at))::numeric, 3) AS seconds,
       round(max(n) / nullif(extract(epoch FROM max(at) - min(at)), 0)) AS records_per_s
  FROM storage_marks GROUP BY what ORDER BY min(at);
SELECT count(*) AS records_left, (SELECT count(*) FROM idem.retired_keys) AS generations_remembered FROM idem.keys;
DROP PROCEDURE storage_fill(int);
DROP PROCEDURE storage_purge();
DROP TABLE storage_marks, storage_peer_keys;
TRUNCATE idem.keys, idem.retired_keys;
