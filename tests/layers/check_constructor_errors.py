#!/usr/bin/env python3
"""A layer built with arguments none of its constructors takes fails to compile at the caller's line,
with a message that names the constructors (nn/constructor_lines.h), not 60 lines deep in std::make_shared.

Compiles each wrong call below in a program of its own and fails unless the compiler refuses it, its
first error is the message expected, and the caller's line is named under "required from here" (or as
the error's own place).

  check_constructor_errors.py --compiler c++ --include DIR
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# A wrong call a PyTorch user types, and what the first error must say.
WRONG_CALLS = {
    "std::make_shared<nn::BatchNorm2d>(8, 1e-5)":  # PyTorch's eps, positional
        "nn::BatchNorm2d takes (num_features), then {options}; or (BatchNormOptions)",
    "nn::MaxPool2d(2, 2)":  # PyTorch's stride, positional
        "nn::MaxPool2d takes (kernel_size), then {options}; or (MaxPool2dOptions)",
    "nn::Conv2d(3, 8)":  # no kernel size
        "nn::Conv2d takes (in_channels, out_channels, kernel_size), then {options}; or (Conv2dOptions)",
    "std::make_shared<nn::LSTM>(8, 16, 2)":  # PyTorch's num_layers, positional
        "nn::LSTM takes (input_size, hidden_size), then {options}; or (LSTMOptions)",
    "nn::TransformerEncoderLayer(64, 4, 128)":  # PyTorch's dim_feedforward, positional
        "nn::TransformerEncoderLayer takes (d_model, nhead), then {options}; or (TransformerEncoderLayerOptions)",
    "std::make_shared<nn::Linear>()":
        "nn::Linear takes (in_features, out_features), then bias and a Generator*; or (LinearOptions)",
    "nn::Embedding(1000)":
        "nn::Embedding takes (num_embeddings, embedding_dim), then padding_idx and a Generator*",
}

PROGRAM = """#include <memory>
#include <minigrad/minigrad.h>
using namespace minigrad;
int main() {{
  auto layer = {call};
  (void)layer;
}}
"""
CALL_LINE = 5  # the line of {call} in PROGRAM


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--compiler", required=True)
    parser.add_argument("--include", action="append", default=[])
    args = parser.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as folder:
        for call, message in WRONG_CALLS.items():
            source = os.path.join(folder, "wrong_call.cpp")
            with open(source, "w") as f:
                f.write(PROGRAM.format(call=call))
            command = [args.compiler, "-std=c++20", "-fsyntax-only", source] + [f"-I{d}" for d in args.include]
            result = subprocess.run(command, capture_output=True, text=True)
            errors = [line for line in result.stderr.splitlines() if ": error: " in line]
            if result.returncode == 0:
                failures.append(f"{call}: compiles, but no constructor takes these arguments")
            elif not errors or message not in errors[0]:
                failures.append(f"{call}: the first error is not '{message}':\n{result.stderr}")
            elif not re.search(rf"wrong_call\.cpp:{CALL_LINE}:\d+:(   required from here| error)", result.stderr):
                failures.append(f"{call}: the error does not name the caller's line:\n{result.stderr}")
            else:
                print(f"{call}: {len(result.stderr.splitlines())} lines, first error: {message}")
    for failure in failures:
        print(failure)
    if failures:
        sys.exit(1)
    print(f"{len(WRONG_CALLS)} wrong constructor calls refused at the caller's line, naming the constructors")


if __name__ == "__main__":
    main()
