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

EXTENSION = shard_fdw
MODULE_big = shard_fdw
DATA = shard_fdw--0.1.sql
PGFILEDESC = "shard_fdw - foreign data wrapper for sharded DynamoDB tables"

PURE_SRCS = src/pure.c src/sigv4.c src/ddbjson.c src/ddbshape.c src/keyfmt.c \
	src/shardhash.c src/avorder.c src/awscreds.c src/infer.c src/http1.c
PG_SRCS = $(filter-out $(PURE_SRCS),$(wildcard src/*.c))
OBJS = $(PURE_SRCS:.c=.o) $(PG_SRCS:.c=.o)

REGRESS = $(sort $(patsubst sql/%.sql,%,$(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --load-extension=shard_fdw

# The FDW callbacks' signatures are PostgreSQL's, so unused parameters are
# the rule there; PostgreSQL's own headers are read as system headers.
WARNINGS = -Wall -Wextra -Werror
PG_CPPFLAGS = -Isrc -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS = $(WARNINGS) -Wno-unused-parameter
SHLIB_LINK = -lcurl -lssl -lcrypto -lz -lm

ifdef SANITIZE
PG_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SHLIB_LINK += -fsanitize=address,undefined
endif

EXTRA_CLEAN = test/unit/unit_tests test/unit/suites.h $(FUZZ_TARGETS) test/fuzz/found

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Every object depends on every header: the structs are shared.
$(OBJS): $(wildcard src/*.h)

UNIT_SRCS = $(wildcard test/unit/*.c) test/alloc/arena.c
UNIT_SUITES = $(patsubst test/unit/test_%.c,%,$(wildcard test/unit/test_*.c))
UNIT_CFLAGS = -std=gnu11 -g -O1 $(WARNINGS) -fsanitize=address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=undefined -Isrc -Itest/unit -Itest/alloc

# Every test/unit/test_NAME.c defines suite_NAME: the list main.c runs.
test/unit/suites.h: $(wildcard test/unit/test_*.c)
	@for s in $(UNIT_SUITES); do echo "UNIT_SUITE($$s)"; done > $@

test/unit/unit_tests: $(PURE_SRCS) $(UNIT_SRCS) $(wildcard src/*.h) test/unit/unit.h test/unit/suites.h test/alloc/arena.h
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
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer -Isrc -Itest/alloc

test/fuzz/fuzz_response: test/fuzz/fuzz_response.c test/alloc/arena.c src/pure.c src/ddbjson.c src/ddbshape.c src/avorder.c src/pure.h src/ddbjson.h src/avorder.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

test/fuzz/fuzz_keyfmt: test/fuzz/fuzz_keyfmt.c test/alloc/arena.c src/pure.c src/keyfmt.c src/pure.h src/keyfmt.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

test/fuzz/fuzz_awscreds: test/fuzz/fuzz_awscreds.c test/alloc/arena.c src/pure.c src/sigv4.c src/ddbjson.c src/ddbshape.c src/avorder.c src/awscreds.c src/pure.h src/sigv4.h src/ddbjson.h src/awscreds.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) -lssl -lcrypto

test/fuzz/fuzz_infer: test/fuzz/fuzz_infer.c test/alloc/arena.c src/pure.c src/infer.c src/keyfmt.c src/shardhash.c src/pure.h src/infer.h src/keyfmt.h src/shardhash.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) -lssl -lcrypto

test/fuzz/fuzz_http1: test/fuzz/fuzz_http1.c test/alloc/arena.c src/pure.c src/http1.c src/ddbshape.c src/ddbjson.c src/avorder.c src/pure.h src/http1.h src/sigv4.h src/ddbjson.h src/avorder.h
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)

test/fuzz/fuzz_exchange: test/fuzz/fuzz_exchange.c test/alloc/arena.c src/pure.c src/http1.c src/ddbshape.c src/ddbjson.c src/avorder.c src/pure.h src/http1.h src/sigv4.h src/ddbjson.h src/avorder.h test/alloc/arena.h
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
