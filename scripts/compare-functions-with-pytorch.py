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

from safetensors_f64 import compare_main, load, max_diff

# The class weights and positive weights of the cases that take them (examples/reference/functions.cpp).
W = torch.tensor([0.5, 2.0, 1.0, 1.5], dtype=torch.float64)
P = torch.tensor([2.0, 0.5, 3.0], dtype=torch.float64)

# Each case's PyTorch call, on x, the second operand t, and the class targets ids.
CALLS = {
    'cross_entropy': lambda x, t, ids: F.cross_entropy(x, ids),
    'cross_entropy_weight': lambda x, t, ids: F.cross_entropy(x, ids, weight=W),
    'cross_entropy_weight_sum': lambda x, t, ids: F.cross_entropy(x, ids, weight=W, reduction='sum'),
    'cross_entropy_weight_none': lambda x, t, ids: F.cross_entropy(x, ids, weight=W, reduction='none'),
    'cross_entropy_weight_smoothing0.2': lambda x, t, ids: F.cross_entropy(x, ids, weight=W, label_smoothing=0.2),
    'cross_entropy_smoothing0.2_none': lambda x, t, ids: F.cross_entropy(x, ids, reduction='none',
                                                                         label_smoothing=0.2),
    'cross_entropy_nd_weight': lambda x, t, ids: F.cross_entropy(x, ids, weight=W),
    'cross_entropy_nd_none': lambda x, t, ids: F.cross_entropy(x, ids, reduction='none'),
    'cross_entropy_unbatched': lambda x, t, ids: F.cross_entropy(x, ids),
    'nll_loss_weight': lambda x, t, ids: F.nll_loss(x, ids, weight=W),
    'nll_loss_weight_none': lambda x, t, ids: F.nll_loss(x, ids, weight=W, reduction='none'),
    'nll_loss_nd_weight_sum': lambda x, t, ids: F.nll_loss(F.log_softmax(x, 1), ids, weight=W, reduction='sum'),
    'norm': lambda x, t, ids: x.norm(),
    'norm_1_dim1': lambda x, t, ids: x.norm(1, dim=1),
    'norm_3_dim0_keepdim': lambda x, t, ids: x.norm(3, dim=0, keepdim=True),
    'norm_inf': lambda x, t, ids: x.norm(float('inf')),
    'norm_0.5_dims01': lambda x, t, ids: torch.linalg.vector_norm(x, 0.5, dim=(0, 1)),
    'bce_with_logits': lambda x, t, ids: F.binary_cross_entropy_with_logits(x, t),
    'bce_with_logits_pos_weight': lambda x, t, ids: F.binary_cross_entropy_with_logits(x, t, pos_weight=P),
    'bce_with_logits_pos_weight_none': lambda x, t, ids: F.binary_cross_entropy_with_logits(
        x, t, reduction='none', pos_weight=P),
    'bce_with_logits_weight_sum': lambda x, t, ids: F.binary_cross_entropy_with_logits(
        x, t, weight=P.reshape(1, 3), reduction='sum'),
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
    'one_hot_picks': lambda x, t, ids: (x * F.one_hot(ids).double()).sum(2),
    'one_hot_5_classes': lambda x, t, ids: F.one_hot(ids, 5).double()[..., :4] * x,
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
    diffs = {'y': max_diff(y, tensors['y']), 'x.grad': max_diff(x.grad, tensors['x.grad'])}
    if t is not None:
        diffs['t.grad'] = max_diff(t.grad, tensors['t.grad'])
    return diffs


if __name__ == '__main__':
    compare_main('out/functions-reference', 'function_*.safetensors', 'minigrad-functions-reference', run)
