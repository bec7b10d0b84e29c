#!/usr/bin/python3
"""Runs the DecoderLayer computation that minigrad-decoder-reference saved through PyTorch's
nn.TransformerDecoderLayer (Debian's python3-torch, PyTorch 1.13) and prints the largest difference.

  build/release/examples/minigrad-decoder-reference --out /tmp/decoder
  /usr/bin/python3 scripts/compare-decoder-with-pytorch.py /tmp/decoder
"""
import sys

import torch

from safetensors_f64 import load, max_diff


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else 'out/decoder-reference'
    worst = 0.0
    for variant in ('post', 'pre'):
        t, _ = load(f'{folder}/decoder_{variant}.safetensors')
        layer = torch.nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, batch_first=True,
                                                 norm_first=variant == 'pre').double().eval()
        # minigrad's names -> PyTorch's: W_q, W_k, W_v stacked into in_proj, W_o is out_proj
        state = {}
        for mine, theirs in (('self_attention', 'self_attn'), ('cross_attention', 'multihead_attn')):
            for kind in ('weight', 'bias'):
                state[f'{theirs}.in_proj_{kind}'] = torch.cat([t[f'{mine}.W_{p}.{kind}'] for p in 'qkv'])
                state[f'{theirs}.out_proj.{kind}'] = t[f'{mine}.W_o.{kind}']
        for kind in ('weight', 'bias'):
            for i in (1, 2, 3):
                state[f'norm{i}.{kind}'] = t[f'addnorm{i}.ln.{kind}']
            for mine_ffn, theirs_ffn in (('dense1', 'linear1'), ('dense2', 'linear2')):
                state[f'{theirs_ffn}.{kind}'] = t[f'ffn.{mine_ffn}.{kind}']
        layer.load_state_dict(state)
        target_pad = torch.arange(3)[None, :] >= torch.tensor([3, 2])[:, None]
        memory_pad = torch.arange(5)[None, :] >= torch.tensor([5, 3])[:, None]
        causal = torch.nn.Transformer.generate_square_subsequent_mask(3).double()
        with torch.no_grad():
            y = layer(t['x'], t['memory'], tgt_mask=causal, tgt_key_padding_mask=target_pad,
                      memory_key_padding_mask=memory_pad)
        diff = max_diff(y, t['y'])
        worst = max(worst, diff)
        print(f'{variant}-norm DecoderLayer, float64: max |minigrad - PyTorch| = {diff:.3g}')
    sys.exit(0 if worst < 1e-10 else 1)


if __name__ == '__main__':
    main()
