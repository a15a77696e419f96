# mnemo: PGXS build of the extension.  The version lives in mnemo.control only.
EXTENSION    = mnemo
EXTVERSION   = $(shell sed -n "s/^default_version *= *'\(.*\)'/\1/p" mnemo.control)
MODULE_big   = mnemo
OBJS         = $(patsubst %.c,%.o,$(sort $(wildcard src/*/*.c)))
DATA         = $(wildcard sql/mnemo--*.sql)
PG_CPPFLAGS  = -DMNEMO_VERSION='"$(EXTVERSION)"' -Wall -Wmissing-prototypes -I$(srcdir)/src -I$(srcdir)/src/core

# pg_regress inputs share sql/ with the install script, so the list is explicit.
REGRESS      = ids sessions append append_limits insert_direct session_row parts_status part_ids swap reads flat files blobs guard notify tenancy errors context turn_context summary prune search recall recall_expand annotate compaction block_walk checkpoints runs pending state fork maps fuzz distribute
REGRESS_OPTS = --inputdir=. --load-extension=mnemo

# isolation specs for the locking claims: test/specs/*.spec, test/expected/*.out
ISOLATION      = append_order append_snapshot swap_race summary_race claim_race run_claim_race state_merge fork_race map_claim_race search_drain purge_race tenant_lock tenant_reassign part_once_race blob_purge_race append_during_summary append_part_race
ISOLATION_OPTS = --inputdir=test --load-extension=mnemo

PG_CONFIG   ?= pg_config
PGXS        := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# the version is compiled in (mnemo.version()), so a new default_version
# rebuilds; PGXS tracks no header dependencies (only with --enable-depend), so
# every object depends on every header of src/'s rooms: a changed struct must never
# leave an object compiled against its old layout
$(OBJS): mnemo.control $(wildcard src/*/*.h)

# libmnemo and the mnemo command build with their own plain Makefile, so the
# extension build never needs json-c (see client/Makefile).
.PHONY: client client-install client-clean
client:
	$(MAKE) -C client

client-install:
	$(MAKE) -C client install

client-clean:
	$(MAKE) -C client clean

# make demo: a real session end to end on a private cluster (test/demo.sh).
# make test: every test the project has: private cluster, pg_regress,
# isolation, pgTAP, client, concurrency, crash, backup and a tiny bench run;
# ends with "N passed, N failed".
.PHONY: test test-citus bench demo
demo:
	bash test/demo.sh

test:
	bash test/run.sh

# make test-citus: mnemo on a real Citus cluster, a coordinator and two
# workers (test/citus/run.sh), then the update from the version before this
# one on another (test/citus/upgrade.sh); one line each saying it was
# skipped without Citus.
test-citus:
	bash test/citus/run.sh
	bash test/citus/upgrade.sh

bench:
	bash bench/run.sh
