#!/usr/bin/env bash
# The main job: train the Transformer-encoder sentiment classifier on the IMDB Large Movie Review Dataset
# from scratch (a validation run, then the final model on all training reviews), evaluate it on the
# 25,000 test reviews and on the UCI sentence files, and print the accuracies.
#
#   scripts/train-sentiment.sh                              # the default configuration
#   scripts/train-sentiment.sh --dataset ~/aclImdb_v1.tar.gz # the dataset from elsewhere
#   scripts/train-sentiment.sh --epochs 5 --layers 2        # other options go to `minigrad-sentiment train`
#   scripts/train-sentiment.sh --processes 2                # 2 MPI processes, data-parallel
#   scripts/train-sentiment.sh --members 1                  # one model instead of an ensemble of three
#   scripts/train-sentiment.sh --validation-only            # only the validation run: the test split unread
#   scripts/train-sentiment.sh --final-only --seed 1        # only the final model and its test figure
#
# The model is an ensemble of --members models (default 3) of the same configuration, trained with seeds
# N·S, N·S + 1, ..., N·S + N - 1 for --seed S (default 0), whose log-odds are averaged; each is saved in
# out/sentiment/K (K = 0 .. N - 1), and `minigrad-sentiment eval --model out/sentiment` reads them all.
#
# Training runs in one process with a thread per core. --processes N trains data-parallel in N MPI
# processes (distributed/), each with its share of the cores: on this project's 2-core machine as fast as
# one process with two threads for the default model (README, "Training on several processes and
# machines"), so it is not the default.
#
# The dataset is looked for, in order: --dataset PATH or $MINIGRAD_IMDB (the official aclImdb_v1.tar.gz,
# or an extracted aclImdb folder); ../shared/data/aclImdb_v1.tar.gz beside this repository; a download of
# the official tarball (where the network allows). It is extracted once into data/aclImdb (git-ignored).
set -euo pipefail
if [ "${1:-}" = "--dataset" ]; then
  [ $# -ge 2 ] || { echo "error: --dataset needs a path" >&2; exit 1; }
  MINIGRAD_IMDB=$(realpath "$2")
  shift 2
fi
processes=1
members=3
seed=0
validation_only=false
final_only=false
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --processes)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "error: --processes needs a whole number >= 1" >&2; exit 1; }
      processes=$2
      shift 2
      ;;
    --members)
      [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "error: --members needs a whole number >= 1" >&2; exit 1; }
      members=$2
      shift 2
      ;;
    --validation-only)
      validation_only=true
      shift
      ;;
    --final-only)
      final_only=true
      shift
      ;;
    --seed)
      [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "error: --seed needs a whole number >= 0" >&2; exit 1; }
      seed=$2
      shift 2
      ;;
    *) args+=("$1"); shift ;;
  esac
done
$validation_only && $final_only && { echo "error: --validation-only and --final-only exclude each other" >&2; exit 1; }
set -- ${args[@]+"${args[@]}"}
cd "$(dirname "$0")/.."
scripts/install-deps.sh

official_url="https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
target=data/aclImdb

fail() {
  echo "error: $*" >&2
  exit 1
}

# Extracts a tarball into data/, through a temporary folder so that an interrupted run leaves nothing
# half-extracted behind. The unlabelled reviews (train/unsup) are not used and not extracted.
extract() {
  local tarball=$1
  echo "extracting $tarball into $target (once)"
  rm -rf data/.extracting && mkdir -p data/.extracting
  tar -xzf "$tarball" -C data/.extracting --exclude='aclImdb/train/unsup' ||
    fail "$tarball could not be extracted; is it the official aclImdb_v1.tar.gz?"
  [ -d data/.extracting/aclImdb/train/pos ] && [ -d data/.extracting/aclImdb/test/neg ] ||
    fail "$tarball does not hold the aclImdb layout (aclImdb/{train,test}/{pos,neg})"
  rm -rf "$target" && mv data/.extracting/aclImdb "$target" && rm -rf data/.extracting
}

if [ -d "$target/train/pos" ] && [ -d "$target/test/neg" ]; then
  :  # extracted by an earlier run
elif [ -n "${MINIGRAD_IMDB:-}" ]; then
  if [ -d "$MINIGRAD_IMDB" ]; then
    [ -d "$MINIGRAD_IMDB/train/pos" ] || fail "MINIGRAD_IMDB=$MINIGRAD_IMDB has no train/pos folder"
    mkdir -p data && ln -sfn "$(cd "$MINIGRAD_IMDB" && pwd)" "$target"
  elif [ -f "$MINIGRAD_IMDB" ]; then
    extract "$MINIGRAD_IMDB"
  else
    fail "MINIGRAD_IMDB=$MINIGRAD_IMDB is neither a file nor a folder"
  fi
