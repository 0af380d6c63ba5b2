#!/usr/bin/env bash
# The demo database, created once by docker/postgres-entrypoint.sh (as by the official postgres
# image's entrypoint): it runs the files of /docker-entrypoint-initdb.d/ (this one is installed
# there by docker/postgres.Dockerfile) only when it initialises an empty data directory, with the
# server listening on its Unix socket alone.
# It does what `scripts/stack.sh setup` does for the local stack:
#   the database idem_demo (UTF8: pg_idempotency refuses any other encoding);
#   examples/checkout-service/schema.sql in it: CREATE EXTENSION pg_idempotency, the roles
#     checkout_service and order_consumer, the service's tables, topics and consumer;
#   the role demo_processor with CREATE on the database (the payment processor creates its own
#     schema, processor, at every start).
# Executable, so the entrypoint runs it as a program instead of sourcing it into its own shell.
set -Eeuo pipefail

db=${IDEM_DEMO_DB:-idem_demo}
schema=${IDEM_DEMO_SCHEMA:-/usr/local/share/idem-demo/checkout-service-schema.sql}

# As the entrypoint's own docker_process_sql: the superuser, over the socket, stop at any error.
run_psql() {
  PGHOST='' PGHOSTADDR='' psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --no-password \
    --no-psqlrc -qAt "$@"
}

echo "idem-demo: creating database $db, pg_idempotency and the demo's roles"
run_psql --dbname postgres --set db="$db" <<'SQL'
SELECT format('CREATE DATABASE %I WITH ENCODING %L TEMPLATE template0', :'db', 'UTF8')
 WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = :'db')
\gexec
SQL
run_psql --dbname "$db" -c 'CREATE EXTENSION IF NOT EXISTS pg_idempotency'
run_psql --dbname "$db" -f "$schema"
run_psql --dbname "$db" --set db="$db" <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'demo_processor') THEN CREATE ROLE demo_processor LOGIN; END IF;
END $$;
GRANT CREATE ON DATABASE :"db" TO demo_processor;
SQL
run_psql --dbname "$db" -c "SELECT 'idem-demo: pg_idempotency ' || extversion || ' in database ' || current_database()
                              FROM pg_extension WHERE extname = 'pg_idempotency'"
