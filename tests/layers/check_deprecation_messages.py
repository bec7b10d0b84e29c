#!/usr/bin/env python3
"""A renamed public name tells its user the new one.

Compiles tests/layers/last_release_names.cpp, a program of the last release's spellings, with the
compiler given, and fails unless it compiles and the compiler's warnings name each successor.

  check_deprecation_messages.py --compiler c++ --include DIR SOURCE
"""
import argparse
import subprocess
import sys

# The old name, and what its warning must say.
EXPECTED = {
    "nn::EncoderLayerOptions": "use nn::TransformerLayerOptions",
    "nn::masked_mean": "use mean_over_time(x, valid_lens, /*dim=*/1)",
    "nn::masked_max": "use max_over_time(x, valid_lens, /*dim=*/1)",
    "Adam's beta1": "use .betas = {beta1, beta2}",
    "optim::clip_grad_norm": "use optim::clip_grad_norm_, PyTorch's name",
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--compiler", required=True)
    parser.add_argument("--include", action="append", default=[])
    parser.add_argument("source")
    args = parser.parse_args()
    command = [args.compiler, "-std=c++20", "-fsyntax-only", "-Wdeprecated-declarations", args.source]
    command += [f"-I{d}" for d in args.include]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stderr)
        sys.exit(f"{args.source} does not compile: the old names must still work for a release")
    missing = [old for old, message in EXPECTED.items() if message not in result.stderr]
    for old in missing:
        print(f"no warning for {old} saying '{EXPECTED[old]}'")
    if missing:
        print(result.stderr)
        sys.exit(1)
    print(f"{len(EXPECTED)} old names compile, each warning with its successor")


if __name__ == "__main__":
    main()
