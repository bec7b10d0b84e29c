#!/usr/bin/python3
"""Recomputes what minigrad-functional-reference saved with PyTorch 1.13's torch.autograd.functional
(Debian's python3-torch), in float64: each case's Jacobian (minigrad's built both ways, against PyTorch's
built the same ways), vjp and jvp, and for the functions with one result of one element the Hessian
(both ways), hvp (both ways: reverse over reverse, forward over reverse) and vhp. NaN must stand where
PyTorch's stands.
Prints the largest difference per file; exits 1 if any exceeds 1e-10.

  build/release/examples/minigrad-functional-reference --out /tmp/functional
  /usr/bin/python3 scripts/compare-functional-with-pytorch.py /tmp/functional
"""
import torch
import torch.autograd.functional as AF

from safetensors_f64 import compare_main, load, max_diff


def encoder_layer(t):
    """nn.TransformerEncoderLayer with the options of the reference program's layer and its weights."""
    layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, activation='gelu',
                                             batch_first=True).double().eval()
    layer.load_state_dict({name: t['layer.' + name] for name in layer.state_dict()}, strict=True)
    return layer


# Each case's function of its inputs, as a tuple of outputs, from the file's constants
# (examples/reference/functional.cpp says what each computes).
def functions(name, t):
    if name == 'tanh_of_a_product':
        return lambda x: (torch.tanh(t['w'] @ x) * (x * x).sum() + x[:3],)
    if name == 'log_sum_exp':
        return lambda x: (torch.log(torch.exp((t['w'] @ x) * x).sum()),)
    if name == 'two_inputs_two_outputs':
        return lambda a, b: (a * b, (a * b * b).sum())
    if name == 'cross_entropy':
        return lambda x: (torch.nn.functional.cross_entropy(x, t['targets'].long()),)
    if name == 'nan_in_the_input':
        return lambda x: (torch.relu(x), x.abs() * t['w'], x.clamp(-0.5, 1.0), torch.relu(x) * x)
    if name == 'encoder_layer':
        layer = encoder_layer(t)
        return lambda x: ((layer(x) * t['c']).sum(),)
    raise SystemExit(f'unknown case {name}')


def listed(t, name):
    """The tensors name.0, name.1, ... of a file, in order."""
    out = []
    while f'{name}.{len(out)}' in t:
        out.append(t[f'{name}.{len(out)}'])
    return out


def compare(path):
    t, m = load(path)
    f = functions(m['case'], t)
    xs, us, vs = tuple(listed(t, 'x')), tuple(listed(t, 'u')), tuple(listed(t, 'v'))
    ys = f(*xs)
    diffs = {f'y.{k}': max_diff(y, t[f'y.{k}']) for k, y in enumerate(ys)}
    # Each way against PyTorch's same way: a row at a time (reverse mode, a vjp per row as its engine runs
    # them) and a column at a time (forward mode, which PyTorch builds only vectorized). They agree but
    # at a NaN, where 0·NaN spreads it along a column in the one and along a row in the other. (PyTorch's
    # vectorized reverse mode is left out: its batched backward of relu, abs and clamp makes a column of
    # NaN that its own engine, row by row, does not.)
    forward_mode = {'vectorize': True, 'strategy': 'forward-mode'}
    for way, options in (('jacobian', {}), ('jacobian_forward', forward_mode)):
        jacobian = AF.jacobian(f, xs, **options)  # [k][i]
        for k in range(len(ys)):
            for i in range(len(xs)):
                diffs[f'{way}.{k}.{i}'] = max_diff(jacobian[k][i], t[f'{way}.{k}.{i}'])
    for i, g in enumerate(AF.vjp(f, xs, us)[1]):
        diffs[f'vjp.{i}'] = max_diff(g, t[f'vjp.{i}'])
    for k, g in enumerate(AF.jvp(f, xs, vs)[1]):
        diffs[f'jvp.{k}'] = max_diff(g, t[f'jvp.{k}'])
    if len(ys) == 1 and ys[0].numel() == 1:
        scalar = lambda *inputs: f(*inputs)[0]
        # Both ways against PyTorch's reverse over reverse: its forward over reverse lacks some ops'
        # rules (nll_loss_backward's, in 1.13).
        hessian = AF.hessian(scalar, xs)  # [i][j]
        for i in range(len(xs)):
            for j in range(len(xs)):
                for way in ('hessian', 'hessian_forward'):
                    diffs[f'{way}.{i}.{j}'] = max_diff(hessian[i][j], t[f'{way}.{i}.{j}'])
        for names, transform in ((('hvp', 'hvp_forward'), AF.hvp), (('vhp',), AF.vhp)):
            for i, g in enumerate(transform(scalar, xs, vs)[1]):
                for name in names:  # minigrad's hvp both ways, reverse over reverse and forward over reverse
                    diffs[f'{name}.{i}'] = max_diff(g, t[f'{name}.{i}'])
    return diffs


if __name__ == '__main__':
    compare_main('out/functional-reference', 'functional_*.safetensors', 'minigrad-functional-reference', compare)
