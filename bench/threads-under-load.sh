#!/usr/bin/env bash
# How minigrad's threads share the machine: a small and a large model, each timed alone, beside one busy
# single-threaded process, and as two copies side by side. With the cores shared, two copies at once can
# at best take twice as long as one alone; a slowdown far beyond that means threads waiting for a core
# that another process holds (OpenMP workers spinning at a barrier while the thread they wait for is
# descheduled).
#
#   small: minigrad-sentiment train on 3,000 reviews with a tiny model (d 16, 1 layer, 1 epoch): a whole
#          process, loading included, timed from outside
#   large: minigrad-train-step --config A (d 128, 2 layers, batch 32 x 128): its median ms per step
#
#   bench/threads-under-load.sh [--rounds 3] [--env "VAR=value ..."] [--build DIR]...
#
# --build may be given several times (a build before and after a change): each round then measures every
# build in turn, so that all of them see the same machine.
#
# It needs the IMDB folder in data/aclImdb (scripts/train-sentiment.sh extracts it) and holds no lock: on a
# shared machine run nothing else meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 extra_env=() builds=()
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --env) read -r -a extra_env <<<"$2"; shift 2 ;;
    --build) builds+=("$2"); shift 2 ;;
    *) echo "usage: bench/threads-under-load.sh [--rounds N] [--env 'VAR=value ...'] [--build DIR]..." >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "--rounds: '$rounds' is not a whole number" >&2; exit 2; }
[ ${#builds[@]} -gt 0 ] || builds=(build/release)
for build in "${builds[@]}"; do
  for f in "$build/examples/minigrad-sentiment" "$build/bench/minigrad-train-step"; do
    [ -x "$f" ] || { echo "$f is missing: build first (cmake --build build/release)" >&2; exit 1; }
  done
done
[ -d data/aclImdb/train/pos ] || { echo "data/aclImdb is missing: run scripts/train-sentiment.sh once" >&2; exit 1; }
# shellcheck source=bench/machine.sh
source bench/machine.sh
echo "machine: $(describe_machine)"

tmp=$(mktemp -d)
busy_pid=
cleanup() {
  [ -n "$busy_pid" ] && kill "$busy_pid" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT

# One measurement of a model, printed as seconds (small) or ms per step (large).
small() {
  local out=$tmp/small-$BASHPID start end
  start=$(date +%s.%N)
  env ${extra_env[@]+"${extra_env[@]}"} "$build/examples/minigrad-sentiment" train --data data/aclImdb --train-limit 3000 --hiddens 16 \
    --heads 2 --ffn 32 --layers 1 --vocab-size 2000 --max-len 64 --validation 0 --epochs 1 --no-eval \
    --out "$out" >/dev/null 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}
large() {
  env ${extra_env[@]+"${extra_env[@]}"} "$build/bench/minigrad-train-step" --config A --steps 10 --warmup 2 2>&1 |
    grep -oE 'ms_per_step=[0-9.]+' | cut -d= -f2
}
busy_start() {
  bash -c 'while :; do :; done' &
  busy_pid=$!
}
busy_stop() {
  kill "$busy_pid" 2>/dev/null
  wait "$busy_pid" 2>/dev/null || true
  busy_pid=
}
# Two copies at once; prints the slower one's figure.
pair() {
  local a b
  "$1" >"$tmp/pair-a" &
  a=$!
  b=$("$1")
  wait $a
  awk -v x="$(cat "$tmp/pair-a")" -v y="$b" 'BEGIN { print (x > y ? x : y) }'
}

declare -A results
for round in $(seq 1 "$rounds"); do
  for build in "${builds[@]}"; do
    for model in small large; do
      results[$build,$model,alone]+="$($model) "
      busy_start
      results[$build,$model,busy]+="$($model) "
      busy_stop
      results[$build,$model,pair]+="$(pair $model) "
    done
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
for build in "${builds[@]}"; do
  echo "threads under load, $build: $rounds round(s); medians (each round's figures in brackets)${extra_env[*]:+; env ${extra_env[*]}}"
  printf '%-8s %-26s %-26s %-26s %8s %8s\n' model alone "beside a busy process" "two at once (slower)" busy/alone pair/alone
  for model in small large; do
    unit=s
    [ $model = large ] && unit="ms/step"
    a=$(median <<<"${results[$build,$model,alone]}")
    b=$(median <<<"${results[$build,$model,busy]}")
    p=$(median <<<"${results[$build,$model,pair]}")
    printf '%-8s %-26s %-26s %-26s %8.2f %8.2f\n' "$model" "$a $unit [${results[$build,$model,alone]% }]" \
      "$b [${results[$build,$model,busy]% }]" "$p [${results[$build,$model,pair]% }]" \
      "$(awk -v x="$b" -v y="$a" 'BEGIN { print x / y }')" "$(awk -v x="$p" -v y="$a" 'BEGIN { print x / y }')"
  done
done
