# PostgreSQL 15 (the official image, Debian 12) with pg_idempotency installed, and the demo's
# database created when the container first initialises its data directory
# (docker/initdb-idem-demo.sh: what `scripts/stack.sh setup` does for the local stack).
# The build context is the repository root:
#   docker build -f docker/postgres.Dockerfile -t pg_idempotency-postgres .
# Written without a Docker engine at hand: never built or run here (docker/README.md).
#
# Pinned to -bookworm: the plain postgres:15 tag now follows Debian 13 (trixie), while the
# project builds and tests on Debian 12 (libssl3, gcc 12).
ARG PG_IMAGE=postgres:15-bookworm

# ---- builder: the PGXS build of scripts/install-deps.sh's extension packages -------------------
FROM ${PG_IMAGE} AS builder
ENV DEBIAN_FRONTEND=noninteractive
# The image keeps apt.postgresql.org in its sources. Its server-dev headers may be of a newer
# 15.x than the server in the image; PostgreSQL keeps the extension ABI within a major version.
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential postgresql-server-dev-15 libssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# What the top-level Makefile builds and installs: core/ and extension/ sources, the control file
# and sql/pg_idempotency--*.sql.
COPY Makefile pg_idempotency.control ./
COPY core/ core/
COPY extension/ extension/
COPY sql/ sql/
# A checkout that has run `make` holds host-built objects (newer than their sources, so make would
# reuse them): remove them and build from source. DESTDIR keeps the install out of this image.
RUN find . \( -name '*.o' -o -name '*.so' -o -name '*.bc' -o -name .deps \) -prune -exec rm -rf {} + \
 && make -j"$(nproc)" \
 && make install DESTDIR=/out \
 && find /out -type f

# ---- the server ---------------------------------------------------------------------------------
FROM ${PG_IMAGE}
# /usr/lib/postgresql/15/lib/pg_idempotency.so and /usr/share/postgresql/15/extension/pg_idempotency*
COPY --from=builder /out/ /
# The module links libcrypto (libssl3) and libstdc++; postgresql-15's own dependencies bring both.
# Install them only if that ever stops being so, and fail the build if a library is still missing.
RUN set -eu; so=/usr/lib/postgresql/15/lib/pg_idempotency.so; \
    if ldd "$so" | grep -q 'not found'; then \
      apt-get update; \
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libssl3 libstdc++6; \
      rm -rf /var/lib/apt/lists/*; \
    fi; \
    if ldd "$so" | grep 'not found'; then echo "pg_idempotency.so: libraries missing" >&2; exit 1; fi
# No shared_preload_libraries needed (the module uses no shared memory; extension/module.cpp).
# fsync and synchronous_commit must stay on, as they are by default: idem.acquire/complete refuse
# a store that can lose a commit (ERR_NON_ATOMIC_IDEMPOTENCY_STORE). docker/compose.yaml says so
# explicitly on the command line.
COPY examples/checkout-service/schema.sql /usr/local/share/idem-demo/checkout-service-schema.sql
COPY docker/initdb-idem-demo.sh /docker-entrypoint-initdb.d/10-idem-demo.sh
# Readable by postgres (the entrypoint runs the init files as that user), and executable so the
# entrypoint runs the script instead of sourcing it.
RUN chmod 0644 /usr/local/share/idem-demo/checkout-service-schema.sql \
 && chmod 0755 /docker-entrypoint-initdb.d/10-idem-demo.sh
