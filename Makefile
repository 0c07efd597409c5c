# shard_fdw: PostgreSQL foreign data wrapper for sharded DynamoDB tables
#
#   make              build the extension
#   make install      install it into PostgreSQL's directories
#   make unit         build and run the C unit tests of the plain-C modules
#   make installcheck run the pg_regress suite (sql/ -> expected/) against a
#                     running server; test/check.sh sets everything up
#   make SANITIZE=1   build with AddressSanitizer and UBSan

EXTENSION = shard_fdw
MODULE_big = shard_fdw
DATA = shard_fdw--0.1.sql
PGFILEDESC = "shard_fdw - foreign data wrapper for sharded DynamoDB tables"

PURE_SRCS = src/pure.c src/sigv4.c src/ddbjson.c src/keyfmt.c src/shardhash.c \
	src/avorder.c
PG_SRCS = $(filter-out $(PURE_SRCS),$(wildcard src/*.c))
OBJS = $(PURE_SRCS:.c=.o) $(PG_SRCS:.c=.o)

REGRESS = $(sort $(patsubst sql/%.sql,%,$(wildcard sql/*.sql)))
REGRESS_OPTS = --inputdir=. --load-extension=shard_fdw

# The FDW callbacks' signatures are PostgreSQL's, so unused parameters are
# the rule there; PostgreSQL's own headers are read as system headers.
WARNINGS = -Wall -Wextra -Werror
PG_CPPFLAGS = -Isrc -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS = $(WARNINGS) -Wno-unused-parameter
SHLIB_LINK = -lcurl -lssl -lcrypto -ljson-c -lz

ifdef SANITIZE
PG_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SHLIB_LINK += -fsanitize=address,undefined
endif

EXTRA_CLEAN = test/unit/unit_tests

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# Every object depends on every header: the structs are shared.
$(OBJS): $(wildcard src/*.h)

UNIT_SRCS = $(wildcard test/unit/*.c)
UNIT_CFLAGS = -std=gnu11 -g -O1 $(WARNINGS) -fsanitize=address,undefined \
	-fno-omit-frame-pointer -fno-sanitize-recover=undefined -Isrc -Itest/unit

test/unit/unit_tests: $(PURE_SRCS) $(UNIT_SRCS) $(wildcard src/*.h) test/unit/unit.h
	$(CC) $(UNIT_CFLAGS) -o $@ $(PURE_SRCS) $(UNIT_SRCS) -lssl -lcrypto -ljson-c

.PHONY: unit
unit: test/unit/unit_tests
	test/unit/unit_tests test/unit/sigv4
