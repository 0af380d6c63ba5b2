# Debian 12's PostgreSQL 15 (the server `make test` runs against) with pg_idempotency built from
# this checkout's sources, and the demo's database created when the container first initialises
# its data directory (docker/initdb-idem-demo.sh: what `scripts/stack.sh setup` does locally).
# The build context is the repository root:
#   docker build -f docker/postgres.Dockerfile -t pg_idempotency-postgres .
# DEBIAN_IMAGE: the official debian:12 by default; scripts/docker-check.sh builds from a local
# image it makes from Debian's packages instead (no registry reachable there).
ARG DEBIAN_IMAGE=debian:12

# ---- builder: the PGXS build of the extension --------------------------------------------------
FROM ${DEBIAN_IMAGE} AS builder
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential postgresql-server-dev-15 libssl-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# What the top-level Makefile builds and installs: core/ and extension/ sources, the control file,
# the released scripts in sql/ and the ones expanded from sql/'s include lists (VERSION names the
# full install's version, scripts/sql-expand.sh expands).
COPY Makefile pg_idempotency.control VERSION ./
COPY scripts/sql-expand.sh scripts/
COPY core/ core/
COPY extension/ extension/
COPY sql/ sql/
# JOBS: parallel compile jobs (all cores when empty). Host-built objects of a checkout that has
# run `make` would be newer than their sources and reused: remove them. DESTDIR keeps the
# install out of this stage's server directories.
ARG JOBS=
RUN find . \( -name '*.o' -o -name '*.so' -o -name '*.bc' -o -name .deps \) -prune -exec rm -rf {} + \
 && make -j"${JOBS:-$(nproc)}" \
 && make install DESTDIR=/out \
 && find /out -type f

# ---- the server ---------------------------------------------------------------------------------
FROM ${DEBIAN_IMAGE}
ENV DEBIAN_FRONTEND=noninteractive
# postgresql-common first, told not to create Debian's default cluster: the entrypoint creates
# the cluster in $PGDATA at first start.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-common \
 && sed -ri 's/^#?\s*create_main_cluster\s*=.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf \
 && apt-get install -y --no-install-recommends postgresql-15 \
 && rm -rf /var/lib/apt/lists/*
# /usr/lib/postgresql/15/lib/pg_idempotency.so and /usr/share/postgresql/15/extension/pg_idempotency*
COPY --from=builder /out/ /
# The module links libcrypto (libssl3) and libstdc++; postgresql-15's dependencies bring both.
RUN if ldd /usr/lib/postgresql/15/lib/pg_idempotency.so | grep 'not found'; then \
      echo "pg_idempotency.so: libraries missing" >&2; exit 1; \
    fi
COPY examples/checkout-service/schema.sql /usr/local/share/idem-demo/checkout-service-schema.sql
COPY docker/initdb-idem-demo.sh /docker-entrypoint-initdb.d/10-idem-demo.sh
COPY docker/postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
RUN chmod 0644 /usr/local/share/idem-demo/checkout-service-schema.sql \
 && chmod 0755 /docker-entrypoint-initdb.d/10-idem-demo.sh /usr/local/bin/postgres-entrypoint \
 && install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data \
 && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
# No shared_preload_libraries needed (the module uses no shared memory; extension/module.cpp).
# fsync and synchronous_commit must stay on, as they are by default: idem.acquire/complete refuse
# a store that can lose a commit (ERR_NON_ATOMIC_IDEMPOTENCY_STORE).
EXPOSE 5432
# SIGINT: PostgreSQL's fast shutdown (SIGTERM would wait for every client to disconnect).
STOPSIGNAL SIGINT
ENTRYPOINT ["postgres-entrypoint"]
CMD ["postgres"]
