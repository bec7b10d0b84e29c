#!/usr/bin/env bash
# Builds minigrad (Release) and prints the gradient-check report: every differentiable op checked against
# finite differences in float64. Arguments go to the program, e.g. --trials 5 or --filter matmul.
#
#   scripts/gradcheck-report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/release -j "$(nproc)" --target minigrad-gradcheck
exec build/release/tests/gradcheck/minigrad-gradcheck "$@"
