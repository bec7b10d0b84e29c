#!/usr/bin/env bash
# Training throughput of the sentiment model in three layouts of the same two cores — 1 process × 1
# thread, 1 process × 2 threads, 2 MPI processes × 1 thread — for the default model and a wider one
# (d 128, 4 heads, FFN 512, 2 layers). Each run trains --max-steps steps on the IMDB training reviews and
# reports the trainer's own tokens/s (real tokens over all ranks, per second of training), the time an
# epoch of the training reviews takes at that speed and, with two processes, rank 0's share of its
# training time in MPI collectives: waiting at each step's end for the other rank, and summing the
# gradients (what overlapping communication with the backward pass could hide at most). A fourth layout
# is the ceiling for 2 × 1: two separate 1 × 1 trainings at once, sharing nothing but the machine (their
# tokens/s added) — what two processes reach with no communication at all, which on a 2-core machine is
# less than twice one process (shared caches, memory bandwidth and clock). The layouts alternate within
# each round, so a change of machine speed touches them alike; the table gives the median over the
# rounds, and the lines after it each round's ratios (2 × 1 to its ceiling, and both to 1 × 1).
#
# --steps is the wide model's step count; the default model, whose step is about five times shorter,
# takes five times as many, so that its runs last as long: with 50 steps, as many as the wide model's, its
# runs were short and its 2 × 1 ÷ 1 × 1 spread more between rounds (docs/distributed.md, "History").
#
#   bench/distributed-sentiment.sh [--steps 30] [--rounds 2] [--data data/aclImdb] [-- TRAIN OPTIONS]
#
# Options after -- go to every run of `minigrad-sentiment train` (e.g. -- --dense-embeddings).
set -euo pipefail
cd "$(dirname "$0")/.."
steps=30 rounds=2 data=data/aclImdb
while [ $# -gt 0 ]; do
  case $1 in
    --steps) steps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
for number in "$steps" "$rounds"; do
  [[ $number =~ ^[1-9][0-9]*$ ]] || { echo "--steps and --rounds need whole numbers >= 1, got $number" >&2; exit 2; }
