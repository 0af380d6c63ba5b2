-- Bug (review of 0.3.5): the upgrade to 0.3.5 creates idem.machine_tables' owner policy
-- "TO postgres", a role name written into the script, where every other table's owner_all
-- names the extension's owner (@extowner@, 0.3.1). On a cluster without a role named postgres
-- (initdb -U admin) CREATE EXTENSION and ALTER EXTENSION UPDATE fail with 'role "postgres"
-- does not exist'; elsewhere the policy names a role that may not own anything of ours.
-- Expected: installed by another superuser, every owner_all policy names that owner.
\set SHOW_CONTEXT never
SELECT current_database() AS regress_db \gset
SET client_min_messages = warning;
DROP DATABASE IF EXISTS idem_other_owner;
DROP ROLE IF EXISTS regress_other_super;
RESET client_min_messages;
CREATE ROLE regress_other_super SUPERUSER LOGIN;
CREATE DATABASE idem_other_owner OWNER regress_other_super;
\c idem_other_owner regress_other_super
CREATE EXTENSION pg_idempotency;
SELECT extowner::regrole AS extension_owner FROM pg_extension WHERE extname = 'pg_idempotency';
-- Policies for the owner that name another role.
SELECT p.polrelid::regclass AS tbl, p.polroles::regrole[] AS roles
  FROM pg_policy p
 WHERE p.polname = 'owner_all'
   AND p.polroles <> ARRAY[(SELECT e.extowner FROM pg_extension e WHERE e.extname = 'pg_idempotency')]
 ORDER BY 1::text;
\c :regress_db postgres
DROP DATABASE idem_other_owner;
DROP ROLE regress_other_super;
