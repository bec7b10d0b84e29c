#!/usr/bin/python3
"""The time of one training step of a Transformer encoder classifier in PyTorch: the same model, batches
and measurements as bench/train_step.cpp (minigrad-train-step), which bench/train-step.sh runs beside it.

  tokens (B, T) -> Embedding·√d + sinusoidal positions -> dropout -> N post-norm encoder layers (biased
  q/k/v/o projections, dropout 0.1 on the attention weights and after each sublayer, keys past each
  sequence's valid length hidden) -> mean over the valid positions -> Linear -> logits (B, 2)
  -> cross-entropy; Adam, lr 1e-3.

One step is zero_grad + forward + backward + optimizer step. The run prints one line:

  result impl=pytorch config=A threads=1 ... ms_per_step=... tokens_per_s=... peak_rss_mb=... ...

Run it with Debian's PyTorch (/usr/bin/python3). For the same BLAS as minigrad, put OpenBLAS's OpenMP build
first on the library path: LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp (the blas= field of
the output says which library was really loaded).
"""
import argparse
import ctypes
import math
import os
import resource
import time

VOCAB = 20000
CLASSES = 2
DROPOUT = 0.1
LEARNING_RATE = 1e-3
BATCHES = 4  # distinct batches, drawn up front and cycled

# (d, heads, ffn, layers, seq, batch), as in bench/train_step.cpp
CONFIGS = {
    "A": dict(d=128, heads=4, ffn=512, layers=2, seq=128, batch=32),
    "B": dict(d=64, heads=4, ffn=256, layers=2, seq=64, batch=16),
    "C": dict(d=256, heads=8, ffn=1024, layers=2, seq=256, batch=32),
    "S": dict(d=64, heads=2, ffn=128, layers=1, seq=512, batch=64),
}


def matmul_flops_per_step(c):
    """FLOPs of every matrix product of one training step, forward and backward: the formula of
    matmul_flops_per_step in bench/train_step.cpp, which explains it. In short, a product (m×k)·(k×n)
    costs 2·m·n·k forward and, since both operands of every product here need their gradient (all
    activations descend from the trained embedding), twice that backward: a step is 3 × forward."""
    B, T, d, f = c["batch"], c["seq"], c["d"], c["ffn"]
    N = B * T  # tokens per batch
    projections = 4 * (2 * N * d * d)  # q, k, v and output: (N, d)·(d, d) each
    attention = 2 * (2 * B * T * T * d)  # Q·Kᵀ and weights·V, all heads: 2·T·T·(d/h) each, times h·B
    ffn = 2 * (2 * N * d * f)  # (N, d)·(d, f) and (N, f)·(f, d)
    head = 2 * B * d * CLASSES  # pooled (B, d)·(d, 2)
    return 3 * (c["layers"] * (projections + attention + ffn) + head)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="A")
    p.add_argument("--steps", type=int, default=10, help="timed steps (the median is reported)")
    p.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    p.add_argument("--threads", type=int, help="threads (default: OMP_NUM_THREADS, else all cores)")
    p.add_argument("--seed", type=int, default=0, help="seed of the weights, dropout masks and batches")
    p.add_argument("--mallopt", action="store_true",
                   help="set glibc's malloc up as minigrad does (tensor/storage.cpp): blocks below 32 MB from the "
                        "heap, up to 256 MB of free heap kept; reported as impl=pytorch-mallopt")
    args = p.parse_args()
    if args.steps < 1 or args.warmup < 0 or (args.threads is not None and args.threads < 1):
        p.error("--steps must be >= 1, --warmup >= 0, --threads >= 1")
    return args


def configure_malloc_as_minigrad():
    """glibc gives memory back to the kernel eagerly by default (a block of 128 KB or more is its own mmap,
    free space at the top of the heap is trimmed), so a training step that frees and allocates the same
    sizes again faults in and zeroes the same pages anew. minigrad keeps them; this does the same here."""
    libc = ctypes.CDLL("libc.so.6")
    M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # from glibc's malloc.h
    if not (libc.mallopt(M_MMAP_THRESHOLD, 32 << 20) and libc.mallopt(M_TRIM_THRESHOLD, 256 << 20)):
        raise SystemExit("train_step.py: mallopt failed")


args = parse_args()
if args.mallopt:
    configure_malloc_as_minigrad()
if args.threads is not None:
    os.environ["OMP_NUM_THREADS"] = str(args.threads)  # before torch starts OpenMP (and OpenBLAS) threads

import torch  # noqa: E402  (after OMP_NUM_THREADS is set)
from torch import nn  # noqa: E402


