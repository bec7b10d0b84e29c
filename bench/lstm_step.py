#!/usr/bin/python3
"""The time of an LSTM layer's forward and backward in PyTorch (nn.LSTM): the same shapes and
measurement as bench/lstm_step.cpp (minigrad-lstm-step), which bench/lstm-vs-pytorch.sh runs beside it.
One call is zero_grad + forward + backward of sum(output * v). Prints one line:

  result impl=pytorch config=small threads=1 ... ms=...
"""
import argparse
import time

import torch

CONFIGS = {  # as in bench/lstm_step.cpp
    'small': dict(seq=32, batch=16, input=32, hidden=32, layers=1, bidirectional=False),
    'd2l': dict(seq=500, batch=64, input=100, hidden=100, layers=1, bidirectional=True),
}


def seconds_per_call(f, batch_seconds, batches):
    """bench/timing.h's seconds_per_call: batches of about batch_seconds, the median batch's average."""
    f()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        t = time.perf_counter() - t0
        if t >= batch_seconds / 4:
            reps = max(1, int(reps * batch_seconds / max(t, 1e-9)))
            break
        reps *= 4
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        per_call.append((time.perf_counter() - t0) / reps)
    return sorted(per_call)[len(per_call) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--config', default='small', choices=CONFIGS)
    parser.add_argument('--threads', type=int, default=0)
    parser.add_argument('--seconds', type=float, default=2)
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    c = CONFIGS[args.config]
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(c['input'], c['hidden'], c['layers'], bidirectional=c['bidirectional'])
    x = torch.randn(c['seq'], c['batch'], c['input'], requires_grad=True)
    directions = 2 if c['bidirectional'] else 1
    v = torch.randn(c['seq'], c['batch'], directions * c['hidden'])

    def step():
        lstm.zero_grad(set_to_none=True)
        x.grad = None
        (lstm(x)[0] * v).sum().backward()

    s = seconds_per_call(step, args.seconds / 5, 5)
    print(f"result impl=pytorch config={args.config} threads={torch.get_num_threads()} seq={c['seq']} "
          f"batch={c['batch']} input={c['input']} hidden={c['hidden']} layers={c['layers']} "
          f"directions={directions} ms={s * 1e3:.3f}")


if __name__ == '__main__':
    main()
