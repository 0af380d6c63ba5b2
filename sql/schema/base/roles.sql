-- The roles our grants name. They are cluster-wide, so another database's install may have made
-- them already; they log in only through roles an operator grants them to.
DO $$
DECLARE
  r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['idem_service', 'idem_auditor', 'idem_operator', 'idem_consumer'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = r) THEN
      EXECUTE format('CREATE ROLE %I NOLOGIN', r);
    END IF;
  END LOOP;
END $$;

GRANT USAGE ON SCHEMA idem TO idem_service, idem_auditor, idem_operator, idem_consumer;
