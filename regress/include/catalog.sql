-- The extension's catalog, one row per fact, as temp view idem_catalog: the upgrade test compares
-- a database updated from 0.1.0 with a fresh install's. Functions as pg_get_functiondef prints
-- them (body, settings, defaults), privileges and comments of everything, columns by position,
-- constraints, indexes, policies, triggers, views, sequences, the event trigger, what pg_dump
-- keeps, membership in the extension, and the built-in machines.
CREATE TEMP VIEW idem_catalog AS
SELECT x FROM (
  SELECT format('function %s | %s | acl %s | comment %s', p.oid::regprocedure, pg_get_functiondef(p.oid), p.proacl,
                obj_description(p.oid, 'pg_proc')) AS x
    FROM pg_proc p WHERE p.pronamespace = 'idem'::regnamespace
  UNION ALL
  SELECT format('relation %s kind %s acl %s rls %s/%s options %s comment %s', c.oid::regclass, c.relkind, c.relacl,
                c.relrowsecurity, c.relforcerowsecurity, c.reloptions, obj_description(c.oid, 'pg_class'))
    FROM pg_class c WHERE c.relnamespace = 'idem'::regnamespace AND c.relkind IN ('r', 'p', 'S', 'v', 'c')
  UNION ALL
  SELECT format('column %s #%s %s %s notnull %s collation %s default %s identity %s generated %s acl %s comment %s',
                a.attrelid::regclass, row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum), a.attname,
                format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attcollation::regcollation,
                pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.attgenerated, a.attacl, col_description(a.attrelid, a.attnum))
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
   WHERE c.relnamespace = 'idem'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'c') AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL
  SELECT format('constraint %s %s %s deferrable %s/%s', conrelid::regclass, conname, pg_get_constraintdef(oid), condeferrable, condeferred)
    FROM pg_constraint WHERE connamespace = 'idem'::regnamespace
  UNION ALL
  SELECT format('index %s', pg_get_indexdef(i.indexrelid)) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
   WHERE c.relnamespace = 'idem'::regnamespace
  UNION ALL
  SELECT format('policy %s on %s cmd %s permissive %s to %s using %s check %s', p.polname, p.polrelid::regclass, p.polcmd,
                p.polpermissive, (SELECT string_agg(CASE r WHEN 0 THEN 'public' ELSE r::regrole::text END, ',' ORDER BY 1) FROM unnest(p.polroles) r),
                pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
    FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = 'idem'::regnamespace
  UNION ALL
  SELECT format('trigger %s enabled %s', pg_get_triggerdef(t.oid), t.tgenabled)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = 'idem'::regnamespace AND NOT t.tgisinternal
  UNION ALL
  SELECT format('view %s %s', c.oid::regclass, pg_get_viewdef(c.oid)) FROM pg_class c
   WHERE c.relnamespace = 'idem'::regnamespace AND c.relkind = 'v'
  UNION ALL
  SELECT format('sequence %s %s %s %s %s %s %s %s', s.seqrelid::regclass, s.seqtypid::regtype, s.seqstart, s.seqincrement,
                s.seqmax, s.seqmin, s.seqcache, s.seqcycle) FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid
   WHERE c.relnamespace = 'idem'::regnamespace
  UNION ALL
  SELECT format('event trigger %s on %s runs %s enabled %s tags %s', evtname, evtevent, evtfoid::regprocedure, evtenabled, evttags)
    FROM pg_event_trigger WHERE evtfoid IN (SELECT oid FROM pg_proc WHERE pronamespace = 'idem'::regnamespace)
  UNION ALL
  SELECT format('schema acl %s comment %s', nspacl, obj_description(oid, 'pg_namespace')) FROM pg_namespace WHERE nspname = 'idem'
  UNION ALL
  SELECT format('dumped with the data: %s where %L', c::regclass, w)
    FROM pg_extension e, unnest(e.extconfig, e.extcondition) u(c, w) WHERE e.extname = 'pg_idempotency'
  UNION ALL
  SELECT format('member %s', pg_describe_object(classid, objid, objsubid)) FROM pg_depend
   WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
     AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'pg_idempotency')
  UNION ALL
  SELECT format('machine state %s', s) FROM idem.machine_states s
  UNION ALL
  SELECT format('machine transition %s', t) FROM idem.machine_transitions t
) catalog;
