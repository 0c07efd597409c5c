#!/bin/bash
# Run the libFuzzer targets longer than `make fuzz` does in CI.
#
#   test/fuzz.sh [SECONDS_PER_TARGET]     default 600
#
# Inputs that add coverage collect in test/fuzz/found/<target> (kept between
# runs, never committed); a crash leaves its input in test/fuzz/found/ and
# fails the run.  Worth committing to test/fuzz/corpus/<target> are small
# inputs that reach new shapes, and every input that once crashed.
set -euo pipefail
cd "$(dirname "$0")/.."
exec make -s fuzz FUZZ_SECONDS="${1:-600}"
