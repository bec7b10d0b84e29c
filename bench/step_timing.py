"""What the PyTorch step benchmarks (bench/cnn_step.py, bench/lstm_step.py) share with their minigrad twins:
the command line (bench/step_args.h) and the timing (bench/timing.h)."""
import argparse
import time

import torch


def parse_step_args(doc, configs, default):
    """--config NAME (a key of configs), --threads (0: the default), --seconds; sets the thread count and
    seeds torch's generator with 0, as bench/step_args.h does minigrad's."""
    parser = argparse.ArgumentParser(description=doc.split('\n')[0])
    parser.add_argument('--config', default=default, choices=configs)
    parser.add_argument('--threads', type=int, default=0)
    parser.add_argument('--seconds', type=float, default=2)
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    return args


def seconds_per_call(f, batch_seconds, batches):
    """bench/timing.h's seconds_per_call: batches of about batch_seconds, the median batch's average."""
    f()
    reps = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        t = time.perf_counter() - t0
        if t >= batch_seconds / 4:
            reps = max(1, int(reps * batch_seconds / max(t, 1e-9)))
            break
        reps *= 4
    per_call = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            f()
        per_call.append((time.perf_counter() - t0) / reps)
    return sorted(per_call)[len(per_call) // 2]
