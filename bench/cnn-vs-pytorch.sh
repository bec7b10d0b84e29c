#!/usr/bin/env bash
# One training step of the Fashion-MNIST example's CNN, minigrad (bench/cnn_step.cpp, minigrad-cnn-step)
# against the same network in PyTorch (bench/cnn_step.py): batch 128 of 28×28 images, two blocks of 3×3
# convolution, batch norm, ReLU and 2×2 max pooling, a hidden layer, cross-entropy and an AdamW step.
#
#   c16  the example's network: 16 then 64 channels
#   c32  32 then 64 channels
#
#   bench/cnn-vs-pytorch.sh [--rounds 3] [--threads "1 2"] [--configs "c16 c32"] [--seconds 2]
#                           [--bin path/to/minigrad-cnn-step]
#
# The runs alternate and the table gives medians over the rounds (bench/versus-pytorch.sh).
# On a shared machine, run it as  flock /tmp/minigrad-cpu.lock bench/cnn-vs-pytorch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/versus-pytorch.sh
source bench/versus-pytorch.sh
versus_pytorch "One training step of the Fashion-MNIST CNN" build/release/bench/minigrad-cnn-step bench/cnn_step.py "c16 c32" "$@"
