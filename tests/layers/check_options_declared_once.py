#!/usr/bin/env python3
"""Each option is declared in one options struct.

Options are nested, not copied: the encoder's options hold a TransformerLayerOptions and a
TokenEmbeddingOptions, the decoder's likewise, and the encoder-decoder's hold those two (docs/style.md,
"Options are declared once"). This check reads every header of the library (tensor/, autograd/, nn/,
optim/, distributed/, viz/), finds every struct whose name ends in Options and its data members, and
groups the structs into families: two structs are of one family when one holds the other, or both hold
the same one. Within a family, an option that is not itself a nested struct is declared once; a copy (an
encoder and a decoder that both declare vocab_size, say) fails.

Structs of different families may use the same word: Conv1d's stride and Conv2d's, Adam's lr and SGD's,
are each class's own argument, as in PyTorch, and TransformerEncoderLayerOptions is PyTorch's naming of
the encoder layer (docs/from-pytorch.md), mapped once onto the one computation.

  check_options_declared_once.py --root REPO      exit 1 and a line per option declared twice
  check_options_declared_once.py --self-test      the check against made-up headers: it must catch a copy
"""
import re
import sys

import check_cli

LAYERS = ("tensor", "autograd", "nn", "optim", "distributed", "viz")
# Each stack counts its own layers, as PyTorch's TransformerEncoder(layer, num_layers) and
# TransformerDecoder(layer, num_layers) do: the same word for two different numbers.
EACH_ITS_OWN = {"num_layers"}
STRUCT = re.compile(r"^struct (\w+Options) \{\n(.*?)^\};", re.M | re.S)
# A data member on a line of its own: a type, the name, an optional default, a semicolon.
MEMBER = re.compile(r"^\s+([\w:<>,\s\*&]+?)[\s\*&](\w+)\s*(?:=[^;]*|\{[^;]*\})?;\s*$")


def structs_of(files):
    """{struct name: (file, [(member type, member name)])} for every options struct in the files."""
    found = {}
    for path, text in files:
        text = re.sub(r"//[^\n]*", "", text)  # comments may mention anything
        for match in STRUCT.finditer(text):
            found[match.group(1)] = (path, [(m.group(1).strip(), m.group(2))
                                            for line in match.group(2).splitlines() if (m := MEMBER.match(line))])
    return found


def families(structs):
    """The structs grouped by nesting: lists of names, a struct that nests nothing alone in its own."""
    linked = {name: set() for name in structs}
    for name, (_, members) in structs.items():
        for member_type, _ in members:
            for other in structs:
                if re.search(rf"\b{other}\b", member_type):
                    linked[name].add(other)
                    linked[other].add(name)
    grouped, seen = [], set()
    for start in structs:
        if start in seen:
            continue
        family, stack = [], [start]
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                family.append(name)
                stack.extend(linked[name])
        grouped.append(sorted(family))
    return grouped


def offenders(files):
    structs = structs_of(files)
    found = []
    for family in families(structs):
        declared = {}  # option -> ["file: struct", ...]
        for name in family:
            path, members = structs[name]
            for member_type, option in members:
                nested = any(re.search(rf"\b{other}\b", member_type) for other in structs)
                if not nested and option not in EACH_ITS_OWN:
                    declared.setdefault(option, []).append(f"{path}: {name}")
        found += [f"{option} is declared in {len(places)} options structs of one family ({', '.join(places)}): "
                  f"nest one struct in the others" for option, places in sorted(declared.items()) if len(places) > 1]
    return found, len(structs)


def self_test():
    nested = ("struct LayerOptions {\n  int64_t num_hiddens = 0;  // the width\n  double dropout = 0;\n"
              "  std::optional<double> attention_dropout{};\n  Generator* generator = nullptr;\n};\n"
              "struct TokensOptions {\n  int64_t vocab_size = 0;\n};\n"
              "struct EncoderOptions {\n  LayerOptions layer{};\n  int64_t num_layers = 1;\n"
              "  TokensOptions tokens{};\n};\n"
              "struct DecoderOptions {\n  LayerOptions layer{};\n  int64_t num_layers = 1;\n"
              "  TokensOptions tokens{};\n  std::optional<bool> final_norm{};\n};\n"
              "struct ConvOptions {\n  int64_t stride = 1;\n  double dropout = 0;\n};\n")
    found, count = offenders([("nested.h", nested)])
    assert found == [] and count == 5, (found, count)
    assert [name for _, name in structs_of([("nested.h", nested)])["LayerOptions"][1]] == [
        "num_hiddens", "dropout", "attention_dropout", "generator"]
    assert families(structs_of([("nested.h", nested)])) == [
        ["DecoderOptions", "EncoderOptions", "LayerOptions", "TokensOptions"], ["ConvOptions"]]
    # The encoder copying the tokens' option, and the decoder copying a layer option: both caught.
    copied = nested.replace("  TokensOptions tokens{};\n};\nstruct DecoderOptions",
                            "  TokensOptions tokens{};\n  int64_t vocab_size = 0;\n};\nstruct DecoderOptions")
    copied = copied.replace("std::optional<bool> final_norm{};", "double dropout = 0.1;")
    found, _ = offenders([("copied.h", copied)])
    assert len(found) == 2 and found[0].startswith("dropout is declared in 2"), found
    assert found[1].startswith("vocab_size is declared in 2"), found
    print("check_options_declared_once: self-test passed (a copied option is caught, nested ones and other "
          "families' pass)")
    return 0


def check(root):
    headers = sorted(path for layer in LAYERS for path in (root / layer).rglob("*.h"))
    files = [(str(path.relative_to(root)), path.read_text(encoding="utf-8")) for path in headers]
    found, count = offenders(files)
    for line in found:
        print(line)
    if count == 0:
        print("check_options_declared_once: no options struct found: has the layout of the headers changed?")
        return 1
    print(f"check_options_declared_once: {count} options structs in {len(files)} headers of "
          f"{', '.join(LAYERS)}, {len(found)} option(s) declared more than once in a family")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(check_cli.run(__doc__, check, self_test))
