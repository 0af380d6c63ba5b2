# shellcheck shell=bash
# Citus, for the multi-node tests only: built once from the source snapshot in ../shared/vendor/
# (never vendored into the project, never linked: a user installs Citus from its own packages),
# cached under build/citus/<sha256 of the tarball>/, and copied into the private server copy
# (build/pg-install/, scripts/pg-install.sh) that our clusters run from. Sourced by citus.sh;
# needs ROOT and pg-install.sh.
#
# The build mirrors shared/vendor/build-citus.sh, with one difference: it installs into a
# staging root (DESTDIR) rather than the system's PostgreSQL, so the cache outlives a copy that
# pg-install.sh remakes after a server upgrade, and the system's directories stay untouched.

CITUS_VENDOR=${IDEM_CITUS_VENDOR:-$ROOT/../shared/vendor}
CITUS_TARBALL=$CITUS_VENDOR/citus-13.2.2.tar.gz

citus_cache_dir() {
  local sum
  sum=$(sha256sum "$CITUS_TARBALL" 2>/dev/null) || {
    echo "citus: no Citus source at $CITUS_TARBALL (IDEM_CITUS_VENDOR names another directory)" >&2
    return 1
  }
  echo "$ROOT/build/citus/${sum%% *}"
}

# citus_build: the cached build, made when missing (about 2.5 min on 2 cores; logs beside it).
citus_build() {
  local cache work
  cache=$(citus_cache_dir) || return 1
  [ -f "$cache/.done" ] && return 0
  "$ROOT/scripts/install-deps.sh" citus || return 1
  echo "citus: building Citus 13.2.2 from $CITUS_TARBALL into $cache (once; about 2.5 min)"
  rm -rf "$cache" && mkdir -p "$cache" || return 1
  work=$cache/src
  mkdir -p "$work" && tar -xzf "$CITUS_TARBALL" -C "$work" || return 1
  (
    cd "$work/citus-13.2.2" || exit 1
    # PostgreSQL 15.10 and later export have_createdb_privilege(), which Citus 13.2.2's PG15
    # compatibility header also defines: the header's copy is renamed (as build-citus.sh does).
    sed -i 's/^have_createdb_privilege(void)$/citus_pg15_have_createdb_privilege(void)/' src/include/pg_version_compat.h
    ./configure --without-libcurl PG_CONFIG="$SYSTEM_PG_CONFIG" >"$cache/configure.log" 2>&1 ||
      { tail -20 "$cache/configure.log" >&2; exit 1; }
    make -j"$(nproc)" >"$cache/make.log" 2>&1 || { tail -40 "$cache/make.log" >&2; exit 1; }
    make install DESTDIR="$cache/root" >"$cache/install.log" 2>&1 || { tail -20 "$cache/install.log" >&2; exit 1; }
  ) || return 1
  rm -rf "$work"
  touch "$cache/.done"
}

# citus_install: the cached build's files into the private server copy (made first when needed).
citus_install() {
  local cache dest
  citus_build || return 1
  pg_install_server || return 1
  cache=$(citus_cache_dir) || return 1
  dest=$(readlink -f "$PG_INSTALL") || return 1
  [ -f "$dest$SYSTEM_PG_PKGLIBDIR/citus.so" ] && cmp -s "$cache/root$SYSTEM_PG_PKGLIBDIR/citus.so" "$dest$SYSTEM_PG_PKGLIBDIR/citus.so" && return 0
  cp -a "$cache/root/." "$dest/"
}
