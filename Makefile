# pg_idempotency: PGXS builds and installs the extension; the other targets drive the project.
#   make demo   install what is missing, build, start a throwaway PostgreSQL, run the demo
#   make test   the same set-up, then GoogleTest, pg_regress, isolation specs, stress, fuzz smoke
#   make bench  benchmarks (core throughput, SQL fingerprint, pgbench flows, then the outbox's)
#   make bench-outbox  the outbox benchmarks alone (scripts/bench-outbox.sh; about 16 min)
#   make fuzz   libFuzzer on the parser+canonicalizer, on the parser against its nlohmann
#               reference and on the member digests (FUZZ_SECONDS=600 by default, split between them)
#   make model  the model-based protocol test for MODEL_SECONDS (600 by default) on the throwaway
#               cluster (make test runs it for 20 s); IDEM_MODEL_SEED=... replays a run
#   make citus-test  the Citus suite on a coordinator and two workers (scripts/citus.sh; Citus
#               built once from ../shared/vendor, about 1 min); make test runs its smoke
#   make docker-check  docker/'s images built from a Debian base made with mmdebstrap, the compose
#               stack run with podman and driven through the demo's scenarios, then stopped
#               (scripts/docker-check.sh; root; not part of make test)
# The throwaway clusters run from a private copy of the server in build/pg-install/, and those
# targets install the extension there (scripts/pg-install.sh); `make install` alone installs it
# into the system's PostgreSQL.
EXTENSION = pg_idempotency
MODULE_big = pg_idempotency

CORE_SRCS := $(wildcard core/*.cpp core/*/*.cpp)
EXT_SRCS := $(wildcard extension/*.cpp extension/*/*.cpp)
OBJS = $(CORE_SRCS:.cpp=.o) $(EXT_SRCS:.cpp=.o)

# Two paths to the newest version (docs/sql-layout.md): the full install script, and 0.1.0's
# install script with every upgrade script since. Scripts up to 0.3.6 are committed as released
# (sql/pg_idempotency--*.sql); later ones and the full install are expanded from include lists
# (sql/pg_idempotency.sql.in, sql/upgrades/*.sql.in) of sql/udfs/ and sql/schema/ into build/sql/.
# Released scripts, committed or expanded, are frozen (sql/RELEASED).
IDEM_VERSION := $(shell head -1 VERSION)
DATA = $(wildcard sql/$(EXTENSION)--*.sql)
SQL_UPGRADE_LISTS := $(wildcard sql/upgrades/$(EXTENSION)--*.sql.in)
DATA_built = build/sql/$(EXTENSION)--$(IDEM_VERSION).sql $(patsubst sql/upgrades/%.sql.in,build/sql/%.sql,$(SQL_UPGRADE_LISTS))
SQL_PARTS := $(shell find sql/udfs sql/schema -name '*.sql' 2>/dev/null)


# Tests are found by wildcard and run in the order of regress/schedule (scripts/check-schedule.sh
# fails the build when a file is missing from it).
REGRESS_SCHEDULE = regress/schedule
ISOLATION = $(patsubst regress/specs/%.spec,%,$(sort $(wildcard regress/specs/*.spec)))
PGPORT ?= 54320
PG_CONN_OPTS = --host=127.0.0.1 --port=$(PGPORT) --user=postgres
REGRESS_OPTS = --inputdir=regress --outputdir=regress/results --schedule=$(REGRESS_SCHEDULE) $(PG_CONN_OPTS) --dbname=idem_regress
ISOLATION_OPTS = --inputdir=regress --outputdir=regress/results/isolation $(PG_CONN_OPTS) --dbname=idem_isolation

PG_CPPFLAGS = -I$(CURDIR)
PG_CXXFLAGS = -std=c++17 -fPIC -Wall -Wextra -Werror -Wno-missing-field-initializers -Wno-unused-parameter -Wno-register
SHLIB_LINK = -lcrypto -lstdc++

PG_CONFIG ?= $(firstword $(wildcard /usr/lib/postgresql/15/bin/pg_config) pg_config)
PGXS := $(wildcard $(shell $(PG_CONFIG) --pgxs 2>/dev/null))
ifneq ($(PGXS),)
# Debian builds LLVM bitcode for JIT inlining with clang and without PG_CXXFLAGS; our functions
# gain nothing from inlining into plans, so skip it. `override`: Makefile.global sets it to yes.
override with_llvm = no
# Track header dependencies, so a changed header rebuilds every object that includes it.
override autodepend = yes
include $(PGXS)
else
all:
	@echo "PostgreSQL 15 server headers are missing: run 'make deps' (or 'make test' / 'make demo')." >&2; exit 1
endif

build/sql/$(EXTENSION)--$(IDEM_VERSION).sql: sql/$(EXTENSION).sql.in $(SQL_PARTS) scripts/sql-expand.sh VERSION
	@mkdir -p build/sql
	scripts/sql-expand.sh $< $@

build/sql/%.sql: sql/upgrades/%.sql.in $(SQL_PARTS) scripts/sql-expand.sh
	@mkdir -p build/sql
	scripts/sql-expand.sh $< $@

# pg_regress wants a plain REGRESS list or a schedule; we give the schedule through REGRESS_OPTS.
REGRESS = $(EMPTY)
installcheck: regress-installcheck
regress-installcheck:
	scripts/check-schedule.sh
	$(pg_regress_installcheck) $(REGRESS_OPTS)

citus-test: deps
	scripts/citus-test.sh

.PHONY: citus-test deps demo serve test crash failover fuzz-sql sanitize bench bench-outbox fuzz model core-build format regress-installcheck docker-check

deps:
	scripts/install-deps.sh

demo: deps
	scripts/demo.sh

serve: deps
	scripts/serve.sh

# test.sh installs what is missing as its first suite: its stdout carries only its own lines.
test:
	@scripts/test.sh

bench: deps
	scripts/bench.sh

bench-outbox: deps
	scripts/bench-outbox.sh

fuzz: deps
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} scripts/fuzz.sh

model: deps
	MODEL_SECONDS=$${MODEL_SECONDS:-600} scripts/model.sh

format:
	clang-format -i $(CORE_SRCS) $(EXT_SRCS) $(wildcard core/*.hpp core/*/*.hpp extension/*.hpp extension/*/*.hpp tests/*/*.cpp)

EXTRA_CLEAN = regress/results build build-fuzz build-bench build-it

crash: deps
	CRASH_RESTARTS=$${CRASH_RESTARTS:-100} scripts/crash.sh

fuzz-sql: deps
	FUZZ_SQL_SECONDS=$${FUZZ_SQL_SECONDS:-600} scripts/fuzz-sql.sh

sanitize: deps
	scripts/sanitize.sh

failover: deps
	FAILOVER_COUNT=$${FAILOVER_COUNT:-20} scripts/failover.sh

docker-check: deps
	scripts/docker-check.sh
