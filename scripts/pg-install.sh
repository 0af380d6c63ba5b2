# shellcheck shell=bash
# The private copy of the PostgreSQL 15 server that every throwaway cluster of ours runs from
# (build/pg-install/), and this checkout's extension installed into it, so that two checkouts on
# one machine never replace each other's library, as PostgreSQL's own `make check` runs from a
# temporary install. `make install` alone still installs into the system's directories.
# Sourced by lib.sh and cluster.sh (so by every script that starts a server); needs ROOT.
#
# PostgreSQL finds its share/ and lib/ relative to its own binary (the common prefix of the
# configured bindir and sharedir/pkglibdir), so the copy mirrors the system layout under a prefix:
# Debian's /usr/lib/postgresql/15/{bin,lib} and /usr/share/postgresql/15 become
# build/pg-install/usr/lib/postgresql/15/{bin,lib} and build/pg-install/usr/share/postgresql/15,
# and `make install DESTDIR=build/pg-install` puts the extension there.
# IDEM_PG_INSTALL names another prefix.

PG_INSTALL=${IDEM_PG_INSTALL:-$ROOT/build/pg-install}
PG_INSTALL_EXTENSION=pg_idempotency
SYSTEM_PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
[ -x "$SYSTEM_PG_CONFIG" ] || SYSTEM_PG_CONFIG=$(command -v pg_config || echo /usr/lib/postgresql/15/bin/pg_config)
# The system server's directories; Debian's paths when pg_config is not installed yet.
{ read -r SYSTEM_PG_BINDIR && read -r SYSTEM_PG_PKGLIBDIR && read -r SYSTEM_PG_SHAREDIR; } \
  < <("$SYSTEM_PG_CONFIG" --bindir --pkglibdir --sharedir 2>/dev/null ||
    printf '%s\n' /usr/lib/postgresql/15/bin /usr/lib/postgresql/15/lib /usr/share/postgresql/15)
# The copy's directories, the link resolved: a path the server runs from must not pass through a
# directory its user cannot enter (see _pg_install_place).
# shellcheck disable=SC2034  # PG_PKGLIBDIR and PG_SHAREDIR: for the scripts that source this
_pg_install_paths() {
  local dest
  dest=$(readlink -f "$PG_INSTALL" 2>/dev/null || echo "$PG_INSTALL")
  PG_BINDIR=$dest$SYSTEM_PG_BINDIR
  PG_PKGLIBDIR=$dest$SYSTEM_PG_PKGLIBDIR
  PG_SHAREDIR=$dest$SYSTEM_PG_SHAREDIR
}
_pg_install_paths

# The server programs to run: the private copy's, or the system's while there is no copy (enough
# to stop or ask about a cluster; starting one goes through pg_install_server first).
pg_server_bindir() {
  if [ -x "$PG_BINDIR/pg_ctl" ]; then echo "$PG_BINDIR"; else echo "$SYSTEM_PG_BINDIR"; fi
}

# What the copy was made from: the system server binary's checksum and version. A changed server
# (a package upgrade) makes the copy stale.
_pg_install_source() {
  local sum
  sum=$(sha256sum "$SYSTEM_PG_BINDIR/postgres" 2>/dev/null) || {
    echo "pg-install: no PostgreSQL server at $SYSTEM_PG_BINDIR/postgres (make deps installs it)" >&2
    return 1
  }
  echo "postgres ${sum%% *} $("$SYSTEM_PG_BINDIR/postgres" --version)"
}

