#!/usr/bin/env bash
# Where one training step's time goes, by category: bench/train_step.cpp (minigrad-train-step, the
# step bench/train-step.sh times) run under `perf record` (the cpu-clock software event, which needs no
# hardware counters), its samples put into categories by the function they fell in:
#
#   matmul       OpenBLAS (the products and their packing), minigrad's gemm wrappers and its thin-product
#                kernel (tensor/thin_gemm.cpp: thin_product, block)
#   attention    the fused attention kernels, softmax and masks
#   layer norm   layer_norm_forward / layer_norm_backward
#   elementwise  the maps (add, mul, relu, its backward, ...) and reductions (bias gradients, the loss)
#   dropout      the dropout kernels
#   optimizer    Adam's and SGD's steps, gradient clipping
#   copies       Tensor::copy_, contiguous copies, memmove
#   memory       zero fills (memset), malloc and free, the kernel's page faults
#   graph        the autograd engine and the recording of ops
#   other        anything else
#
# perf records the timed steps alone: it starts with its events off, and minigrad-train-step turns them on
# after the set-up and the warm-up steps and off after the timed ones (--perf-control, through two FIFOs).
# Warm-up steps touch fresh memory, whose page faults would swamp the samples of the timed steps, which
# take a few faults each (docs/history/performance.md, "The step profile over whole runs").
#
#   bench/profile-step.sh [--configs "A B C S"] [--threads "1 2"] [--steps N | --steps "A=15 C=3"] [--frequency HZ]
#   bench/profile-step.sh --main-job N [--threads "1 2"] [--frequency HZ]
#
# --main-job profiles the main job's training instead (scripts/train-sentiment.sh's model and options,
# one member, on data/aclImdb, which that script prepares): `minigrad-sentiment train` turns perf on after
# 20 steps and off after N more (--perf-control, --profile-after), so that reading the reviews, building
# the tables and the first steps are left out. Its rows give no ms/step: the program times epochs.
#
# --frequency sets perf's sampling rate (perf's own default otherwise, 4,000 a second). On this project's
# machine, a virtual one, the default rate slows the step: A at one thread with OpenBLAS's own kernels took
# 100-105 ms a step at 4,000 samples a second, 81-86 at 500 and 82-87 unprofiled
# (docs/history/performance.md, "What a step does besides its products").
#
# It holds no lock itself: on a shared machine, run it as  flock /tmp/minigrad-cpu.lock bench/profile-step.sh
set -euo pipefail
cd "$(dirname "$0")/.."

configs="A B C S" thread_counts="1 2" main_job_steps=0 frequency=""
declare -A steps=([A]=15 [B]=100 [C]=3 [S]=5)
while [ $# -gt 0 ]; do
  case $1 in
    --configs) configs=$2; shift 2 ;;
    --threads) thread_counts=$2; shift 2 ;;
    --steps)
      for s in $2; do
        if [[ $s =~ ^[0-9]+$ ]]; then for c in "${!steps[@]}"; do steps[$c]=$s; done
        elif [[ $s =~ ^[ABCS]=[0-9]+$ ]]; then steps[${s%%=*}]=${s#*=}
        else echo "--steps: '$s' is neither N nor X=N (X one of A B C S)" >&2; exit 2; fi
      done
      shift 2 ;;
    --main-job) main_job_steps=$2; shift 2 ;;
    --frequency) frequency=$2; shift 2 ;;
    -h | --help) sed -n '/^#   bench/p' "$0" | sed 's/^# //'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for c in $configs; do
  [[ $c =~ ^[ABCS]$ ]] || { echo "--configs: unknown configuration '$c' (A B C S)" >&2; exit 2; }
done

command -v perf >/dev/null || apt-get install -y linux-perf >/dev/null
[[ $main_job_steps =~ ^[0-9]+$ ]] || { echo "--main-job: '$main_job_steps' is not a step count" >&2; exit 2; }
[[ -z $frequency || $frequency =~ ^[1-9][0-9]*$ ]] || { echo "--frequency: '$frequency' is not a rate in Hz" >&2; exit 2; }
bin=build/release/bench/minigrad-train-step
target=minigrad-train-step
if [ "$main_job_steps" -gt 0 ]; then
  bin=build/release/examples/minigrad-sentiment target=minigrad-sentiment configs=main
  [ -d data/aclImdb/train ] || { echo "no data/aclImdb/train: run scripts/train-sentiment.sh once" >&2; exit 2; }
