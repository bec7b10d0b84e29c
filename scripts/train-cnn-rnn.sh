#!/usr/bin/env bash
# d2l's TextCNN and BiRNN on IMDB from scratch, beside the Transformer (docs/sentiment.md, "Convolution
# and recurrence"): for each model and seed, a model trained on all 25,000 training reviews with the
# options chosen on validation (minigrad-sentiment-cnn-rnn's defaults), evaluated once on the test set.
# Prints each run's summary and a table of the test accuracies, training times and tokens per second.
#
#   scripts/train-cnn-rnn.sh                                 # textcnn and birnn, seeds 0 1 2
#   scripts/train-cnn-rnn.sh --models birnn --seeds "0"      # one run
#   scripts/train-cnn-rnn.sh --validation                    # on the 2,500 held-out reviews instead
#
# The data is data/aclImdb, extracted by scripts/train-sentiment.sh (or MINIGRAD_IMDB, an extracted folder).
# It holds no lock itself: on a shared machine, run it as  flock /tmp/minigrad-cpu.lock scripts/train-cnn-rnn.sh
set -euo pipefail
cd "$(dirname "$0")/.."
models="textcnn birnn" seeds="0 1 2" split=(--validation 0 --test)
while [ $# -gt 0 ]; do
  case $1 in
    --models) models=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --validation) split=(); shift ;;
    -h | --help) sed -n '/^#   scripts/,/^# The data/p' "$0" | sed 's/^# //'; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
data=${MINIGRAD_IMDB:-data/aclImdb}
[ -d "$data/train/pos" ] || { echo "error: no IMDB data at $data: run scripts/train-sentiment.sh once, or set MINIGRAD_IMDB" >&2; exit 1; }
[ -f build/release/CMakeCache.txt ] || cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/release -j2 --target minigrad-sentiment-cnn-rnn >/dev/null
program=build/release/examples/minigrad-sentiment-cnn-rnn

# shellcheck source=bench/machine.sh
source bench/machine.sh
echo "machine: $(describe_machine)"
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for model in $models; do
  for seed in $seeds; do
    echo "== $model, seed $seed =="
    # Every line shown as it comes; the summary line also kept for the table.
    "$program" --model "$model" --seed "$seed" --data "$data" ${split[@]+"${split[@]}"} |
      while IFS= read -r line; do
        echo "$line"
        [[ $line == result* ]] && echo "$line" >>"$results"
      done
  done
done

field() { sed -nE "s/.* $1=([^ ]*).*/\1/p" <<<"$2"; }
key=test_accuracy
[ ${#split[@]} -eq 0 ] && key=validation_accuracy
echo
echo "| model | seed | $key | training s | tokens/s |"
echo "| --- | ---: | ---: | ---: | ---: |"
while read -r line; do
  echo "| $(field model "$line") | $(field seed "$line") | $(field $key "$line") | $(field train_seconds "$line") | $(field tokens_per_s "$line") |"
done <"$results"
for model in $models; do
  grep " model=$model " "$results" | sed -nE "s/.* $key=([^ ]*).*/\1/p" |
    awk -v m="$model" '{ s += $1; n++ } END { if (n) printf "%s: mean %.4f over %d seed(s)\n", m, s / n, n }'
done
