#!/usr/bin/env bash
# Resumable training from the outside: a training killed with SIGKILL and resumed with --resume ends
# with the same weights, byte for byte, as one that ran without interruption (same seed, process count
# and thread count) — in one process, and in two MPI ranks where one rank is killed.
#
#   tests/sentiment/test_resume.sh build/release/examples/minigrad-sentiment [MPIEXEC]
set -u
bin=$1
mpiexec=${2:-}
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL: $*"; failed=$((failed + 1)); }
export MINIGRAD_NUM_THREADS=1

words=(the movie plot actor scene was a and it story)
for label in pos neg; do
  mkdir -p "$tmp/imdb/train/$label"
  for i in $(seq 0 399); do
    text=""
    for j in 1 2 3 4 5 6 7 8 9 10; do text+="${words[$(((i * 7 + j * 3) % 10))]} "; done
    [ $label = pos ] && text+="great fun" || text+="awful bore"
    text+=" r$i"  # each text its own: training leaves out copies of held-out texts
    echo "$text" >"$tmp/imdb/train/$label/${i}_5.txt"
  done
done
run=(train --data "$tmp/imdb" --hiddens 16 --heads 2 --ffn 32 --batch-size 8 --epochs 3 --dropout 0.1
  --validation 40 --ngram-buckets 256
  --checkpoint-every 3 --no-eval --seed 5)

# now_ms: wall-clock milliseconds.
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# check_resume NAME LAUNCH...: the same run uninterrupted, and killed (rank 1 where there are ranks) at a
# random moment once a checkpoint exists, then resumed. The moment is drawn from the first third of the
# uninterrupted run's duration, so the test does not depend on how fast this machine is; a kill that still
# came after the end (a busy machine) is retried sooner, twice, before it counts as a failure.
check_resume() {
  local name=$1
  shift
  local start duration_ms
  start=$(now_ms)
  "$@" "$bin" "${run[@]}" --out "$tmp/$name-straight" >"$tmp/$name-straight.log" 2>&1 ||
    bad "$name: the uninterrupted run failed: $(tail -3 "$tmp/$name-straight.log")"
  duration_ms=$(($(now_ms) - start))
  local attempt launcher victim killed_in_time=no
  for attempt in 1 2 3; do
    rm -rf "$tmp/$name-killed"
    "$@" "$bin" "${run[@]}" --out "$tmp/$name-killed" >"$tmp/$name-killed.log" 2>&1 &
    launcher=$!
    for _ in $(seq 1 1000); do
      [ -e "$tmp/$name-killed/training_state.safetensors" ] && break
      sleep 0.01
    done
    # Attempt 1 waits up to a third of the run, attempt 2 up to a ninth, attempt 3 not at all.
    local wait_ms=$(((duration_ms / 3 ** attempt) * (attempt < 3) * RANDOM / 32768))
    sleep "$((wait_ms / 1000)).$(printf %03d $((wait_ms % 1000)))"
    # A real process, killed: rank 1 under MPI (the launcher then ends the job), else the trainer itself.
    victim=$(pgrep -f -- "--out $tmp/$name-killed" | grep -v "^$launcher\$" | tail -1)
    kill -9 "${victim:-$launcher}" 2>/dev/null
    wait $launcher 2>/dev/null
    if ! grep -qE "trained [0-9]+ steps" "$tmp/$name-killed.log"; then
      killed_in_time=yes
      break
    fi
  done
  [ $killed_in_time = yes ] || bad "$name: three kills all came after the run had finished ($duration_ms ms)"
  if "$@" "$bin" "${run[@]}" --out "$tmp/$name-killed" --resume "$tmp/$name-killed" >"$tmp/$name-resumed.log" 2>&1; then
    ok
  else
    bad "$name: resuming failed: $(tail -3 "$tmp/$name-resumed.log")"
  fi
  cmp -s "$tmp/$name-straight/model.safetensors" "$tmp/$name-killed/model.safetensors" && ok ||
    bad "$name: the resumed run's weights differ from the uninterrupted run's"
}

