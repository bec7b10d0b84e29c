#!/usr/bin/env bash
# The whole test suite, as CI runs it: installs what is missing, checks the formatting, then builds and
# runs every CTest test twice — in Release, and with AddressSanitizer and UndefinedBehaviorSanitizer —
# and the two-threads test a third time under ThreadSanitizer.
#
#   scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# python3-torch (PyTorch 1.13) is for the tests only: the float64 parity tests against PyTorch run on
# every machine instead of being skipped. The library never links it. chromium, chromium-driver and
# python3-selenium: the backward page's test drives a real browser; graphviz: that page's layout (and
# dot files' pictures). Neither is needed to build minigrad.
scripts/install-deps.sh clang-format python3-torch chromium chromium-driver python3-selenium graphviz

echo "== Formatting (.clang-format) =="
# Unformatted code fails the suite: run `git ls-files '*.cpp' '*.h' | xargs clang-format -i` to fix it.
git ls-files '*.cpp' '*.h' | xargs clang-format --dry-run --Werror

jobs=$(nproc)
echo "== Release build =="
cmake --preset release -DMINIGRAD_WERROR=ON
cmake --build build/release -j "$jobs"
ctest --test-dir build/release --output-on-failure -j "$jobs"

echo "== AddressSanitizer + UndefinedBehaviorSanitizer build =="
# -O1 -g1: instrumented code at -O2 -g compiles twice as slowly, and line tables are all a sanitizer
# report needs. The example and benchmark programs are not part of the tests.
cmake --preset asan -DMINIGRAD_WERROR=ON
cmake --build build/asan -j "$jobs"
ctest --test-dir build/asan --output-on-failure -j "$jobs"

echo "== ThreadSanitizer: the thread pool, and two models built and trained in two threads =="
# Two tests, with two threads per process: the thread pool itself, and two trainings side by side, whose
# kernels share the pool (one at a time; the other runs its region on its own thread). The pool's
# workers are plain std::threads and atomics, which TSan sees whole.
cmake -S . -B build/tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  -DMINIGRAD_SANITIZE_THREAD=ON -DMINIGRAD_WERROR=ON -DMINIGRAD_BUILD_EXAMPLES=OFF -DMINIGRAD_BUILD_BENCHMARKS=OFF
cmake --build build/tsan -j "$jobs" --target test_threads test_thread_pool
MINIGRAD_NUM_THREADS=2 TSAN_OPTIONS=halt_on_error=1 \
  ctest --test-dir build/tsan --output-on-failure -R '^test_thread(s|_pool)$'
echo "== all tests passed, with and without sanitizers =="
