# shellcheck shell=bash
# Sourced by bench/lstm-vs-pytorch.sh and bench/cnn-vs-pytorch.sh: runs a minigrad program and its
# PyTorch twin on the same configurations, alternating, and prints a table of medians.
#
# The caller runs  versus_pytorch WHAT BIN SCRIPT CONFIGS "$@": a title, the minigrad program, the PyTorch
# one and the default configurations; then the options:
#
#   [--rounds 3] [--threads "1 2"] [--configs "..."] [--seconds 2] [--bin path/to/another/build]
#
# Each round runs both as separate processes, minigrad first in odd rounds and last in even ones, with the
# same OpenMP OpenBLAS (PyTorch gets it through LD_LIBRARY_PATH) and the same OpenBLAS kernel
# (scripts/openblas-env.sh). --bin times another build too (e.g. before a change), as a third column, in
# the same alternation. It holds no lock itself: on a shared machine, run it under
# flock /tmp/minigrad-cpu.lock.

versus_pytorch() {
  local what=$1 bin=$2 script=$3 configs=$4
  shift 4
  local usage_line="$0 [--rounds 3] [--threads \"1 2\"] [--configs \"$configs\"] [--seconds 2] [--bin other-build]"
  local rounds=3 thread_counts="1 2" seconds=2 other=""
  while [ $# -gt 0 ]; do
    case $1 in
      --rounds) rounds=$2; shift 2 ;;
      --threads) thread_counts=$2; shift 2 ;;
      --configs) configs=$2; shift 2 ;;
      --seconds) seconds=$2; shift 2 ;;
      --bin) other=$2; shift 2 ;;
      -h | --help) echo "usage: $usage_line"; return 0 ;;
      *) echo "unknown option $1 (usage: $usage_line)" >&2; return 2 ;;
    esac
  done
  if [ ! -x "$bin" ]; then
    [ -f build/release/CMakeCache.txt ] || cmake --preset release >/dev/null
    cmake --build build/release -j2 --target "$(basename "$bin")" >/dev/null
  fi
  local python=/usr/bin/python3
  "$python" -c 'import torch' 2>/dev/null || { echo "PyTorch is not installed for $python (apt-get install python3-torch)" >&2; return 1; }
  local blas_dir
  blas_dir=$(dirname "$(readlink -f "$(ldd "$bin" | awk '/libopenblas/ {print $3; exit}')")")
  # shellcheck source=scripts/openblas-env.sh
  source scripts/openblas-env.sh
  # shellcheck source=bench/machine.sh
  source bench/machine.sh
  echo "# $what: minigrad vs PyTorch $("$python" -c 'import torch; print(torch.__version__)')"
  echo "machine: $(describe_machine), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "BLAS for both: $blas_dir (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-its own choice}); rounds: $rounds; about ${seconds} s of timing per run"
  local results
  results=$(mktemp)
  # shellcheck disable=SC2064  # the path now: $results is local to this function
  trap "rm -f '$results'" EXIT  # also when a run fails or the benchmark is stopped
  for round in $(seq 1 "$rounds"); do
    for c in $configs; do
      for t in $thread_counts; do
        local runs=(minigrad pytorch)
        [ -n "$other" ] && runs+=(other)
        [ $((round % 2)) = 0 ] && runs=("${runs[@]:1}" minigrad)
        for impl in "${runs[@]}"; do
          local args=(--config "$c" --threads "$t" --seconds "$seconds") line
          case $impl in
            minigrad) line=$("$bin" "${args[@]}") ;;
            other) line=$("$other" "${args[@]}" | sed 's/impl=minigrad/impl=other/') ;;
            pytorch) line=$(env "LD_LIBRARY_PATH=$blas_dir" "OMP_NUM_THREADS=$t" "$python" "$script" "${args[@]}") ;;
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
  local header="| config | threads | minigrad ms | PyTorch ms | PyTorch ÷ minigrad |"
  local rule="| --- | ---: | ---: | ---: | ---: |"
  [ -n "$other" ] && header+=" --bin ms | --bin ÷ minigrad |" && rule+=" ---: | ---: |"
  echo "$header"
  echo "$rule"
  for c in $configs; do
    for t in $thread_counts; do
      local m p row
      m=$(median minigrad "$c" "$t") p=$(median pytorch "$c" "$t")
      row=$(awk -v c="$c" -v t="$t" -v m="$m" -v p="$p" 'BEGIN { printf "| %s | %s | %.1f | %.1f | %.2f |", c, t, m, p, p / m }')
      if [ -n "$other" ]; then
        local o
        o=$(median other "$c" "$t")
        row+=$(awk -v m="$m" -v o="$o" 'BEGIN { printf " %.1f | %.2f |", o, o / m }')
      fi
      echo "$row"
    done
  done
  rm -f "$results"
}
