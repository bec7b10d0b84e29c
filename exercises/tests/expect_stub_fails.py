#!/usr/bin/env python3
"""Passes when a task's tests, built on its unfilled stub, fail through their checks.

That is: Boost.Test's exit status for failed checks (201), every test case failed, and the stub's
"not written yet" in the report; a crash, a sanitizer report, or a program that does not run is not a
failure of the checks, and fails this test. With the solution passing the same tests (CTest runs it too),
this keeps the course honest both ways: a test that stops checking, or a solution that stops being one,
is caught.

    expect_stub_fails.py build/release/exercises/exercise_01
"""
import re
import subprocess
import sys


def main():
    program = sys.argv[1]
    try:
        run = subprocess.run([program, "--log_level=error", "--report_level=short"],
                             capture_output=True, text=True, timeout=600)
    except OSError as error:
        sys.exit(f"{program}: does not run: {error}")
    output = run.stdout + run.stderr
    problems = []
    if run.returncode != 201:
        problems.append(f"exit status {run.returncode}, where failed checks give 201")
    if "not written yet" not in output:
        problems.append('the report does not say "not written yet"')
    counts = re.search(r"(\d+) test cases? out of (\d+) failed", output)
    if not counts:
        problems.append("no report of failed test cases")
    elif counts.group(1) != counts.group(2):
        problems.append("not every test case failed: one passes without the task written")
    for sign in ("AddressSanitizer", "LeakSanitizer", "runtime error:", "memory access violation", "signal: "):
        if sign in output:
            problems.append(f"the program crashed or a sanitizer reported ({sign!r})")
    if problems:
        print(output)
        sys.exit(f"{program} on the stub: " + "; ".join(problems))
    print(f"{program} fails on the stub, as it should: {counts.group(0)}")


if __name__ == "__main__":
    main()
