#!/usr/bin/python3
"""The time of one training step of the Fashion-MNIST CNN in PyTorch: the same network and measurement as
bench/cnn_step.cpp (minigrad-cnn-step), which bench/cnn-vs-pytorch.sh runs beside it. One call is
zero_grad + forward (training mode) + backward + an AdamW step on one fixed batch. Prints one line:

  result impl=pytorch config=c16 threads=1 ... ms=...
"""
import torch
from torch import nn

from step_timing import parse_step_args, seconds_per_call

CONFIGS = {  # as in bench/cnn_step.cpp
    'c16': dict(batch=128, channels1=16, channels2=64, hidden=256),
    'c32': dict(batch=128, channels1=32, channels2=64, hidden=256),
}


def main():
    args = parse_step_args(__doc__, CONFIGS, 'c16')
    c = CONFIGS[args.config]
    c1, c2 = c['channels1'], c['channels2']
    model = nn.Sequential(
        nn.Conv2d(1, c1, 3, padding=1, bias=False), nn.BatchNorm2d(c1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(c1, c2, 3, padding=1, bias=False), nn.BatchNorm2d(c2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(c2 * 49, c['hidden']), nn.ReLU(), nn.Dropout(0.3), nn.Linear(c['hidden'], 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
    model.train()
    x = torch.randn(c['batch'], 1, 28, 28)
    y = torch.randint(0, 10, (c['batch'],))

    def step():
        optimizer.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    s = seconds_per_call(step, args.seconds / 5, 5)
    print(f"result impl=pytorch config={args.config} threads={torch.get_num_threads()} batch={c['batch']} "
          f"channels={c1},{c2} hidden={c['hidden']} ms={s * 1e3:.3f}")


if __name__ == '__main__':
    main()