def sinusoids(max_len, d):
    """P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(...): (max_len, d), as nn/positional_encoding.cpp."""
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    frequency = torch.pow(10000.0, -torch.arange(0, d, 2, dtype=torch.float64) / d)
    table = torch.zeros(max_len, d, dtype=torch.float64)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency)[:, : d // 2]
    return table.float()


class EncoderClassifier(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.d = c["d"]
        self.embedding = nn.Embedding(VOCAB, c["d"])
        self.register_buffer("P", sinusoids(c["seq"], c["d"]).unsqueeze(0))  # (1, T, d)
        self.pos_dropout = nn.Dropout(DROPOUT)
        layer = nn.TransformerEncoderLayer(c["d"], c["heads"], dim_feedforward=c["ffn"], dropout=DROPOUT,
                                           activation="relu", batch_first=True, norm_first=False)
        # PyTorch's FFN has a dropout between its two Linears; d2l's and minigrad's have none (dropout only on
        # the attention weights and after each sublayer), so it goes. (TransformerEncoder copies the layer.)
        layer.dropout = nn.Identity()
        self.encoder = nn.TransformerEncoder(layer, c["layers"], enable_nested_tensor=False)
        self.head = nn.Linear(c["d"], CLASSES)

    def forward(self, tokens, lengths):
        """tokens (B, T) int64, lengths (B) int64 -> logits (B, 2)"""
        T = tokens.shape[1]
        padding = torch.arange(T).unsqueeze(0) >= lengths.unsqueeze(1)  # (B, T), True: a padding key
        x = self.pos_dropout(self.embedding(tokens) * math.sqrt(self.d) + self.P[:, :T])
        h = self.encoder(x, src_key_padding_mask=padding)  # (B, T, d)
        pooled = h.masked_fill(padding.unsqueeze(-1), 0).sum(1) / lengths.clamp(min=1).unsqueeze(1)
        return self.head(pooled)  # (B, 2)


def random_batches(c, generator):
    """BATCHES batches of tokens (B, T) uniform over the vocabulary, lengths (B) uniform in [T/2, T] and
    labels (B) in {0, 1}."""
    B, T = c["batch"], c["seq"]
    return [(torch.randint(VOCAB, (B, T), generator=generator),
             torch.randint(T // 2, T + 1, (B,), generator=generator),
             torch.randint(CLASSES, (B,), generator=generator)) for _ in range(BATCHES)]


def loaded_blas():
    """The BLAS libraries mapped into this process: which build torch really calls."""
    with open("/proc/self/maps") as maps:
        paths = {line[line.index("/"):].strip() for line in maps if "/" in line and "blas" in line}
    return ",".join(sorted(paths)) or "none"


def faults():
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_minflt + u.ru_majflt


def main():
    c = CONFIGS[args.config]
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # initial weights and dropout masks
    model = EncoderClassifier(c)
    model.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=LEARNING_RATE)
    batches = random_batches(c, torch.Generator().manual_seed(args.seed + 1))
    loss_fn = nn.CrossEntropyLoss()

    counter = [0]

    def step():
        tokens, lengths, labels = batches[counter[0] % BATCHES]
        counter[0] += 1
        optimizer.zero_grad(set_to_none=True)  # as minigrad's zero_grad (and PyTorch 2's default)
        loss = loss_fn(model(tokens, lengths), labels)
        loss.backward()
        optimizer.step()
        return loss.item()

    loss0 = float("nan")  # the loss at the first step, before any update: ~ln 2 for an untrained classifier
    for i in range(args.warmup):
        loss = step()
        if i == 0:
            loss0 = loss
    seconds = []
    faults_before = faults()
    for i in range(args.steps):
        t0 = time.perf_counter()
        loss = step()
        seconds.append(time.perf_counter() - t0)
        if args.warmup == 0 and i == 0:
            loss0 = loss
    step_faults = (faults() - faults_before) / args.steps

    mean = sum(seconds) / len(seconds)
    median = sorted(seconds)[len(seconds) // 2]  # the upper middle one for an even count, as the C++ side
    flops = matmul_flops_per_step(c)
    params = sum(p.numel() for p in model.parameters())
    peak_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"result impl={'pytorch-mallopt' if args.mallopt else 'pytorch'} config={args.config} threads={torch.get_num_threads()} d={c['d']} "
          f"heads={c['heads']} ffn={c['ffn']} layers={c['layers']} seq={c['seq']} batch={c['batch']} "
          f"steps={args.steps} warmup={args.warmup} ms_per_step={median * 1e3:.2f} ms_mean={mean * 1e3:.2f} "
          f"tokens_per_s={c['batch'] * c['seq'] / median:.0f} peak_rss_mb={peak_rss_mb:.1f} "
          f"faults_per_step={step_faults:.1f} step_gflop={flops / 1e9:.4f} "
          f"matmul_gflops={flops / median / 1e9:.2f} params={params} loss0={loss0:.4f} "
          f"torch={torch.__version__} blas={loaded_blas()}", flush=True)


if __name__ == "__main__":
    main()
