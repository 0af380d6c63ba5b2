# shellcheck shell=bash
# The throwaway clusters' common set-up (sourced by pg.sh, crash.sh, failover.sh, fuzz-sql.sh):
# one place for how a server runs as `postgres` and for the initdb flags and settings every
# cluster of ours starts from. Durable by design: acquire/complete refuse a store without fsync
# or synchronous_commit. A caller appends its own lines after these (a later line wins).

# PostgreSQL refuses to run as root: do the server's work as `postgres` then.
as_server() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")  # cd /: the checkout may be closed to postgres
  else
    "$@"
  fi
}

# init_durable_cluster BIN DATA SOCKETS INITDB_LOG: initdb (UTF8, trust for postgres) and the
# common postgresql.conf lines, listening on 127.0.0.1 only.
init_durable_cluster() {
  local bin=$1 data=$2 sockets=$3 log=$4
  as_server "$bin/initdb" -D "$data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 >"$log"
  as_server tee -a "$data/postgresql.conf" >/dev/null <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$sockets'
fsync = on
synchronous_commit = on
max_connections = 100
shared_buffers = 256MB
shared_preload_libraries = 'pg_stat_statements'
max_prepared_transactions = 10
log_min_messages = warning
CONF
}
