#!/usr/bin/python3
"""nn::TransformerEncoderLayer against PyTorch 1.13's nn.TransformerEncoderLayer (Debian's python3-torch),
in float64, both ways. Exits 1 if any difference exceeds 1e-10.

1. Each encoder_layer_*.safetensors that minigrad-encoder-layer-reference wrote is loaded into a PyTorch
   layer with load_state_dict(strict=True), so every parameter name must be PyTorch's; the same input and
   upstream gradient go through it, and the output and every gradient are compared.
2. A PyTorch layer with PyTorch's own initialisation writes its state dict (torch_state.safetensors) and
   an input and output (torch_io.safetensors); the reference program, given as the second argument, loads
   the state dict into its layer and compares the output.

  build/release/examples/minigrad-encoder-layer-reference --out /tmp/enc
  /usr/bin/python3 scripts/compare-encoder-layer-with-pytorch.py /tmp/enc \\
      build/release/examples/minigrad-encoder-layer-reference
  /usr/bin/python3 scripts/compare-encoder-layer-with-pytorch.py --write-torch-layer FOLDER   # 2.'s files only
"""
import glob
import subprocess
import sys

import torch

from safetensors_f64 import load, max_diff, save

TOLERANCE = 1e-10


def make_layer(m):
    return torch.nn.TransformerEncoderLayer(
        d_model=int(m['d_model']), nhead=int(m['nhead']), dim_feedforward=int(m['dim_feedforward']),
        activation=m['activation'], layer_norm_eps=float(m['layer_norm_eps']),
        batch_first=m['batch_first'] == '1', norm_first=m['norm_first'] == '1').double().eval()


def masks(m, t, length):
    if m['mask'] == 'key_padding':
        return {'src_key_padding_mask': t['key_padding_mask'].bool()}
    if m['mask'] == 'causal':
        return {'src_mask': torch.triu(torch.ones(length, length, dtype=torch.bool), diagonal=1)}
    return {}


def compare_minigrad_file(path):
    t, m = load(path)
    layer = make_layer(m)
    layer.load_state_dict({name: t[name] for name in layer.state_dict()}, strict=True)
    minigrad_names = {name for name in t if name.endswith('.grad')} - {'x.grad'}
    torch_names = {name + '.grad' for name, _ in layer.named_parameters()}
    if minigrad_names != torch_names:
        sys.exit(f'{path}: parameter names differ: minigrad {sorted(minigrad_names)}, PyTorch {sorted(torch_names)}')
    x = t['x'].clone().requires_grad_(True)
    length = x.shape[1] if m['batch_first'] == '1' else x.shape[0]
    y = layer(x, **masks(m, t, length))
    (y * t['v']).sum().backward()
    diffs = {'y': max_diff(y, t['y']), 'x.grad': max_diff(x.grad, t['x.grad'])}
    for name, p in layer.named_parameters():
        diffs[f'{name}.grad'] = max_diff(p.grad, t[f'{name}.grad'])
    largest = max(diffs, key=diffs.get)
    print(f'{path}: max |minigrad - PyTorch| = {diffs[largest]:.3g} over {len(diffs)} tensors '
          f'(largest: {largest})')
    return diffs[largest]


def write_torch_layer(folder):
    """A PyTorch layer (PyTorch's initialisation) as torch_state.safetensors (its state dict) and
    torch_io.safetensors (an input with a key padding mask, its output, and the options as metadata)."""
    torch.manual_seed(0)
    metadata = {'d_model': 8, 'nhead': 2, 'dim_feedforward': 16, 'activation': 'gelu', 'layer_norm_eps': 1e-5,
                'batch_first': '1', 'norm_first': '0', 'mask': 'key_padding'}
    layer = make_layer({k: str(v) for k, v in metadata.items()})
    x = torch.randn(2, 4, 8, dtype=torch.float64)
    pad = torch.tensor([[0, 0, 0, 0], [0, 0, 1, 1]], dtype=torch.float64)
    with torch.no_grad():
        y = layer(x, src_key_padding_mask=pad.bool())
    save(f'{folder}/torch_state.safetensors', layer.state_dict())
    save(f'{folder}/torch_io.safetensors', {'x': x, 'y': y, 'key_padding_mask': pad}, metadata)


def check_torch_state_in_minigrad(folder, program):
    write_torch_layer(folder)
    return subprocess.run([program, '--check', folder]).returncode


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--write-torch-layer':
        write_torch_layer(sys.argv[2])  # for the install test's consumer (tests/install/run_consumer.cmake)
        return
    folder = sys.argv[1] if len(sys.argv) > 1 else 'out/encoder-layer-reference'
    files = sorted(glob.glob(f'{folder}/encoder_layer_*.safetensors'))
    if not files:
        sys.exit(f'no encoder_layer_*.safetensors in {folder}: run minigrad-encoder-layer-reference --out {folder}')
    worst = max(compare_minigrad_file(path) for path in files)
    failed = worst >= TOLERANCE
    if len(sys.argv) > 2:
        failed |= check_torch_state_in_minigrad(folder, sys.argv[2]) != 0
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
