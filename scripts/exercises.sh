#!/usr/bin/env bash
# The course in exercises/ (docs/learn-by-doing.md): builds the tasks as you have written them, runs
# each one's tests, and says per task: passed, not written yet, or which checks failed and what to look at.
#
#   scripts/exercises.sh      every task
#   scripts/exercises.sh 3    task 3 only
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

tasks=(01_sigmoid_backward 02_sum_to 03_topological_order 04_accumulate_into_leaf 05_matmul_backward
  06_cross_entropy_backward 07_linear_and_sgd 08_adam_step 09_forward_mode)
if [ $# -gt 0 ]; then
  if ! [[ "$1" =~ ^[0-9]+$ ]] || [ $((10#$1)) -lt 1 ] || [ $((10#$1)) -gt ${#tasks[@]} ]; then
    echo "usage: scripts/exercises.sh [task number, 1 to ${#tasks[@]}]" >&2
    exit 2
  fi
  tasks=("${tasks[$((10#$1 - 1))]}")
fi

# The release build that scripts/test.sh uses; the first run builds the library (a few minutes).
log=build/exercises.log
mkdir -p build
echo "building (output in $log) ..."
cmake --preset release >"$log" 2>&1 || { cat "$log"; exit 1; }

passed=0
for task in "${tasks[@]}"; do
  number=${task%%_*}
  if ! build=$(cmake --build build/release -j "$(nproc)" --target "exercise_$number" 2>&1); then
    echo "$build" >>"$log"
    printf '%-32s does not compile:\n' "$task"
    grep "error" <<<"$build" | grep -v "^g\?make" | head -n 5 | sed 's/^/    /'
    continue
  fi
  echo "$build" >>"$log"
  status=0
  # --log_level=message: a test's hint logged before a step that may crash is among a crash's last words.
  output=$("build/release/exercises/exercise_$number" --log_level=message --report_level=no --color_output=no 2>&1) ||
    status=$?
  # Boost.Test's lines for a failed check or an exception, `file(line): error: in "case": message`, each
  # message once.
  failures=$(sed -n 's/^.*error: in "\([^"]*\)": \(.*\)$/\1: \2/p' <<<"$output" | awk '!seen[$0]++')
  if [ "$status" -eq 0 ]; then
    printf '%-32s passed\n' "$task"
    passed=$((passed + 1))
  elif [ "$status" -eq 201 ] && ! grep -qv "not written yet" <<<"$failures"; then
    printf '%-32s not written yet: exercises/%s.cpp\n' "$task" "$task"
  elif [ "$status" -eq 201 ]; then
    printf '%-32s failed:\n' "$task"
    head -n 3 <<<"$failures" | sed 's/^/  - /'
    more=$(($(wc -l <<<"$failures") - 3))
    [ "$more" -gt 0 ] && echo "  ($more more: build/release/exercises/exercise_$number lists them all)"
  else
    printf '%-32s crashed (exit status %s); its last words:\n' "$task" "$status"
    tail -n 5 <<<"$output" | sed 's/^/    /'
  fi
done
echo "$passed of ${#tasks[@]} passed"
[ "$passed" -eq "${#tasks[@]}" ]
