"""The command line the checks in this folder share:

  SCRIPT --root REPO      the check over the repository at REPO: exit 1 and a line per offender if any
  SCRIPT --self-test      the check against made-up sources: it must catch what it is for
"""
import argparse
import pathlib


def run(description, check, self_test):
    """Parses the command line and returns the exit status of check(root) or of self_test()."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=pathlib.Path)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    return self_test() if args.self_test else check(args.root)
