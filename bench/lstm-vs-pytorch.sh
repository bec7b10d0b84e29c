#!/usr/bin/env bash
# An LSTM layer's forward and backward, minigrad (bench/lstm_step.cpp, minigrad-lstm-step) against
# PyTorch's nn.LSTM (bench/lstm_step.py) on the same shapes:
#
#   small (seq 32, batch 16, input 32, hidden 32, 1 layer)
#   d2l   (seq 500, batch 64, input 100, hidden 100, 1 bidirectional layer: one layer of d2l's BiRNN)
#
#   bench/lstm-vs-pytorch.sh [--rounds 3] [--threads "1 2"] [--configs "small d2l"] [--seconds 2]
#                            [--bin path/to/minigrad-lstm-step]
#
# The runs alternate and the table gives medians over the rounds (bench/versus-pytorch.sh).
# On a shared machine, run it as  flock /tmp/minigrad-cpu.lock bench/lstm-vs-pytorch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/versus-pytorch.sh
source bench/versus-pytorch.sh
versus_pytorch "An LSTM layer's forward and backward" build/release/bench/minigrad-lstm-step bench/lstm_step.py "small d2l" "$@"
