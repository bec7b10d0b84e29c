#!/usr/bin/env bash
# An LSTM layer's forward and backward, minigrad (bench/lstm_step.cpp, minigrad-lstm-step) against
# PyTorch's nn.LSTM (bench/lstm_step.py) on the same shapes:
#
#   small (seq 32, batch 16, input 32, hidden 32, 1 layer)
#   d2l   (seq 500, batch 64, input 100, hidden 100, 1 bidirectional layer: one layer of d2l's BiRNN)
#
# Each round runs both as separate processes, minigrad first in odd rounds and last in even ones, with the
# same OpenMP OpenBLAS (PyTorch gets it through LD_LIBRARY_PATH). The table gives medians over the rounds.
#
#   bench/lstm-vs-pytorch.sh [--rounds 3] [--threads "1 2"] [--configs "small d2l"] [--seconds 2]
#                            [--bin path/to/minigrad-lstm-step]
#
# --bin times another build too (e.g. before a change), as a third column, in the same alternation.
# It holds no lock itself: on a shared machine, run it as  flock /tmp/minigrad-cpu.lock bench/lstm-vs-pytorch.sh
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 thread_counts="1 2" configs="small d2l" seconds=2 other=""
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --threads) thread_counts=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --bin) other=$2; shift 2 ;;
    -h | --help) sed -n '/^#   bench/,/^# --bin/p' "$0" | sed 's/^# //'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

bin=build/release/bench/minigrad-lstm-step
if [ ! -x "$bin" ]; then
  [ -f build/release/CMakeCache.txt ] || cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/release -j2 --target minigrad-lstm-step >/dev/null
fi
python=/usr/bin/python3
"$python" -c 'import torch' 2>/dev/null || { echo "PyTorch is not installed for $python (apt-get install python3-torch)" >&2; exit 1; }
blas_dir=$(dirname "$(readlink -f "$(ldd "$bin" | awk '/libopenblas/ {print $3; exit}')")")

# shellcheck source=bench/machine.sh
source bench/machine.sh
echo "# An LSTM layer's forward and backward: minigrad vs PyTorch $("$python" -c 'import torch; print(torch.__version__)')"
echo "machine: $(describe_machine), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "BLAS for both: $blas_dir; rounds: $rounds; about ${seconds} s of timing per run"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for round in $(seq 1 "$rounds"); do
  for c in $configs; do
    for t in $thread_counts; do
      runs=(minigrad pytorch)
      [ -n "$other" ] && runs+=(other)
      [ $((round % 2)) = 0 ] && runs=("${runs[@]:1}" minigrad)
      for impl in "${runs[@]}"; do
        args=(--config "$c" --threads "$t" --seconds "$seconds")
        case $impl in
          minigrad) line=$("$bin" "${args[@]}") ;;
          other) line=$("$other" "${args[@]}" | sed 's/impl=minigrad/impl=other/') ;;
          pytorch) line=$(env "LD_LIBRARY_PATH=$blas_dir" "OMP_NUM_THREADS=$t" "$python" bench/lstm_step.py "${args[@]}") ;;
        esac
        echo "$line" | grep '^result ' >>"$results"
      done
    done
  done
  echo "round $round/$rounds done (load $(cut -d' ' -f1 /proc/loadavg))"
done

median() {  # impl config threads
  awk -v impl="impl=$1" -v config="config=$2" -v threads="threads=$3" \
    '$2 == impl && $3 == config && $4 == threads { for (i = 1; i <= NF; i++) if ($i ~ /^ms=/) print substr($i, 4) }' \
    "$results" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
echo
header="| config | threads | minigrad ms | PyTorch ms | PyTorch ÷ minigrad |"
rule="| --- | ---: | ---: | ---: | ---: |"
[ -n "$other" ] && header+=" --bin ms | --bin ÷ minigrad |" && rule+=" ---: | ---: |"
echo "$header"
echo "$rule"
for c in $configs; do
  for t in $thread_counts; do
    m=$(median minigrad "$c" "$t") p=$(median pytorch "$c" "$t")
    row=$(awk -v c="$c" -v t="$t" -v m="$m" -v p="$p" 'BEGIN { printf "| %s | %s | %.1f | %.1f | %.2f |", c, t, m, p, p / m }')
    if [ -n "$other" ]; then
      o=$(median other "$c" "$t")
      row+=$(awk -v m="$m" -v o="$o" 'BEGIN { printf " %.1f | %.2f |", o, o / m }')
    fi
    echo "$row"
  done
done
