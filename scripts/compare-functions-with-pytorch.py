#!/usr/bin/python3
"""Runs the losses, activations and selection ops that minigrad-functions-reference saved through
PyTorch 1.13 (Debian's python3-torch) with the same inputs and upstream gradient, and prints the largest
difference of the output and of every gradient. Exits 1 if any exceeds 1e-10.

  build/release/examples/minigrad-functions-reference --out /tmp/functions
  /usr/bin/python3 scripts/compare-functions-with-pytorch.py /tmp/functions
"""
import sys

import torch
import torch.nn.functional as F

from safetensors_f64 import compare_files, load

# Each case's PyTorch call, on x, the second operand t, and the class targets ids.
CALLS = {
    'mse_loss': lambda x, t, ids: F.mse_loss(x, t),
    'mse_loss_sum': lambda x, t, ids: F.mse_loss(x, t, reduction='sum'),
    'mse_loss_none': lambda x, t, ids: F.mse_loss(x, t, reduction='none'),
    'l1_loss': lambda x, t, ids: F.l1_loss(x, t),
    'smooth_l1_loss_beta0.5_sum': lambda x, t, ids: F.smooth_l1_loss(x, t, reduction='sum', beta=0.5),
    'smooth_l1_loss': lambda x, t, ids: F.smooth_l1_loss(x, t),
    'huber_loss_delta1.5_none': lambda x, t, ids: F.huber_loss(x, t, reduction='none', delta=1.5),
    'nll_loss': lambda x, t, ids: F.nll_loss(x, ids),
    'nll_loss_sum': lambda x, t, ids: F.nll_loss(x, ids, reduction='sum'),
    'nll_loss_none': lambda x, t, ids: F.nll_loss(x, ids, reduction='none'),
    'leaky_relu_0.2': lambda x, t, ids: F.leaky_relu(x, 0.2),
    'silu': lambda x, t, ids: F.silu(x),
    'elu_1.5': lambda x, t, ids: F.elu(x, 1.5),
    'softplus_beta2_threshold3': lambda x, t, ids: F.softplus(x, 2.0, 3.0),
    'log1p': lambda x, t, ids: torch.log1p(x),
    'clamp_-0.5_0.7': lambda x, t, ids: torch.clamp(x, -0.5, 0.7),
    'maximum': lambda x, t, ids: torch.maximum(x, t),
    'minimum': lambda x, t, ids: torch.minimum(x, t),
    'where_x_gt_t': lambda x, t, ids: torch.where(x > t, x, t),
    'min_dim1': lambda x, t, ids: x.min(1).values,
    'max_all': lambda x, t, ids: x.max(),
    'flatten_1': lambda x, t, ids: torch.flatten(x, 1),
    'max_pool1d_k3_s2_p1': lambda x, t, ids: F.max_pool1d(x, 3, 2, 1),
    'avg_pool1d_k3_s2_p1_uncounted': lambda x, t, ids: F.avg_pool1d(x, 3, 2, 1, count_include_pad=False),
    'max_pool2d_k3_s2_p1': lambda x, t, ids: F.max_pool2d(x, 3, 2, 1),
    'max_pool2d_k2': lambda x, t, ids: F.max_pool2d(x, 2),
    'max_pool2d_k2x3_dilation2x1': lambda x, t, ids: F.max_pool2d(x, (2, 3), dilation=(2, 1)),
    'avg_pool2d_k3x2_s2x1_p1x1_counted': lambda x, t, ids: F.avg_pool2d(x, (3, 2), (2, 1), (1, 1)),
    'avg_pool2d_k3_s2_p1_uncounted': lambda x, t, ids: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False),
    'adaptive_avg_pool2d_2x3': lambda x, t, ids: F.adaptive_avg_pool2d(x, (2, 3)),
    'adaptive_avg_pool2d_3x4_uneven': lambda x, t, ids: F.adaptive_avg_pool2d(x, (3, 4)),
}


def run(path):
    tensors, meta = load(path)
    case = meta['case']
    if case not in CALLS:
        sys.exit(f'{path}: no PyTorch call for case {case!r} in {__file__}')
    x = tensors['x'].clone().requires_grad_(True)
    t = tensors['t'].clone().requires_grad_(True) if 't' in tensors else None
    ids = tensors['ids'].long() if 'ids' in tensors else None
    y = CALLS[case](x, t, ids)
    y.backward(tensors['v'])
    diffs = {'y': (y - tensors['y']).abs().max().item(), 'x.grad': (x.grad - tensors['x.grad']).abs().max().item()}
    if t is not None:
        diffs['t.grad'] = (t.grad - tensors['t.grad']).abs().max().item()
    return diffs


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else 'out/functions-reference'
    compare_files(folder, 'function_*.safetensors', 'minigrad-functions-reference', run)


if __name__ == '__main__':
    main()
