#!/usr/bin/env python3
"""Every kernel lives in tensor/: no function under autograd/ takes Tensors and no Variable.

autograd/ holds, per op, its record() call and its backward, written with Variables; the Tensor math
they call, forward and backward kernels alike, is in tensor/ (docs/style.md, "Where each kind of code
lives"). This check reads every autograd/ source and header and fails on a namespace-scope function
(declared or defined at column 0, as .clang-format lays them out) whose signature names Tensor and no
Variable, Node or other autograd type.

  check_kernel_homes.py --root REPO      exit 1 and a line per offender if any
  check_kernel_homes.py --self-test      the check against made-up sources: it must catch a kernel
"""
import re
import sys

import check_cli

# Types that make a function autograd's own business: it works on the graph, not on numbers alone.
AUTOGRAD_TYPES = re.compile(r"\b(Variable|VariableImpl|Node|NeedsGrad|SavedTensor|Edge|VariableGrads|"
                            r"GradcheckOptions|GradcheckResult)\b")
# A namespace-scope signature: a return type and a name at column 0, up to the first { or ;.
SIGNATURE = re.compile(r"^(?!\s)(?!return\b|using\b|namespace\b|struct\b|class\b|enum\b|#|//)"
                       r"[\w:<>,\s\*&\[\]]*?\b(\w+)\s*\(([^;{]*)\)[^;{]*[;{]", re.M | re.S)


def offenders(files):
    found = []
    for path, text in files:
        text = re.sub(r"//[^\n]*", "", text)  # comments may mention anything
        for match in SIGNATURE.finditer(text):
            name, params = match.group(1), match.group(2)
            signature = match.group(0)
            if "Tensor" in params and not AUTOGRAD_TYPES.search(signature):
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{path}:{line}: {name}() takes Tensors and no Variable: a kernel; move it to tensor/")
    return found


def self_test():
    good = ("Variable relu(const Variable& x) {\n  return x;\n}\n"
            "Variable relu_backward(const Variable& g, const Tensor& x);\n"
            "  Tensor inside_a_class(const Tensor& t);\n")
    bad = "Tensor relu_backward(const Tensor& g,\n                     const Tensor& x) {\n  return g;\n}\n"
    assert offenders([("good.cpp", good)]) == [], offenders([("good.cpp", good)])
    caught = offenders([("bad.cpp", bad)])
    assert len(caught) == 1 and "relu_backward" in caught[0], caught
    print("check_kernel_homes: self-test passed (a kernel is caught, ops on Variables pass)")
    return 0


def check(root):
    files = [(str(p.relative_to(root)), p.read_text(encoding="utf-8"))
             for p in sorted((root / "autograd").glob("*")) if p.suffix in (".cpp", ".h")]
    found = offenders(files)
    for line in found:
        print(line)
    print(f"check_kernel_homes: {len(files)} files under autograd/, {len(found)} kernel(s) outside tensor/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(check_cli.run(__doc__, check, self_test))