done
bin=build/release/examples/minigrad-sentiment
[ -x "$bin" ] || { echo "build first: cmake --build build/release" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -A models=([default]="" [wide]="--hiddens 128 --heads 4 --ffn 512 --layers 2")
declare -A model_steps=([default]=$((5 * steps)) [wide]=$steps)
declare -A layouts=([1x1]="env MINIGRAD_NUM_THREADS=1" [1x2]="env MINIGRAD_NUM_THREADS=2"
  [2x1]="mpiexec --allow-run-as-root --oversubscribe -np 2 -x MINIGRAD_NUM_THREADS=1")
# shellcheck source=bench/machine.sh
source bench/machine.sh
echo "machine: $(describe_machine); ${model_steps[default]} steps per run of the default model, $steps of the wide one, $rounds round(s)${*:+; train options: $*}"
declare -A results
for round in $(seq 1 "$rounds"); do
  for model in default wide; do
    for layout in 1x1 1x2 2x1 apart; do
      if [ $layout = apart ]; then
        # shellcheck disable=SC2086
        for k in 1 2; do
          env MINIGRAD_NUM_THREADS=1 "$bin" train --data "$data" --out "$out/$model-apart-$k" --overwrite --no-eval \
            --max-steps "${model_steps[$model]}" ${models[$model]} "$@" > "$out/apart-$k.log" 2>&1 &
        done
        wait
        line="$(grep -hE "^trained [0-9]+ steps" "$out"/apart-[12].log | tr '\n' ' ')"
        tps=$(grep -oE "[0-9]+ tokens/s" <<<"$line" | awk '{s += $1} END {print s}')
      else
        # shellcheck disable=SC2086
        line=$(${layouts[$layout]} "$bin" train --data "$data" --out "$out/$model-$layout" --overwrite --no-eval \
          --max-steps "${model_steps[$model]}" ${models[$model]} "$@" 2>&1 | grep -E "^trained [0-9]+ steps")
        tps=$(sed -E 's/.* s: ([0-9]+) tokens\/s.*/\1/' <<<"$line")
      fi
      share=$(grep -oE "[0-9.]+% of rank 0's training time" <<<"$line" | cut -d% -f1 || true)
      waiting=$(grep -oE "[0-9.]+% waiting" <<<"$line" | cut -d% -f1 || true)
      results[$model,$layout]+="$tps ${share:--} ${waiting:--} ;"
      epoch_tokens=$(grep -oE "an epoch, [0-9]+ tokens" <<<"$line" | head -1 | grep -oE "[0-9]+")
      echo "round $round  $model  $layout: $line"
    done
  done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# A model's tokens/s in one layout, a line per round, in round order.
tokens_per_round() { tr ';' '\n' <<<"${results[$1,$2]}" | awk 'NF {print $1}'; }
echo
# The time an epoch takes (its real tokens at the median speed): the same training reviews in every run.
echo "an epoch: $epoch_tokens real tokens; each cell: tokens/s, and the time an epoch takes at that speed"
echo "| model | 1 process × 1 thread | 1 process × 2 threads | 2 processes × 1 thread | two 1×1 apart (the ceiling) | 2×1 ÷ 1×1 | 1×2 ÷ 1×1 | apart ÷ 1×1 | rank 0's time in collectives (2×1): all, waiting, summing |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
ratio() { awk "BEGIN {printf \"%.2f\", $1 / $2}"; }
cell() { awk "BEGIN {printf \"%d tokens/s, %.1f s/epoch\", $1, $epoch_tokens / $1}"; }
for model in default wide; do
  declare -A med
  for layout in 1x1 1x2 2x1 apart; do
    med[$layout]=$(tokens_per_round "$model" "$layout" | median)
  done
  # The 2 × 1 run with the median tokens/s (the lower middle one of an even count) gives the
  # collectives' shares, so that they add up.
  read -r _ share waiting < <(tr ';' '\n' <<<"${results[$model,2x1]}" | grep -v '^ *$' | sort -n | sed -n "$(((rounds + 1) / 2))p")
  summing=$(awk "BEGIN {printf \"%.2f\", $share - $waiting}")
  echo "| $model | $(cell "${med[1x1]}") | $(cell "${med[1x2]}") | $(cell "${med[2x1]}") | $(cell "${med[apart]}") |" \
    "$(ratio "${med[2x1]}" "${med[1x1]}") | $(ratio "${med[1x2]}" "${med[1x1]}") | $(ratio "${med[apart]}" "${med[1x1]}") | $share%, $waiting%, $summing% |"
done
# Round by round: within a round the layouts ran minutes apart at most, so these ratios move less with
# the machine than the medians above do.
echo
for model in default wide; do
  declare -A per_round
  for layout in 1x1 2x1 apart; do
    per_round[$layout]=$(tokens_per_round "$model" "$layout" | paste -sd' ')
  done
  awk -v model="$model" -v one="${per_round[1x1]}" -v two="${per_round[2x1]}" -v apart="${per_round[apart]}" 'BEGIN {
    n = split(one, o, " "); split(two, t, " "); split(apart, a, " ")
    for (i = 1; i <= n; ++i) {
      ceiling = ceiling (i > 1 ? ", " : "") sprintf("%.1f%%", 100 * t[i] / a[i])
      speedup = speedup (i > 1 ? ", " : "") sprintf("%.2f", t[i] / o[i])
      apart_ratio = apart_ratio (i > 1 ? ", " : "") sprintf("%.2f", a[i] / o[i])
    }
    printf "%s, round by round: 2×1 ÷ ceiling %s; 2×1 ÷ 1×1 %s; ceiling ÷ 1×1 %s\n", model, ceiling, speedup, apart_ratio
  }'
done
