#!/usr/bin/env bash
# Chooses the sentiment model's options that were once chosen on the test set (docs/history/sentiment.md,
# "Choosing on validation") again, on the validation split alone. For each candidate it runs the first
# stage of scripts/train-sentiment.sh (--validation-only: three members, seeds 0, 1 and 2, each trained
# on the training reviews less the 2,500 held out, then the ensemble on those 2,500) and reads off each
# member's validation accuracy; the test split is never read.
#
# One option at a time, in this order, each search starting from the values chosen before it:
#   1. the token embedding's initial scale, --embedding-std: 0.02, 0.05, 0.1, 1 (PyTorch's default);
#   2. attention heads, --heads: 1, 2, 4 (of 64 dimensions);
#   3. positions: sinusoids, or learned (--learnable-positions).
# The rule, fixed before the runs: the candidate with the highest mean validation accuracy of the three
# members wins; on a tie, the ensemble's accuracy decides, then the value in force before.
#
#   examples/sentiment/extras/select-options.sh            # the search above, a table per option and the choices
#   examples/sentiment/extras/select-options.sh --steps 1  # only the first option's search (--steps 2: the first two)
#
# Each candidate's output is kept in out/selection/ (embedding-std-0.05,heads-2,positions-sinusoids.log
# and so on), and read back instead of run again. About 4 minutes a candidate on 2 cores; 7 candidates
# where the values in force before stay.
set -euo pipefail
cd "$(dirname "$0")/../../.."
steps=3
while [ $# -gt 0 ]; do
  case $1 in
    --steps)
      [[ ${2:-} =~ ^[1-3]$ ]] || { echo "error: --steps takes 1, 2 or 3" >&2; exit 1; }
      steps=$2
      shift 2
      ;;
    *) echo "error: unknown option $1" >&2; exit 1 ;;
  esac
done
mkdir -p out/selection

# The options in force before the search (Config's defaults then; Config now holds its outcome) and the
# candidates of each step.
declare -A chosen=([embedding-std]=0.05 [heads]=2 [positions]=sinusoids)
order=(embedding-std heads positions)
declare -A candidates=([embedding-std]="0.02 0.05 0.1 1" [heads]="1 2 4" [positions]="sinusoids learned")

# The train flags of the chosen values, with option `$1` set to `$2` instead.
flags() {
  local option value
  for option in "${order[@]}"; do
    value=${chosen[$option]}
    [ "$option" = "$1" ] && value=$2
    case $option in
      positions) [ "$value" = learned ] && echo --learnable-positions ;;
      *) echo "--$option $value" ;;
    esac
  done
}

# The chosen values with option `$1` set to `$2`, as a file name: embedding-std-0.05,heads-2,...
name() {
  local option value words=()
  for option in "${order[@]}"; do
    value=${chosen[$option]}
    [ "$option" = "$1" ] && value=$2
    words+=("$option-$value")
  done
  (IFS=,; echo "${words[*]}")
}

# Runs (or reads back, if a finished log exists: a candidate met again in a later step, or a search run
# again) the validation stage for option `$1` = `$2`; prints "mean ensemble member-accuracies..." from
# its log.
evaluate() {
  local log
  log="out/selection/$(name "$1" "$2").log"
  if ! grep -q '^IMDB held out' "$log" 2> /dev/null; then
    # shellcheck disable=SC2046  # flags() prints words to split
    scripts/train-sentiment.sh --validation-only $(flags "$1" "$2") > "$log.part" 2>&1 ||
      { tail -20 "$log.part" >&2; echo "error: the run for --$1 $2 failed (log: $log.part)" >&2; exit 1; }
    mv "$log.part" "$log"
  fi
  awk '/^validation accuracy/ { members[n++] = $3 }
       /^IMDB held out/ { ensemble = $5 }
       END {
         if (n == 0 || ensemble == "") { print "error: no accuracies in the log" > "/dev/stderr"; exit 1 }
         for (i = 0; i < n; ++i) sum += members[i]
         printf "%.6f %s", sum / n, ensemble
         for (i = 0; i < n; ++i) printf " %s", members[i]
         print ""
       }' "$log"
}

pct() { awk -v x="$1" 'BEGIN { printf "%.2f%%", 100 * x }'; }
for ((s = 0; s < steps; ++s)); do
  option=${order[$s]}
  echo
  echo "### --$option (the others: $(flags "$option" "${chosen[$option]}" | grep -v -- "--$option" | tr '\n' ' '))"
  echo
  echo "| $option | member seed 0 | seed 1 | seed 2 | **mean** | ensemble |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: |"
  best=${chosen[$option]} best_mean=-1 best_ensemble=-1
  for value in ${candidates[$option]}; do
    result=$(evaluate "$option" "$value")
    read -r mean ensemble m0 m1 m2 <<< "$result"
    echo "| $value | $(pct "$m0") | $(pct "$m1") | $(pct "$m2") | **$(pct "$mean")** | $(pct "$ensemble") |"
    # 1: better (by the mean, then the ensemble); 2: a full tie, which the value in force before wins.
    verdict=$(awk -v m="$mean" -v e="$ensemble" -v bm="$best_mean" -v be="$best_ensemble" \
      'BEGIN { print (m > bm || (m == bm && e > be)) ? 1 : (m == bm && e == be) ? 2 : 0 }')
    if [ "$verdict" = 1 ] || { [ "$verdict" = 2 ] && [ "$value" = "${chosen[$option]}" ]; }; then
      best=$value best_mean=$mean best_ensemble=$ensemble
    fi
  done
  chosen[$option]=$best
  echo
  echo "chosen: --$option $best"
done
echo
echo "the choices: $(for o in "${order[@]}"; do echo -n "$o ${chosen[$o]}; "; done)"
