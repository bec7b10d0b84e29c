# shellcheck shell=bash
# Sourced by the tests that run a program from the outside (tests/*/test_cli.sh): a tally of checks, and
# expect_failure. The caller prints "$passed passed, $failed failed" and exits with [ $failed -eq 0 ].
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

# expect_failure NAME EXPECTED-TEXT COMMAND...: exits non-zero and says EXPECTED-TEXT.
expect_failure() {
  local name=$1 expected=$2
  shift 2
  local out status
  out=$("$@" 2>&1)
  status=$?
  if [ $status -eq 0 ]; then
    bad "$name: exited 0"
  elif ! grep -qF -- "$expected" <<<"$out"; then
    bad "$name: expected '$expected' in: $out"
  else
    ok
  fi
}
