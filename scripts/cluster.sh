# shellcheck shell=bash
# The throwaway clusters' common set-up (sourced by pg.sh, crash.sh, failover.sh, fuzz-sql.sh):
# one place for how a server runs as `postgres`, which server it runs (the private copy of
# pg-install.sh) and the initdb flags and settings every cluster of ours starts from. Durable by design: acquire/complete refuse a store without fsync
# or synchronous_commit. A caller appends its own lines after these (a later line wins).

# shellcheck source=scripts/pg-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/pg-install.sh"  # PG_BINDIR, pg_install_server

# PostgreSQL refuses to run as root: do the server's work as `postgres` then.
as_server() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")  # cd /: the checkout may be closed to postgres
  else
    "$@"
  fi
}

# Our servers' ports (54320 and up) lie inside Linux's range for the local ports of outgoing
# connections (32768-60999), and a connection that ended stays bound to its local port for 60 s
# (TIME_WAIT): after a suite's thousands of short connections, a server started on one of those
# ports fails with "Address already in use" (seen in make test: the crash and failover smokes).
# As root, ask the kernel to keep 54320-54399 for servers; added to what is already reserved, and
# skipped where /proc/sys is read-only (a container), where such a start can still fail.
reserve_server_ports() {
  local file=/proc/sys/net/ipv4/ip_local_reserved_ports ours=54320-54399 now
  [ -w "$file" ] || return 0
  now=$(cat "$file" 2>/dev/null) || return 0
  case ",$now," in *",$ours,"*) return 0 ;; esac
  echo "${now:+$now,}$ours" >"$file" 2>/dev/null || true
}

# init_durable_cluster BIN DATA SOCKETS INITDB_LOG: initdb (UTF8, trust for postgres) and the
# common postgresql.conf lines, listening on 127.0.0.1 only.
init_durable_cluster() {
  local bin=$1 data=$2 sockets=$3 log=$4
  reserve_server_ports
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
