#!/usr/bin/python3
"""Runs the RNN, GRU and LSTM computations that minigrad-recurrent-reference saved through PyTorch's
nn.RNN, nn.GRU and nn.LSTM (Debian's python3-torch, PyTorch 1.13), with the same weights, inputs, initial
states and upstream gradients, and prints the largest difference of the outputs, the final states and
every gradient. Sequences of unequal lengths go through PyTorch as packed sequences. Exits 1 if any
difference exceeds 1e-10.

  build/release/examples/minigrad-recurrent-reference --out /tmp/rnn
  /usr/bin/python3 scripts/compare-recurrent-with-pytorch.py /tmp/rnn
"""

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from safetensors_f64 import compare_main, load, max_diff


def run(path):
    t, m = load(path)
    kind, batch_first = m['kind'], m['batch_first'] == '1'
    options = dict(input_size=int(m['input_size']), hidden_size=int(m['hidden_size']),
                   num_layers=int(m['num_layers']), bias=m['bias'] == '1', batch_first=batch_first,
                   bidirectional=m['bidirectional'] == '1')
    if kind == 'RNN':
        options['nonlinearity'] = m['nonlinearity']
    layer = getattr(torch.nn, kind)(**options).double()
    layer.load_state_dict({name: t[name] for name, _ in layer.named_parameters()})
    x = t['x'].clone().requires_grad_(True)
    leaves = {'x': x}
    state = None
    if 'h0' in t:
        leaves['h0'] = t['h0'].clone().requires_grad_(True)
        state = leaves['h0']
        if kind == 'LSTM':
            leaves['c0'] = t['c0'].clone().requires_grad_(True)
            state = (leaves['h0'], leaves['c0'])
    if 'lengths' in t:
        packed = pack_padded_sequence(x, t['lengths'].long(), batch_first=batch_first, enforce_sorted=False)
        out, final = layer(packed, state)
        length = x.shape[1] if batch_first else x.shape[0]
        y, _ = pad_packed_sequence(out, batch_first=batch_first, total_length=length)
    else:
        y, final = layer(x, state)
    h_n, c_n = final if kind == 'LSTM' else (final, None)
    loss = (y * t['v']).sum() + (h_n * t['v_h']).sum()
    if c_n is not None:
        loss = loss + (c_n * t['v_c']).sum()
    loss.backward()
    diffs = {'y': max_diff(y, t['y']), 'h_n': max_diff(h_n, t['h_n'])}
    if c_n is not None:
        diffs['c_n'] = max_diff(c_n, t['c_n'])
    for name, leaf in leaves.items():
        diffs[f'{name}.grad'] = max_diff(leaf.grad, t[f'{name}.grad'])
    for name, p in layer.named_parameters():
        diffs[f'{name}.grad'] = max_diff(p.grad, t[f'{name}.grad'])
    return diffs


if __name__ == '__main__':
    compare_main('out/recurrent-reference', 'recurrent_*.safetensors', 'minigrad-recurrent-reference', run)
