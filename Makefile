# shard_fdw: PostgreSQL foreign data wrapper for sharded DynamoDB tables
#
#   make              build the extension
#   make install      install it into PostgreSQL's directories
#   make unit         build and run the C unit tests of the plain-C modules
#   make installcheck run the pg_regress suite (sql/ -> expected/) against a
#                     running server; test/check.sh sets everything up
#   make SANITIZE=1   build with AddressSanitizer and UBSan
#   make fuzz         build the libFuzzer targets (clang) and run each for
#                     FUZZ_SECONDS (default 30); test/fuzz.sh runs longer
#   make dist         the release tarball, shard_fdw-VERSION.tar.gz: every
#                     file but .git and what .gitignore names, once the
#                     versions agree (test/release.py)

EXTENSION = shard_fdw
MODULE_big = shard_fdw
# The script of every release, and the upgrade scripts between them (see
# doc/installation.md#versions-and-upgrades).
DATA = $(wildcard shard_fdw--*.sql)
PGFILEDESC = "shard_fdw - foreign data wrapper for sharded DynamoDB tables"

# src/ holds one folder per layer, calls only going down (test/layers.py):
# core (plain C, no PostgreSQL header), catalog, wire, dynamo, fdw, sql.
LAYERS = core catalog wire dynamo fdw sql
PURE_SRCS = $(wildcard src/core/*.c)
OBJS = $(patsubst %.c,%.o,$(foreach layer,$(LAYERS),$(wildcard src/$(layer)/*.c)))

REGRESS = $(sort $(patsubst sql/%.sql,%,$(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --load-extension=shard_fdw

# The FDW callbacks' signatures are PostgreSQL's, so unused parameters are
# the rule there; PostgreSQL's own headers are read as system headers.
# PostgreSQL 17 and later build with -Wshadow=compatible-local: so do we,
# whatever the version built against.
WARNINGS = -Wall -Wextra -Werror -Wshadow=compatible-local
PG_CPPFLAGS = -Isrc -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS = $(WARNINGS) -Wno-unused-parameter -MMD -MP
SHLIB_LINK = -lcurl -lssl -lcrypto -lz -lm

ifdef SANITIZE
PG_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SHLIB_LINK += -fsanitize=address,undefined
endif

EXTRA_CLEAN = test/unit/unit_tests test/unit/suites.h $(FUZZ_TARGETS) test/fuzz/found \
	$(OBJS:.o=.d)

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Each object depends on the headers it includes, as the compiler found them.
-include $(OBJS:.o=.d)

UNIT_SRCS = $(wildcard test/unit/*.c) test/alloc/arena.c
UNIT_SUITES = $(patsubst test/unit/test_%.c,%,$(wildcard test/unit/test_*.c))
UNIT_CFLAGS = -std=gnu11 -g -O1 $(WARNINGS) -fsanitize=address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=undefined -Isrc -Itest -Itest/unit

# Every test/unit/test_NAME.c defines suite_NAME: the list main.c runs.
test/unit/suites.h: $(wildcard test/unit/test_*.c)
	@for s in $(UNIT_SUITES); do echo "UNIT_SUITE($$s)"; done > $@

test/unit/unit_tests: $(PURE_SRCS) $(UNIT_SRCS) $(wildcard src/core/*.h) test/unit/unit.h test/unit/ddbsamples.h test/unit/suites.h test/alloc/arena.h
	$(CC) $(UNIT_CFLAGS) -o $@ $(PURE_SRCS) $(UNIT_SRCS) -lssl -lcrypto

.PHONY: unit
unit: test/unit/unit_tests
	test/unit/unit_tests test/unit/sigv4

# libFuzzer targets over the plain-C code that reads what DynamoDB sends:
# response bodies (parser and shape checks), stored keys (templates),
# what the credential sources send or hold (profiles, STS XML, JSON), the
# sampled keys IMPORT FOREIGN SCHEMA infers templates from, and the HTTP/1.1
# framing of the answers (and the request headers it writes).
# Inputs found go to test/fuzz/found/<target>, crashes to test/fuzz/found/,
# libFuzzer's output to test/fuzz/found/<target>.log (its tail is printed
# on a finding);
# the committed seeds in test/fuzz/corpus/<target> are only read.
FUZZ_TARGETS = test/fuzz/fuzz_response test/fuzz/fuzz_keyfmt test/fuzz/fuzz_awscreds \
	test/fuzz/fuzz_infer test/fuzz/fuzz_http1 test/fuzz/fuzz_exchange
FUZZ_SECONDS ?= 30
FUZZ_CC = clang
FUZZ_CFLAGS = -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer -Isrc -Itest

test/fuzz/fuzz_response: test/fuzz/fuzz_response.c test/alloc/arena.c test/fuzz/init.c src/core/pure.c src/core/ddbjson.c src/core/jsonwrite.c src/core/ddbshape.c src/core/avorder.c src/core/pure.h src/core/ddbjson.h src/core/avorder.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

test/fuzz/fuzz_keyfmt: test/fuzz/fuzz_keyfmt.c test/alloc/arena.c test/fuzz/init.c src/core/pure.c src/core/keyfmt.c src/core/pure.h src/core/keyfmt.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

test/fuzz/fuzz_awscreds: test/fuzz/fuzz_awscreds.c test/alloc/arena.c test/fuzz/init.c src/core/pure.c src/core/sigv4.c src/core/ddbjson.c src/core/jsonwrite.c src/core/ddbshape.c src/core/avorder.c src/core/awscreds.c src/core/pure.h src/core/sigv4.h src/core/ddbjson.h src/core/awscreds.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) -lssl -lcrypto

test/fuzz/fuzz_infer: test/fuzz/fuzz_infer.c test/alloc/arena.c test/fuzz/init.c src/core/pure.c src/core/infer.c src/core/keyfmt.c src/core/shardhash.c src/core/pure.h src/core/infer.h src/core/keyfmt.h src/core/shardhash.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) -lssl -lcrypto

test/fuzz/fuzz_http1: test/fuzz/fuzz_http1.c test/alloc/arena.c test/fuzz/init.c src/core/pure.c src/core/http1.c src/core/ddbshape.c src/core/ddbjson.c src/core/jsonwrite.c src/core/avorder.c src/core/pure.h src/core/http1.h src/core/sigv4.h src/core/ddbjson.h src/core/avorder.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

test/fuzz/fuzz_exchange: test/fuzz/fuzz_exchange.c test/alloc/arena.c test/fuzz/init.c src/core/pure.c src/core/http1.c src/core/ddbshape.c src/core/ddbjson.c src/core/jsonwrite.c src/core/avorder.c src/core/pure.h src/core/http1.h src/core/sigv4.h src/core/ddbjson.h src/core/avorder.h test/alloc/arena.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

.PHONY: fuzz
fuzz: $(FUZZ_TARGETS)
	@for target in $(FUZZ_TARGETS); do \
		name=$$(basename $$target | sed 's/^fuzz_//'); \
		mkdir -p test/fuzz/found/$$name || exit 1; \
		echo "==> $$target for $(FUZZ_SECONDS) s"; \
		$$target -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-dict=test/fuzz/$$name.dict -artifact_prefix=test/fuzz/found/ \
			test/fuzz/found/$$name test/fuzz/corpus/$$name \
			>test/fuzz/found/$$name.log 2>&1 || \
			{ tail -n 60 test/fuzz/found/$$name.log; exit 1; }; \
		grep -E '^Done [0-9]+ runs' test/fuzz/found/$$name.log; \
	done

.PHONY: dist
dist:
	python3 test/release.py tarball .
