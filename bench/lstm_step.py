#!/usr/bin/python3
"""The time of an LSTM layer's forward and backward in PyTorch (nn.LSTM): the same shapes and
measurement as bench/lstm_step.cpp (minigrad-lstm-step), which bench/lstm-vs-pytorch.sh runs beside it.
One call is zero_grad + forward + backward of sum(output * v). Prints one line:

  result impl=pytorch config=small threads=1 ... ms=...
"""
import torch

from step_timing import parse_step_args, seconds_per_call

CONFIGS = {  # as in bench/lstm_step.cpp
    'small': dict(seq=32, batch=16, input=32, hidden=32, layers=1, bidirectional=False),
    'd2l': dict(seq=500, batch=64, input=100, hidden=100, layers=1, bidirectional=True),
}


def main():
    args = parse_step_args(__doc__, CONFIGS, 'small')
    c = CONFIGS[args.config]
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