elif [ -f ../shared/data/aclImdb_v1.tar.gz ]; then
  extract ../shared/data/aclImdb_v1.tar.gz
else
  echo "the IMDB dataset is not here; trying to download $official_url"
  mkdir -p data
  if (command -v curl >/dev/null && curl -fL --retry 2 -o data/aclImdb_v1.tar.gz.part "$official_url") ||
     (command -v wget >/dev/null && wget -q -O data/aclImdb_v1.tar.gz.part "$official_url"); then
    mv data/aclImdb_v1.tar.gz.part data/aclImdb_v1.tar.gz
    extract data/aclImdb_v1.tar.gz
  else
    rm -f data/aclImdb_v1.tar.gz.part
    fail "could not find or download the IMDB dataset.
  Put the official aclImdb_v1.tar.gz at ../shared/data/aclImdb_v1.tar.gz, or point MINIGRAD_IMDB at it
  (or at an extracted aclImdb folder): MINIGRAD_IMDB=/path/to/aclImdb_v1.tar.gz $0"
  fi
fi

source scripts/openblas-env.sh
cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/release -j "$(nproc)" --target minigrad-sentiment
program=build/release/examples/minigrad-sentiment
# Several processes: mpiexec, where the program was built with the MPI layer (it links libmpi).
launch=()
if [ "$processes" -gt 1 ]; then
  if ! command -v mpiexec > /dev/null || ! ldd "$program" | grep -q libmpi; then
    fail "--processes $processes needs MPI (Debian's libopenmpi-dev and openmpi-bin; scripts/install-deps.sh
  installs them) and a build that found it; --processes 1 trains in one process"
  fi
  launch=(mpiexec -np "$processes")
  [ "$(id -u)" -eq 0 ] && launch+=(--allow-run-as-root)
  [ "$processes" -gt "$(nproc)" ] && launch+=(--oversubscribe)
fi

# Two stages with the same options. The first trains each member on 22,500 reviews and reports, per
# epoch, its accuracy on the 2,500 held out (blocks of 100 neighbouring reviews of a label, whose texts
# are left out of training; options are chosen on these figures, examples/sentiment/extras/select-options.sh), then the
# ensemble's; --validation-only stops there. The second, the model this job is for, trains each member from
# scratch on all 25,000; the ensemble is evaluated once on the test set: a ninth more data is worth more
# than the check it would buy (docs/sentiment.md, "The validation split").
# An explicit --validation or --resume is one run of one model, as given.
single_run=false
for arg in "$@"; do
  case $arg in --validation | --validation=* | --resume | --resume=*) single_run=true ;; esac
done
member_seed() { echo $((seed * members + $1)); }
if $single_run; then
  ${launch[@]+"${launch[@]}"} "$program" train --data "$target" --out out/sentiment --overwrite --seed "$seed" "$@"
else
  rm -rf out/sentiment  # an ensemble's folder: no member of another run left in it
  if ! $final_only; then
    rm -rf out/sentiment-validation
    echo "== 1 of 2: the validation run (2,500 training reviews held out), $members member(s) =="
    for k in $(seq 0 $((members - 1))); do
      echo "-- member $k (seed $(member_seed "$k"))"
      ${launch[@]+"${launch[@]}"} "$program" train --data "$target" --out "out/sentiment-validation/$k" \
        --plot "out/sentiment-validation-training-$k.png" --no-eval --seed "$(member_seed "$k")" "$@"
    done
    [ "$members" -gt 1 ] && "$program" eval --model out/sentiment-validation --data "$target" --held-out
    $validation_only && exit 0
  fi
  echo "== 2 of 2: the final model (all training reviews), evaluated on the test set =="
  for k in $(seq 0 $((members - 1))); do
    echo "-- member $k (seed $(member_seed "$k"))"
    ${launch[@]+"${launch[@]}"} "$program" train --data "$target" --out "out/sentiment/$k" --validation 0 \
      --no-eval --seed "$(member_seed "$k")" "$@"
  done
  "$program" eval --model out/sentiment --data "$target"
fi

# Out of domain: short product, restaurant and movie sentences (UCI Sentiment Labelled Sentences).
sentences=${MINIGRAD_SENTENCES:-../shared/data/sentiment_sentences}
if compgen -G "$sentences/*_labelled.txt" > /dev/null; then
  echo "out-of-domain accuracy (UCI Sentiment Labelled Sentences):"
  tsv_args=()
  for f in "$sentences"/*_labelled.txt; do tsv_args+=(--tsv "$f"); done
  "$program" eval --model out/sentiment "${tsv_args[@]}"
else
  echo "(no UCI sentence files at $sentences; set MINIGRAD_SENTENCES to evaluate on them)"
fi
