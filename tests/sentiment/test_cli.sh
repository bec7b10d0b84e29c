#!/usr/bin/env bash
# minigrad-sentiment from the outside, as a user runs it: bad options and paths fail before any work
# with a clear message and write nothing; a second run into the same folder is refused; and a training
# killed with SIGKILL at random moments, many of them during saves, always leaves a checkpoint that loads.
#
#   tests/sentiment/test_cli.sh build/release/examples/minigrad-sentiment
set -u
bin=$1
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli_checks.sh
source "$(dirname "$0")/../cli_checks.sh"

# A tiny dataset in the aclImdb layout: "great" reviews are positive, "awful" ones negative.
words=(the movie plot actor scene was a and it story)
for split in train test; do
  for label in pos neg; do
    mkdir -p "$tmp/imdb/$split/$label"
    for i in $(seq 0 39); do
      text=""
      for j in 1 2 3 4 5 6 7 8; do text+="${words[$(((i * 7 + j * 3) % 10))]} "; done
      [ $label = pos ] && text+="great great" || text+="awful awful"
      text+=" r$i"  # each text its own: training leaves out copies of held-out texts
      echo "$text" >"$tmp/imdb/$split/$label/${i}_5.txt"
    done
  done
done
printf 'a great film\t1\nawful, awful\t0\n' >"$tmp/sentences.tsv"
: >"$tmp/empty.tsv"
touch "$tmp/file"
export MINIGRAD_NUM_THREADS=1
small=(--hiddens 16 --heads 2 --ffn 32 --batch-size 16 --ngram-buckets 64 --validation 8)

# --out that cannot be written: found before the data is read (the data folder does not even exist).
expect_failure "unwritable --out" "cannot create the folder $tmp/file" \
  "$bin" train --data "$tmp/missing" --out "$tmp/file/out" "${small[@]}"
# Zero examples to train on: an error, and nothing written.
expect_failure "--train-limit 0" "no training reviews (--train-limit 0): nothing to train on, nothing written" \
  "$bin" train --data "$tmp/imdb" --out "$tmp/out0" --train-limit 0 "${small[@]}"
[ -e "$tmp/out0" ] && bad "--train-limit 0 wrote $tmp/out0" || ok
mkdir -p "$tmp/empty/train/pos" "$tmp/empty/train/neg"
expect_failure "empty training folders" "no training reviews in $tmp/empty/train" \
  "$bin" train --data "$tmp/empty" --out "$tmp/out1" --no-eval "${small[@]}"
[ -e "$tmp/out1" ] && bad "an empty data folder wrote $tmp/out1" || ok
# Out-of-range numbers are refused by the option parser.
expect_failure "--dropout 2" "--dropout: Value 2 not in range" "$bin" train --dropout 2

# More reviews held out for validation than a label has: refused, naming the option.
expect_failure "--validation 80" "cannot hold 80 reviews out for validation: 40 are negative (use a smaller --validation)" \
  "$bin" train --data "$tmp/imdb" --out "$tmp/out2" --hiddens 16 --heads 2 --ffn 32 --validation 80 --no-eval
[ -e "$tmp/out2" ] && bad "--validation 80 wrote $tmp/out2" || ok
# A plot that cannot be written: refused before the data is read.
expect_failure "unwritable --plot" "train --plot: cannot create the folder $tmp/file" \
  "$bin" train --data "$tmp/missing" --out "$tmp/out3" "${small[@]}" --plot "$tmp/file/curves.png"

# A max_len that is not a multiple of 16 trains (it used to overrun the positional-encoding table); with
# reviews held out, each epoch reports its validation accuracy and the curves are drawn.
if "$bin" train --data "$tmp/imdb" --out "$tmp/model" "${small[@]}" --max-len 20 --epochs 2 --no-eval \
  >"$tmp/log" 2>&1 && grep -q "training on 72 reviews (8 held out for validation)" "$tmp/log" &&
  [ "$(grep -c "validation loss" "$tmp/log")" = 2 ] && [ -s "$tmp/model-training.png" ]; then
  ok
else
  bad "--max-len 20: $(cat "$tmp/log")"
fi

# Evaluation of zero examples: an error, not "accuracy 0".
expect_failure "eval of an empty file" "eval: no examples to evaluate in $tmp/empty.tsv" \
  "$bin" eval --model "$tmp/model" --tsv "$tmp/empty.tsv"
# A heatmap that cannot be written: refused before the model is read, and nothing left behind.
expect_failure "unwritable --heatmap" "predict --heatmap: cannot create the folder $tmp/file" \
  "$bin" predict --model "$tmp/model" "a great film" --heatmap "$tmp/file/attention.png"
expect_failure "--heatmap --layer 5" "--layer must be below 1 and --head below 2" \
  "$bin" predict --model "$tmp/model" "a great film" --heatmap "$tmp/attention.png" --layer 5
if "$bin" predict --model "$tmp/model" "a great film" --heatmap "$tmp/attention.png" >/dev/null 2>&1 &&
  [ -s "$tmp/attention.png" ]; then ok; else bad "predict --heatmap did not write a picture"; fi
# An ensemble: a folder of members 0, 1, ... (the main job's layout) is read whole by eval and predict.
# Two copies of one model average to that model: the same accuracy and loss on the reviews its
# validation run held out (--held-out), and the same P(positive).
mkdir -p "$tmp/ensemble" && cp -r "$tmp/model" "$tmp/ensemble/0" && cp -r "$tmp/model" "$tmp/ensemble/1"
one=$("$bin" eval --model "$tmp/model" --data "$tmp/imdb" --held-out 2>&1 | grep "IMDB held out" |
  sed -E 's/, [0-9.]+ s\)$//')
