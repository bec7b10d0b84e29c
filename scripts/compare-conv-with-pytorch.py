#!/usr/bin/python3
"""Runs the Conv1d, Conv2d, BatchNorm1d and BatchNorm2d computations that minigrad-conv-reference saved
through PyTorch's layers (Debian's python3-torch, PyTorch 1.13), with the same weights, input and upstream gradient, and prints the largest
difference of the outputs and of every gradient. Exits 1 if any exceeds 1e-10.

  build/release/examples/minigrad-conv-reference --out /tmp/conv
  /usr/bin/python3 scripts/compare-conv-with-pytorch.py /tmp/conv
"""

import torch

from safetensors_f64 import compare_main, load, max_diff


def size(text):
    """'3' -> 3 (Conv1d), '3,2' -> (3, 2) (Conv2d)."""
    parts = tuple(int(p) for p in text.split(','))
    return parts[0] if len(parts) == 1 else parts


def run_batch_norm(t, m):
    """A training step of nn.BatchNorm1d or 2d from minigrad's state before it; the differences of the
    output, the gradients and the running statistics after the step."""
    momentum = None if m['momentum'] == 'None' else float(m['momentum'])
    layer = getattr(torch.nn, m['kind'])(int(m['num_features']), momentum=momentum, affine=m['affine'] == '1',
                                         track_running_stats=m['track_running_stats'] == '1').double()
    layer.load_state_dict({name: t[name].to(value.dtype) for name, value in layer.state_dict().items()})
    layer.train()
    return step_and_compare(layer, t)


def step_and_compare(layer, t):
    """x through the layer with the upstream gradient v; the differences from minigrad's output, every
    gradient and (for a layer with buffers) the buffers after the step."""
    x = t['x'].clone().requires_grad_(True)
    y = layer(x)
    y.backward(t['v'])
    diffs = {'y': max_diff(y, t['y']), 'x.grad': max_diff(x.grad, t['x.grad'])}
    for name, p in layer.named_parameters():
        diffs[f'{name}.grad'] = max_diff(p.grad, t[f'{name}.grad'])
    for name, b in layer.named_buffers():
        diffs[f'{name}.after'] = max_diff(b.double(), t[f'{name}.after'])
    return diffs


def run(path):
    t, m = load(path)
    if m['kind'].startswith('BatchNorm'):
        return run_batch_norm(t, m)
    padding = m['padding'] if m['padding'] == 'same' else size(m['padding'])
    kind = getattr(torch.nn, m.get('kind', 'Conv1d'))
    layer = kind(int(m['in_channels']), int(m['out_channels']), size(m['kernel_size']),
                 stride=size(m['stride']), padding=padding, dilation=size(m['dilation']),
                 groups=int(m['groups']), bias=m['bias'] == '1').double()
    state = {'weight': t['weight']}
    if m['bias'] == '1':
        state['bias'] = t['bias']
    layer.load_state_dict(state)
    return step_and_compare(layer, t)


if __name__ == '__main__':
    compare_main('out/conv-reference', '*.safetensors', 'minigrad-conv-reference', run)
