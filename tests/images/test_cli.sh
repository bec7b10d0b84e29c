#!/usr/bin/env bash
# minigrad-fashion-mnist from the outside, as a user runs it, on a tiny made-up dataset in Fashion-MNIST's
# format (class k: a bright band at rows 2k..2k+5, plus noise), so that it needs no download: it trains,
# writes the model folder and the plots, and learns the bands; export and predict name the class of an
# image; a bad or missing file gets an error naming it, and nothing is written.
#
#   tests/images/test_cli.sh build/release/examples/minigrad-fashion-mnist
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/cli_checks.sh
source "$(dirname "$0")/../cli_checks.sh"

/usr/bin/python3 - "$tmp/data" <<'PY'
import gzip, os, random, struct, sys
out = sys.argv[1]
os.makedirs(out)
rng = random.Random(0)
def write(prefix, count):
    labels = [i % 10 for i in range(count)]
    pixels = bytearray()
    for k in labels:
        for r in range(28):
            for c in range(28):
                band = 2 * k <= r < 2 * k + 6
                pixels.append(min(255, (200 if band else 0) + rng.randrange(40)))
    with gzip.open(f'{out}/{prefix}-images-idx3-ubyte.gz', 'wb') as f:
        f.write(struct.pack('>IIII', 0x803, count, 28, 28) + bytes(pixels))
    with gzip.open(f'{out}/{prefix}-labels-idx1-ubyte.gz', 'wb') as f:
        f.write(struct.pack('>II', 0x801, count) + bytes(labels))
write('train', 600)
write('t10k', 100)
PY
export MINIGRAD_NUM_THREADS=1

# Training: per-epoch lines, the folder, the plots, and the bands learnt (the test split, once, at the end).
out=$("$bin" train --data "$tmp/data" --out "$tmp/model" --plots "$tmp/plots" --epochs 3 --validation 100 \
  --batch-size 50 2>&1)
status=$?
[ $status -eq 0 ] && ok || bad "train exited $status: $out"
grep -q "^\[.*\] epoch 3: training loss [0-9.]*, accuracy [0-9.]*; validation loss" <<<"$out" && ok ||
  bad "no line for epoch 3: $out"
for f in "$tmp/model/config.json" "$tmp/model/model.safetensors" "$tmp/plots/loss.png" "$tmp/plots/accuracy.png"; do
  [ -s "$f" ] && ok || bad "$f was not written"
done
accuracy=$(sed -n 's/^test accuracy \([0-9.]*\) .*/\1/p' <<<"$out")
awk -v a="${accuracy:-0}" 'BEGIN { exit !(a >= 0.95) }' && ok || bad "test accuracy ${accuracy:-missing} < 0.95: $out"

# With nothing held out, the epoch lines report training figures alone, and --no-test leaves the test split.
out=$("$bin" train --data "$tmp/data" --out "$tmp/all" --epochs 1 --validation 0 --batch-size 50 --no-test 2>&1)
grep -q "^\[.*\] epoch 1: training loss [0-9.]*, accuracy [0-9.]*$" <<<"$out" && ok ||
  bad "epoch 1 of --validation 0 is not training figures alone: $out"
grep -q "test accuracy" <<<"$out" && bad "--no-test evaluated the test split: $out" || ok

# export writes test image 3 (class 3, "Dress"); predict names it.
out=$("$bin" export --data "$tmp/data" --index 3 --out "$tmp/three.pgm" 2>&1)
grep -qF "test image 3 (Dress) written to $tmp/three.pgm" <<<"$out" && ok || bad "export: $out"
out=$("$bin" predict --model "$tmp/model" "$tmp/three.pgm" 2>&1)
grep -q "^$tmp/three.pgm: Dress ([0-9.]*%)$" <<<"$out" && ok || bad "predict: $out"

# Bad input: named, and nothing written.
printf 'P5\n27 28\n255\n' >"$tmp/small.pgm"
head -c $((27 * 28)) /dev/zero >>"$tmp/small.pgm"
expect_failure "predict on a 27-wide image" "$tmp/small.pgm: the model reads 28×28 images, this one is 27×28" \
  "$bin" predict --model "$tmp/model" "$tmp/small.pgm"
printf 'not an image' >"$tmp/text.pgm"
expect_failure "predict on a text file" "$tmp/text.pgm: not a PGM image" "$bin" predict --model "$tmp/model" "$tmp/text.pgm"
expect_failure "predict without a model" "$tmp/nothing/config.json" "$bin" predict --model "$tmp/nothing" "$tmp/three.pgm"
mkdir "$tmp/cut"
cp "$tmp"/data/* "$tmp/cut/"
head -c 1000 "$tmp/data/train-images-idx3-ubyte.gz" >"$tmp/cut/train-images-idx3-ubyte.gz"
expect_failure "a truncated training file" "$tmp/cut/train-images-idx3-ubyte.gz" \
  "$bin" train --data "$tmp/cut" --out "$tmp/never" --epochs 1
expect_failure "no data" "$tmp/none/train-images-idx3-ubyte.gz" "$bin" train --data "$tmp/none" --out "$tmp/never" --epochs 1
[ ! -e "$tmp/never" ] && ok || bad "a failed run wrote $tmp/never"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
