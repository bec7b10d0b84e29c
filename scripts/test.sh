#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, checks the formatting, then builds and
# runs every CTest test twice — in Release, and with AddressSanitizer and UndefinedBehaviorSanitizer —
# and the two-threads test a third time under ThreadSanitizer.
#
#   scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh clang-format

echo "== Formatting (.clang-format) =="
# Unformatted code fails the suite: run `git ls-files '*.cpp' '*.h' | xargs clang-format -i` to fix it.
git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run --Werror

jobs=$(nproc)
echo "== Release build =="
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release -DMINIGRAD_WERROR=ON
cmake --build build/release -j "$jobs"
ctest --test-dir build/release --output-on-failure -j "$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
# -O1 -g1: instrumented code at -O2 -g compiles twice as slowly, and line tables are all a sanitizer
# report needs. The example and benchmark programs are not part of the tests.
cmake -S . -B build/asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DMINIGRAD_SANITIZE=ON -DMINIGRAD_WERROR=ON -DMINIGRAD_BUILD_EXAMPLES=OFF -DMINIGRAD_BUILD_BENCHMARKS=OFF
cmake --build build/asan -j "$jobs"
ctest --test-dir build/asan --output-on-failure -j "$jobs"

echo "== ThreadSanitizer: two models built and trained in two threads =="
# Only the one test: the library under TSan, and a test that runs two trainings side by side.
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DMINIGRAD_SANITIZE_THREAD=ON -DMINIGRAD_WERROR=ON -DMINIGRAD_BUILD_EXAMPLES=OFF -DMINIGRAD_BUILD_BENCHMARKS=OFF
cmake --build build/tsan -j "$jobs" --target test_threads
# One OpenMP thread per training thread: what is checked is the two user threads. Debian's libgomp is not
# built with TSan, which then cannot see the barrier that ends a parallel region and reports every kernel
# that splits its work (the fused attention's backward, here) as racing with the code after it.
MINIGRAD_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1 \
  ctest --test-dir build/tsan --output-on-failure -R '^test_threads$'
echo "== all tests passed, with and without sanitizers =="
