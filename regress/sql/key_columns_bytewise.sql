-- Bug regression: tenant_id used the database's default collation; an operating-system
-- collation update can silently corrupt a text btree and make a lookup miss an existing row.
-- Fixed: every text column in an index of ours compares bytewise (COLLATE "C"). The check walks
-- every index of the extension, so a table added later is held to it too.
SELECT i.indexrelid::regclass AS index, a.attname, co.collname
  FROM pg_index i
  JOIN pg_class c ON c.oid = i.indrelid AND c.relnamespace = 'idem'::regnamespace
  JOIN LATERAL unnest(i.indkey, i.indcollation) AS k(attnum, coll) ON true
  JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
  JOIN pg_collation co ON co.oid = k.coll
 ORDER BY i.indexrelid::regclass::text COLLATE "C", 2;
SELECT count(*) AS text_key_columns_not_bytewise
  FROM pg_index i
  JOIN pg_class c ON c.oid = i.indrelid AND c.relnamespace = 'idem'::regnamespace
  JOIN LATERAL unnest(i.indkey, i.indcollation) AS k(attnum, coll) ON true
 WHERE k.coll <> 0 AND k.coll <> 'pg_catalog."C"'::regcollation;