fi
if [ ! -x "$bin" ]; then
  [ -f build/release/CMakeCache.txt ] || cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/release -j2 --target "$target" >/dev/null
fi
# shellcheck source=scripts/openblas-env.sh
source scripts/openblas-env.sh
# shellcheck source=bench/machine.sh
source bench/machine.sh

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
categories=(matmul attention "layer norm" elementwise dropout optimizer copies memory graph other)

# perf report's lines "share|dso|symbol" -> one line of shares, in the order of $categories.
categorize() {
  awk -F'|' '
    function category(dso, sym) {
      if (sym ~ /Generator|Tensor::normal|Tensor::uniform|__cos|__sin|__ieee754_log|_dl_|do_lookup/ ||
          dso ~ /ld-linux/) return "setup"
      if (dso ~ /openblas/ || sym ~ /minigrad::gemm|minigrad::matmul|thin_product|::block<(float|double),/)
        return "matmul"
      if (sym ~ /attention|softmax|masked_fill|causal/) return "attention"
      if (sym ~ /layer_norm/) return "layer norm"
      if (sym ~ /dropout/) return "dropout"
      if (sym ~ /optim::|adam|clip_grad/) return "optimizer"
      if (sym ~ /copy_|contiguous|memmove|memcpy/) return "copies"
      if (sym ~ /memset|malloc|free|_int_|Storage|operator new|operator delete/ || dso ~ /kernel/) return "memory"
      if (sym ~ /backpropagate|record|Node|engine|Variable|SavedTensor|_Sp_counted|std::function|_M_invoke/)
        return "graph"
      if (sym ~ /map_float|map_|add|sub|mul|div|relu|gelu|tanh|exp|sum|mean|reduce|cross_entropy|embedding|index_|where|fill/)
        return "elementwise"
      return "other"
    }
    { share = $1; sub(/%.*/, "", share); dso = $2; gsub(/ +$/, "", dso); total[category(dso, $3)] += share }
    END {
      all = 0
      for (c in total) if (c != "setup") all += total[c]
      n = split("matmul|attention|layer norm|elementwise|dropout|optimizer|copies|memory|graph|other", order, "|")
      for (i = 1; i <= n; i++) printf "%s%.1f%%", (i > 1 ? " | " : ""), (all > 0 ? 100 * total[order[i]] / all : 0)
      printf "\n"
    }'
}

echo "# where a training step's time goes (perf record -e cpu-clock${frequency:+ -F $frequency}, bench/profile-step.sh)"
echo "machine: $(describe_machine), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
header="| CPU (family/model) | config | threads | ms/step"
rule="| --- | --- | ---: | ---:"
for c in "${categories[@]}"; do header+=" | $c"; rule+=" | ---:"; done
echo "$header |"
echo "$rule |"
for c in $configs; do
  for t in $thread_counts; do
    data=$out/$c-$t.data
    rm -f "$out/control" "$out/ack" && mkfifo "$out/control" "$out/ack"
    exec {control_fd}<>"$out/control" {ack_fd}<>"$out/ack"  # held open read-write: no open() blocks
    if [ "$c" = main ]; then
      command=("$bin" --threads "$t" train --data data/aclImdb --out "$out/model" --overwrite --no-eval
               --max-steps $((20 + main_job_steps)) --profile-after 20 --perf-control "$out/control,$out/ack")
    else
      command=("$bin" --config "$c" --steps "${steps[$c]}" --threads "$t" --perf-control "$out/control,$out/ack")
    fi
    MINIGRAD_NUM_THREADS=$t OMP_NUM_THREADS=$t perf record -q -e cpu-clock ${frequency:+-F "$frequency"} -D -1 \
      --control "fd:$control_fd,$ack_fd" -o "$data" "${command[@]}" >"$out/stdout" 2>"$out/stderr" ||
      { cat "$out/stderr" >&2; echo "$c on $t threads failed" >&2; exit 1; }
    exec {control_fd}>&- {ack_fd}>&-
    ms=$(sed -nE 's/^result .* ms_per_step=([^ ]*).*/\1/p' "$out/stdout")
    [ -n "$ms" ] || ms="-"
    shares=$(perf report -i "$data" --no-children --sort dso,sym --stdio -q -t '|' 2>/dev/null | categorize)
    echo "| $(short_machine) | $c | $t | $ms | $shares |"
  done
done
