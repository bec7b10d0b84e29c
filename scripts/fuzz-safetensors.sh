#!/usr/bin/env bash
# A long fuzzing run of the safetensors loader under AddressSanitizer and UndefinedBehaviorSanitizer:
# mutated files (default 1,000,000), each of which must load consistently or be refused with an error
# naming the file, in under a second. A memory error ends the run with the sanitizer's report; failing
# inputs are kept in build/fuzz-failures/. scripts/test.sh runs a short pass of the same program.
#
#   scripts/fuzz-safetensors.sh [ITERATIONS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
iterations=${1:-1000000}
seed=${2:-1}
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DMINIGRAD_SANITIZE=ON -DMINIGRAD_WERROR=ON -DMINIGRAD_BUILD_EXAMPLES=OFF -DMINIGRAD_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build/asan -j "$(nproc)" --target minigrad-fuzz-safetensors
LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0 \
  build/asan/tests/minigrad-fuzz-safetensors --iterations "$iterations" --seed "$seed" --keep build/fuzz-failures
