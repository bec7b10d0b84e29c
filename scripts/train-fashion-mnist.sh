#!/usr/bin/env bash
# Fashion-MNIST from scratch: installs Debian's dataset-fashion-mnist (and what minigrad builds with),
# builds minigrad-fashion-mnist, trains the small CNN of docs/images.md with 5,000 training images held
# out for validation, saves the model folder in out/fashion-mnist and the plots in
# out/fashion-mnist-plots, and prints the test accuracy.
#
#   scripts/train-fashion-mnist.sh                    # the documented configuration, seed 0
#   scripts/train-fashion-mnist.sh --seed 1           # other options go to `minigrad-fashion-mnist train`
#   MINIGRAD_FASHION_MNIST=/path/to/idx/files scripts/train-fashion-mnist.sh
#
# Then: build/release/examples/minigrad-fashion-mnist export --index 0 --out shirt.pgm
#       build/release/examples/minigrad-fashion-mnist predict --model out/fashion-mnist shirt.pgm
set -euo pipefail
cd "$(dirname "$0")/.."
data=${MINIGRAD_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
if [ -z "${MINIGRAD_FASHION_MNIST:-}" ]; then
  scripts/install-deps.sh dataset-fashion-mnist
else
  scripts/install-deps.sh
fi
for f in train-images-idx3-ubyte.gz train-labels-idx1-ubyte.gz t10k-images-idx3-ubyte.gz t10k-labels-idx1-ubyte.gz; do
  [ -f "$data/$f" ] || { echo "error: $data/$f is missing (Debian's dataset-fashion-mnist installs it)" >&2; exit 1; }
done

source scripts/openblas-env.sh
cmake --preset release > /dev/null
cmake --build build/release -j "$(nproc)" --target minigrad-fashion-mnist
program=build/release/examples/minigrad-fashion-mnist
[ -x "$program" ] || { echo "error: $program was not built (configure names what it lacks)" >&2; exit 1; }
time "$program" train --data "$data" --out out/fashion-mnist --plots out/fashion-mnist-plots "$@"