check_resume one
if [ -n "$mpiexec" ]; then
  check_resume two "$mpiexec" --allow-run-as-root --oversubscribe -np 2
  grep -q "2 process(es)" "$tmp/two-straight.log" && ok || bad "two: not run on 2 ranks: $(head -3 "$tmp/two-straight.log")"
  # Rank 0's time in collectives is reported whole and in its two parts, which add up to it.
  shares=$(grep -oE "[0-9.]+% of rank 0's training time in MPI collectives \([0-9.]+% waiting for the slowest rank to end its step, -?[0-9.]+% summing\)" "$tmp/two-straight.log")
  read -r all waiting summing < <(grep -oE -- "-?[0-9.]+%" <<<"$shares" | tr -d % | tr '\n' ' ')
  awk -v a="${all:-x}" -v w="${waiting:-x}" -v s="${summing:-x}" \
    'BEGIN {exit !(a ~ /^[0-9.]+$/ && w >= 0 && s >= 0 && (a - w - s) ^ 2 < 0.0003)}' && ok ||
    bad "two: the collectives' shares (all, waiting, summing) are '$all' '$waiting' '$summing' in: $(grep trained "$tmp/two-straight.log")"
  # Resuming with another number of processes is refused, saying so.
  out=$("$bin" "${run[@]}" --out "$tmp/two-other" --resume "$tmp/two-killed" 2>&1)
  grep -qF "saved by a run of 2 rank(s); this run has 1" <<<"$out" && ok || bad "rank count: $out"
fi
if [ -n "$mpiexec" ]; then
  # Bad input seen by one rank ends the whole job at once, with that rank's message: never a hang.
  mpi=("$mpiexec" --allow-run-as-root --oversubscribe)
  expect_job_failure() {
    local name=$1 expected=$2
    shift 2
    local start out status
    start=$(date +%s)
    out=$(timeout 60 "$@" 2>&1)
    status=$?
    if [ $status -eq 0 ] || [ $status -eq 124 ]; then
      bad "$name: exit status $status (124: still running after 60 s)"
    elif ! grep -qF -- "$expected" <<<"$out"; then
      bad "$name: expected '$expected' in: $out"
    elif [ $(($(date +%s) - start)) -gt 20 ]; then
      bad "$name: took $(($(date +%s) - start)) s to end"
    else
      ok
    fi
  }
  expect_job_failure "more ranks than examples in a batch" \
    "error: train: --batch-size 2 is smaller than the 3 ranks: every rank needs a share of each batch" \
    "${mpi[@]}" -np 3 "$bin" "${run[@]/#8/2}" --out "$tmp/ranks"  # --batch-size 8 -> 2
  # MPMD launch: rank 1 is given a data folder that does not exist on "its machine".
  expect_job_failure "data missing on one rank" "rank 1 of 2: error: load_imdb: no folder $tmp/elsewhere/train/neg" \
    "${mpi[@]}" -np 1 "$bin" "${run[@]}" --out "$tmp/mpmd" : -np 1 "$bin" "${run[@]/$tmp\/imdb/$tmp/elsewhere}" --out "$tmp/mpmd"
  touch "$tmp/file"
  expect_job_failure "checkpoint folder not writable" "rank 0 of 2: error: train --out: cannot create the folder $tmp/file" \
    "${mpi[@]}" -np 2 "$bin" "${run[@]}" --out "$tmp/file/out"
  sleep 1
  pgrep -f -- "$tmp" >/dev/null && bad "a rank is still running after the failed jobs" || ok
fi

# A checkpoint of another configuration is refused, saying what differs.
out=$("$bin" "${run[@]}" --lr 0.01 --out "$tmp/other" --resume "$tmp/one-killed" 2>&1)
grep -qF "was saved with another configuration: lr 0.002 -> 0.01" <<<"$out" && ok || bad "configuration: $out"

echo "resume: $passed passed, $failed failed"
[ $failed -eq 0 ]
