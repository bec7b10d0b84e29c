#!/usr/bin/env python3
"""The core stays the core: minigrad::autograd holds no JSON code and starts no process.

The pictures of the graph (the DOT writer, the backward page and its recorder) live in viz/, which owns
nlohmann_json and runs Graphviz's dot. This reads the symbols of autograd's library file with nm and fails,
naming each, on any symbol of nlohmann's or any call that starts a process. --expect-found runs the same
check on a library that must fail it (viz's), so that a check that finds nothing cannot pass unnoticed.
"""
import argparse
import re
import subprocess
import sys

PROCESS_CALLS = {"popen", "system", "fork", "vfork", "posix_spawn", "posix_spawnp",
                 "execl", "execlp", "execle", "execv", "execvp", "execvpe"}


def offending_symbols(library):
    out = subprocess.run(["nm", "-C", library], check=True, capture_output=True, text=True).stdout
    found = set()
    for line in out.splitlines():
        symbol = re.match(r"^\s*(?:[0-9a-f]+\s+)?([A-Za-z?])\s+(.+)$", line)  # [address] kind name
        if not symbol:
            continue
        kind, name = symbol.groups()
        if "nlohmann" in name:
            found.add(name.split("(")[0][:100])
        elif kind == "U" and re.sub(r"@.*", "", name) in PROCESS_CALLS:
            found.add(name)
    return sorted(found)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("library", help="the library file to check (autograd's)")
    parser.add_argument("--expect-found", action="store_true",
                        help="the library must fail the check (viz's): the check's own test")
    args = parser.parse_args()
    found = offending_symbols(args.library)
    if args.expect_found:
        if not found:
            print(f"{args.library}: expected JSON or process symbols and found none: the check is blind")
            return 1
        print(f"{args.library}: the check finds {len(found)} symbols, e.g. {found[0]}")
        return 0
    if found:
        print(f"{args.library} must link no JSON library and start no process; it has:")
        for name in found[:20]:
            print("  " + name)
        return 1
    print(f"{args.library}: no JSON code, no process started")
    return 0


if __name__ == "__main__":
    sys.exit(main())