two=$("$bin" eval --model "$tmp/ensemble" --data "$tmp/imdb" --held-out 2>&1)
if grep -q "an ensemble of 2 models" <<<"$two" && grep -q "(8 examples" <<<"$one" && grep -qF "$one" <<<"$two"; then
  ok
else
  bad "eval of an ensemble folder: '$one' against: $two"
fi
# --held-out needs models that held reviews out, the same ones.
# (small's first 10 words: all but its --validation)
"$bin" train --data "$tmp/imdb" --out "$tmp/all" "${small[@]:0:10}" --validation 0 --no-eval >/dev/null 2>&1 ||
  bad "training on all reviews failed"
expect_failure "eval --held-out of a model that held nothing out" \
  "eval --held-out: $tmp/all was trained on every training review: none held out" \
  "$bin" eval --model "$tmp/all" --data "$tmp/imdb" --held-out
expect_failure "eval --held-out of models that held out other reviews" \
  "eval --held-out: $tmp/all held out other reviews than $tmp/model" \
  "$bin" eval --model "$tmp/model" --model "$tmp/all" --data "$tmp/imdb" --held-out
one=$("$bin" predict --model "$tmp/model" "a great film" 2>&1)
two=$("$bin" predict --model "$tmp/ensemble" "a great film" 2>&1)
[ "$two" = "$one, an ensemble of 2 models" ] && ok || bad "predict with an ensemble folder: '$two' against '$one'"
leftovers=$(find "$tmp" -name '*.tmp*' -o -name '.*probe*')
[ -z "$leftovers" ] && ok || bad "temporary files left: $leftovers"

# A folder that already holds a model is replaced only with --overwrite (or continued with --resume).
expect_failure "--out holding a model" \
  "train --out: $tmp/model already holds files (another model?); pass --overwrite to replace it" \
  "$bin" train --data "$tmp/imdb" --out "$tmp/model" "${small[@]}" --no-eval
[ -s "$tmp/model/config.json" ] && ok || bad "the refused run touched $tmp/model"

# Damaged checkpoints: refused with an error that names the file and what is wrong, exit status 1.
damaged() {
  rm -rf "$tmp/bad" && cp -r "$tmp/model" "$tmp/bad"
  python3 -c "$1" "$tmp/bad" || bad "could not damage the copy: $1"
}
expect_refusal() {  # NAME EXPECTED-TEXT: predict and eval both refuse $tmp/bad with exit status 1
  local out status
  for command in "predict --model $tmp/bad a-great-film" "eval --model $tmp/bad --tsv $tmp/sentences.tsv"; do
    # shellcheck disable=SC2086
    out=$("$bin" $command 2>&1)
    status=$?
    if [ $status -ne 1 ]; then
      bad "$1 ($command): exit status $status, not 1: $out"
    elif ! grep -qF -- "$2" <<<"$out"; then
      bad "$1 ($command): expected '$2' in: $out"
    else
      ok
    fi
  done
}
json_edit='import json, sys; f = sys.argv[1] + "/FILE"; j = json.load(open(f)); EDIT; json.dump(j, open(f, "w"))'
edit() { local e=${json_edit//FILE/$1}; echo "${e//EDIT/$2}"; }
damaged "$(edit vocab.json 'j[0] = 7')"
expect_refusal "vocab.json holding a number" "$tmp/bad/vocab.json: token 0 is 7, not a string"
damaged "$(edit vocab.json 'j[3] = j[2]')"
expect_refusal "vocab.json with a token twice" "$tmp/bad/vocab.json: token '"
damaged "$(edit config.json 'j["num_heads"] = 2.7')"
expect_refusal "config.json with a fraction of a head" "$tmp/bad/config.json: 'num_heads' must be a whole number, got 2.7"
# A NaN in the first float32 weight (safetensors: 8-byte header length, the JSON header, the data).
damaged 'import json, struct, sys
f = sys.argv[1] + "/model.safetensors"; b = bytearray(open(f, "rb").read())
n = struct.unpack("<Q", b[:8])[0]; header = json.loads(b[8:8 + n])
start = min(v["data_offsets"][0] for k, v in header.items() if k != "__metadata__" and v["dtype"] == "F32")
b[8 + n + start:8 + n + start + 4] = struct.pack("<f", float("nan")); open(f, "wb").write(b)'
expect_refusal "weights holding a NaN" "holds a NaN or an infinity; the model cannot be used"

# A second run into a folder that another run is writing: refused at once.
flock "$tmp/model.lock" sleep 30 &
holder=$!
sleep 0.2
expect_failure "two runs into one --out" "another run is writing to it" \
  "$bin" train --data "$tmp/imdb" --out "$tmp/model" "${small[@]}"
kill $holder 2>/dev/null
wait $holder 2>/dev/null

# Killed at random moments of a training that saves after every step: the checkpoint always loads.
for round in $(seq 1 12); do
  "$bin" train --data "$tmp/imdb" --out "$tmp/model" --overwrite "${small[@]}" --epochs 1000 --checkpoint-every 1 \
    --no-eval >/dev/null 2>&1 &
  pid=$!
  sleep "0.$((RANDOM % 9 + 1))$((RANDOM % 10))"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  if out=$("$bin" eval --model "$tmp/model" --tsv "$tmp/sentences.tsv" 2>&1); then
    ok
  else
    bad "round $round: the checkpoint does not load after kill -9: $out"
  fi
done

echo "cli: $passed passed, $failed failed"
[ $failed -eq 0 ]
