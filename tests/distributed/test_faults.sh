#!/usr/bin/env bash
# One failing rank ends the whole MPI job within seconds, with a message naming the rank, leaving no
# process behind and the last checkpoint intact: an exception on rank 1, then rank 1 killed by SIGKILL.
#
#   tests/distributed/test_faults.sh MPIEXEC FAULT_PROBE
set -u
mpiexec=$1 probe=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }

for mode in throw kill; do
  start=$(date +%s)
  out=$(timeout 60 "$mpiexec" --allow-run-as-root --oversubscribe -np 2 "$probe" $mode "$tmp/checkpoint-$mode" 2>&1)
  status=$?
  seconds=$(($(date +%s) - start))
  [ $status -ne 0 ] && [ $status -ne 124 ] && ok || bad "$mode: exit status $status (124: still running after 60 s)"
  [ $seconds -le 15 ] && ok || bad "$mode: the job took $seconds s to end"
  if [ $mode = throw ]; then
    grep -qF "rank 1 of 2: error: the data folder is missing on this machine" <<<"$out" && ok ||
      bad "$mode: no message naming rank 1 in: $out"
  else
    grep -qiE "rank 1 .*(signal 9|killed)" <<<"$out" && ok || bad "$mode: no message naming rank 1 in: $out"
  fi
  grep -q unreachable <<<"$out" && bad "$mode: rank 0 went past the failed collective" || ok
  sleep 1
  pgrep -f "$probe $mode" >/dev/null && bad "$mode: a rank is still running" || ok
  [ "$(cat "$tmp/checkpoint-$mode/weights" 2>/dev/null)" = complete ] && ok || bad "$mode: the checkpoint is not intact"
done

echo "faults: $passed passed, $failed failed"
[ $failed -eq 0 ]