# The copy must be reachable by the server's user: as root the server runs as postgres, which
# cannot enter a checkout under a 0700 home. Then build/pg-install is a link to /var/tmp (pg.sh
# does the same for .pg).
_pg_install_place() {
  [ -e "$PG_INSTALL" ] && return 0
  local parent=${PG_INSTALL%/*}
  (umask 022 && mkdir -p "$parent") || return 1
  if [ -L "$PG_INSTALL" ]; then  # a link whose target is gone (a reboot cleaned /var/tmp)
    (umask 022 && mkdir -p "$(readlink "$PG_INSTALL")")
    return
  fi
  if [ "$(id -u)" -eq 0 ] && ! (cd / && runuser -u postgres -- test -x "$parent"); then
    local elsewhere
    elsewhere="/var/tmp/pg_idempotency-install-$(printf '%s' "$ROOT" | cksum | cut -d' ' -f1)"
    (umask 022 && mkdir -p "$elsewhere") || return 1
    ln -s "$elsewhere" "$PG_INSTALL"
    echo "pg-install: postgres cannot enter $parent; the server copy lives in $elsewhere (linked from $PG_INSTALL)" >&2
  else
    (umask 022 && mkdir -p "$PG_INSTALL")
  fi
}

# pg_install_server: copy the system server's bin, lib and share into the private tree, unless
# the copy there was made from the same server. Leaves out any pg_idempotency a system-wide
# install (another checkout's) put there. Serialised by a lock beside the tree. A server still
# running from a stale copy keeps the files it has open; the next start runs the new copy.
pg_install_server() {
  local want
  want=$(_pg_install_source) || return 1
  [ "$(cat "$PG_INSTALL/.source" 2>/dev/null)" = "$want" ] && return 0
  case $SYSTEM_PG_BINDIR in
    */postgresql/*) ;;
    *) echo "pg-install: expects PostgreSQL's own directories (Debian's /usr/lib/postgresql/15/bin); pg_config says bindir $SYSTEM_PG_BINDIR" >&2
       return 1 ;;
  esac
  _pg_install_place || return 1
  _pg_install_paths
  (
    flock 9
    [ "$(cat "$PG_INSTALL/.source" 2>/dev/null)" = "$want" ] && exit 0  # another run just made it
    dest=$(readlink -f "$PG_INSTALL")
    echo "pg-install: copying the PostgreSQL server ($SYSTEM_PG_BINDIR, $SYSTEM_PG_PKGLIBDIR, $SYSTEM_PG_SHAREDIR) to $PG_INSTALL"
    rm -f "$dest/.source"
    find "$dest" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
    for dir in "$SYSTEM_PG_BINDIR" "$SYSTEM_PG_PKGLIBDIR" "$SYSTEM_PG_SHAREDIR"; do
      (umask 022 && mkdir -p "$dest${dir%/*}") && cp -a "$dir" "$dest${dir%/*}/" || exit 1
    done
    rm -rf "$dest$SYSTEM_PG_PKGLIBDIR/$PG_INSTALL_EXTENSION".* "$dest$SYSTEM_PG_PKGLIBDIR/bitcode/$PG_INSTALL_EXTENSION"* \
      "$dest$SYSTEM_PG_SHAREDIR/extension/$PG_INSTALL_EXTENSION"[.-]*
    # The copy must find its own share/ and lib/: pg_config computes them as the server does.
    local_share=$("$dest$SYSTEM_PG_BINDIR/pg_config" --sharedir)
    if [ "$local_share" != "$dest$SYSTEM_PG_SHAREDIR" ]; then
      echo "pg-install: the copied server does not use its own directories (its sharedir is $local_share, not $dest$SYSTEM_PG_SHAREDIR)" >&2
      exit 1
    fi
    echo "$want" >"$dest/.source"
  ) 9>"$PG_INSTALL.lock"
}

# pg_install_extension: this checkout's built extension into the private tree (make must have
# built it). `make install` into a staging directory, then each file renamed into place: a server
# already running from the tree (a `make serve` beside a `make demo`) never meets a missing or
# half-written library or script. Our files that the install no longer has are removed, so a
# script dropped from the checkout is not offered any more.
pg_install_extension() {
  local dest stage file rel
  dest=$(readlink -f "$PG_INSTALL") || return 1
  stage=$dest/.staging.$$
  rm -rf "$stage"
  make -C "$ROOT" -s install DESTDIR="$stage" >/dev/null || return 1
  for file in "$dest$SYSTEM_PG_PKGLIBDIR/$PG_INSTALL_EXTENSION".* "$dest$SYSTEM_PG_SHAREDIR/extension/$PG_INSTALL_EXTENSION"[.-]*; do
    if [ -e "$file" ] && [ ! -e "$stage${file#"$dest"}" ]; then rm -f "$file"; fi
  done
  while IFS= read -r -d '' file; do
    rel=${file#"$stage"}
    mkdir -p "$dest${rel%/*}" && mv -f "$file" "$dest$rel" || return 1
  done < <(find "$stage" -type f -print0)
  rm -rf "$stage"
}
