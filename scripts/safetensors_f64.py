"""Reading the float64 safetensors files that minigrad's reference programs write, for the scripts that
compare them with PyTorch (compare-decoder-with-pytorch.py, compare-conv-with-pytorch.py,
compare-recurrent-with-pytorch.py), and the loop those scripts share."""
import array
import glob
import json
import math
import struct
import sys

import torch


def load(path):
    """The tensors of a safetensors file of float64 tensors, and its metadata, read from the format's
    specification: an 8-byte little-endian header length, the JSON header, the data."""
    raw = open(path, 'rb').read()
    n = struct.unpack('<Q', raw[:8])[0]
    header, data = json.loads(raw[8:8 + n]), raw[8 + n:]
    out = {}
    for name, entry in header.items():
        if name == '__metadata__':
            continue
        if entry['dtype'] != 'F64':
            sys.exit(f'{path}: {name} is {entry["dtype"]}, expected F64')
        start, end = entry['data_offsets']
        values = array.array('d')
        values.frombytes(data[start:end])
        out[name] = torch.tensor(values.tolist(), dtype=torch.float64).reshape(entry['shape'])
    return out, header.get('__metadata__', {})


def compare_files(folder, pattern, program, compare, tolerance=1e-10):
    """Runs compare(path) -> {tensor name: max |minigrad - PyTorch|} on every file of `folder` matching
    `pattern` (written by minigrad's `program`), prints each file's largest difference, and exits 1 if
    any exceeds `tolerance`."""
    files = sorted(glob.glob(f'{folder}/{pattern}'))
    if not files:
        sys.exit(f'no {pattern} in {folder}: run {program} --out {folder} first')
    worst = 0.0
    for path in files:
        # a NaN difference (from a comparison of its own) fails as an infinite one
        diffs = {name: float('inf') if math.isnan(d) else d for name, d in compare(path).items()}
        largest = max(diffs, key=diffs.get)
        worst = max(worst, diffs[largest])
        print(f'{path}: max |minigrad - PyTorch| = {diffs[largest]:.3g} over {len(diffs)} tensors '
              f'(largest: {largest})')
    sys.exit(0 if worst < tolerance else 1)


def max_diff(a, b):
    """max |a - b| over the elements, as a float; infinite where the shapes differ. A NaN or an infinity
    matches only the same on the other side (NaN propagation is part of what is compared); where one side
    has it alone, the difference is infinite. (Plain max |a - b| would be NaN there, and NaN < tolerance
    would not fail.)"""
    if tuple(a.shape) != tuple(b.shape):
        return float('inf')
    if not torch.equal(torch.isnan(a), torch.isnan(b)):
        return float('inf')
    same = (a == b) | torch.isnan(a)  # equal infinities too, whose difference is NaN
    d = torch.where(same, torch.zeros_like(a), (a - b).abs())
    return d.max().item() if d.numel() else 0.0


def compare_main(default_folder, pattern, program, compare):
    """A compare-*-with-pytorch.py script's command line: the folder of minigrad's files (its first
    argument, else `default_folder`), each compared by compare_files."""
    folder = sys.argv[1] if len(sys.argv) > 1 else default_folder
    compare_files(folder, pattern, program, compare)


def save(path, tensors, metadata=None):
    """Writes float64 tensors {name: tensor} (and string metadata) as a safetensors file, the format's
    layout as load() reads it."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header['__metadata__'] = {k: str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        data = array.array('d', t.detach().double().contiguous().reshape(-1).tolist()).tobytes()
        header[name] = {'dtype': 'F64', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b' ' * (-len(text) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(text)) + text + b''.join(blobs))
