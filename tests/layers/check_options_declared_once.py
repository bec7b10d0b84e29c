#!/usr/bin/env python3
"""Each option of a Transformer layer is declared in one options struct.

A layer's options are nested, not copied: the encoder's options hold a TransformerLayerOptions, the
decoder's likewise, and the encoder-decoder's hold those two (docs/style.md, "Options are declared
once"). This check reads the Transformer's headers, nn/transformer.h and nn/decoder.h, finds every
struct whose name ends in Options and its data members, and fails if one of the layer's options below is
a member of two of them. Other layers' options (attention's, the PyTorch-named TransformerEncoderLayer's)
are those layers' own and may use the same names.

  check_options_declared_once.py --root REPO      exit 1 and a line per option declared twice
  check_options_declared_once.py --self-test      the check against made-up headers: it must catch a copy
"""
import re
import sys

import check_cli

HEADERS = ("nn/transformer.h", "nn/decoder.h")
# A Transformer layer's options (issue 44 counted nine, copied into five structs), and the decoder's
# cross_attention.
OPTIONS = ("num_hiddens", "ffn_num_hiddens", "num_heads", "dropout", "attention_dropout", "bias",
           "norm_first", "activation", "generator", "cross_attention")
STRUCT = re.compile(r"^struct (\w+Options) \{\n(.*?)^\};", re.M | re.S)
# A data member on a line of its own: a type, the name, an optional default, a semicolon.
MEMBER = re.compile(r"^\s+[\w:<>,\s\*&]+?[\s\*&](\w+)\s*(?:=[^;]*|\{[^;]*\})?;\s*$")


def members(text):
    """{struct name: [member names]} for every options struct in a header."""
    text = re.sub(r"//[^\n]*", "", text)  # comments may mention anything
    found = {}
    for match in STRUCT.finditer(text):
        found[match.group(1)] = [m.group(1) for line in match.group(2).splitlines()
                                 if (m := MEMBER.match(line))]
    return found


def offenders(files):
    declared = {}  # option -> ["file: struct", ...]
    structs = 0
    for path, text in files:
        for struct, names in members(text).items():
            structs += 1
            for name in names:
                if name in OPTIONS:
                    declared.setdefault(name, []).append(f"{path}: {struct}")
    found = [f"{name} is declared in {len(places)} options structs ({', '.join(places)}): nest one in the "
             f"others" for name, places in sorted(declared.items()) if len(places) > 1]
    return found, structs


def self_test():
    nested = ("struct LayerOptions {\n  int64_t num_hiddens = 0;  // the width\n  double dropout = 0;\n"
              "  std::optional<double> attention_dropout{};\n  Generator* generator = nullptr;\n};\n"
              "struct StackOptions {\n  LayerOptions layer{};\n  int64_t num_layers = 1;\n};\n")
    copied = nested + "struct OtherOptions {\n  int64_t vocab_size = 0;\n  double dropout = 0.1;\n};\n"
    found, structs = offenders([("nested.h", nested)])
    assert found == [] and structs == 2, (found, structs)
    assert members(nested)["LayerOptions"] == ["num_hiddens", "dropout", "attention_dropout", "generator"]
    found, _ = offenders([("copied.h", copied)])
    assert len(found) == 1 and found[0].startswith("dropout is declared in 2"), found
    print("check_options_declared_once: self-test passed (a copied option is caught, nested ones pass)")
    return 0


def check(root):
    files = [(name, (root / name).read_text(encoding="utf-8")) for name in HEADERS]
    found, structs = offenders(files)
    for line in found:
        print(line)
    if structs == 0:
        print("check_options_declared_once: no options struct found: has the layout of the headers changed?")
        return 1
    print(f"check_options_declared_once: {structs} options structs in {', '.join(HEADERS)}, "
          f"{len(found)} option(s) declared more than once")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(check_cli.run(__doc__, check, self_test))
