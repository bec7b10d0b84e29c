#!/usr/bin/env bash
# One training step of a Transformer encoder classifier, minigrad against PyTorch: bench/train_step.cpp
# (minigrad-train-step) and bench/train_step.py build the same model (embedding·√d + sinusoids, post-norm
# encoder layers with biased projections, dropout 0.1, key padding by valid lengths, masked mean pooling,
# a linear head, cross-entropy, Adam 1e-3) and time zero_grad + forward + backward + step on the same
# configurations (d, heads, ffn, layers, seq, batch):
#
#   A (128,4,512,2,128,32)   B (64,4,256,2,64,16)   C (256,8,1024,2,256,32)   S (64,2,128,1,512,64)
#
# For each round, configuration and thread count it runs, as separate processes: a raw-sgemm peak (the
# reference for the matmul rate), minigrad's products alone (the step's matrix products with nothing else:
# the highest share of the peak its step can reach), minigrad, PyTorch, and PyTorch with glibc's malloc set
# up as minigrad's (mallopt, tensor/storage.cpp), swapping the order of minigrad and PyTorch from one round
# to the next.
# PyTorch gets minigrad's OpenBLAS build (OpenMP) through LD_LIBRARY_PATH. The table gives medians over
# the rounds of each run's median step time.
#
# Each of it runs under each kernel set asked for, the two alternating within a round: "pinned", OpenBLAS's
# kernels as this environment pins them (OPENBLAS_CORETYPE, which the tests and CI keep), and "own",
# OpenBLAS's own choice for this CPU (the command run with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset,
# as on a user's machine). Without OPENBLAS_CORETYPE the two are the same, and only "own" runs.
#
#   bench/train-step.sh [--rounds 3] [--configs "A B C S"] [--threads "1 2"] [--steps N | --steps "A=15 C=3"]
#                       [--kernels "pinned own"] [--warmup 2] [--no-mallopt] [--install-torch]
#
# It holds no lock itself: on a shared machine, run it as  flock /tmp/minigrad-cpu.lock bench/train-step.sh
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3 configs="A B C S" thread_counts="1 2" warmup=2 install_torch=0 mallopt=1 kernel_sets=""
# Timed steps per configuration, so that each run of minigrad lasts a few seconds on 2 cores.
declare -A steps=([A]=15 [B]=100 [C]=3 [S]=5)
usage() { sed -n '/^#   bench/,/^#  *\[--warmup/p' "$0" | sed 's/^# //'; }
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --threads) thread_counts=$2; shift 2 ;;
    --steps)
      for s in $2; do  # "N" for every configuration, or "X=N" for configuration X
        if [[ $s =~ ^[0-9]+$ ]]; then for c in "${!steps[@]}"; do steps[$c]=$s; done
        elif [[ $s =~ ^[ABCS]=[0-9]+$ ]]; then steps[${s%%=*}]=${s#*=}
        else echo "--steps: '$s' is neither N nor X=N (X one of A B C S)" >&2; exit 2; fi
      done
      shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --kernels) kernel_sets=$2; shift 2 ;;
    --no-mallopt) mallopt=0; shift ;;
    --install-torch) install_torch=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
for c in $configs; do
  [[ $c =~ ^[ABCS]$ ]] || { echo "--configs: unknown configuration '$c' (A B C S)" >&2; exit 2; }
done
for t in $thread_counts; do
  [[ $t =~ ^[1-9][0-9]*$ ]] || { echo "--threads: '$t' is not a thread count" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ && $warmup =~ ^[0-9]+$ ]] || { echo "--rounds and --warmup take numbers" >&2; exit 2; }
for k in $kernel_sets; do
  [[ $k =~ ^(pinned|own)$ ]] || { echo "--kernels: unknown kernel set '$k' (pinned, own)" >&2; exit 2; }
done

bin=build/release/bench/minigrad-train-step
if [ ! -x "$bin" ]; then
  echo "building $bin"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  [ -f build/release/CMakeCache.txt ] || cmake -S . -B build/release -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
  cmake --build build/release -j2 --target minigrad-train-step >/dev/null
fi

# shellcheck source=scripts/openblas-env.sh
source scripts/openblas-env.sh  # OpenBLAS's kernels as the jobs get them, for minigrad and PyTorch alike
if [ -z "$kernel_sets" ]; then
  kernel_sets=own
  [ -n "${OPENBLAS_CORETYPE:-}" ] && kernel_sets="pinned own"
fi
if [ -z "${OPENBLAS_CORETYPE:-}" ] && [[ $kernel_sets == *pinned* ]]; then
  echo "--kernels: 'pinned' asks for the kernels OPENBLAS_CORETYPE pins, and it is not set: 'own' only" >&2
  kernel_sets=own
fi
python=/usr/bin/python3  # Debian's python3-torch lives here, not in a pyenv
if ! "$python" -c 'import torch' 2>/dev/null; then
  if [ "$install_torch" = 1 ]; then
    apt-get install -y python3-torch
  else
    echo "PyTorch is not installed for $python (apt-get install python3-torch, or pass --install-torch):"
    echo "running minigrad only"
    python=""
  fi
fi

# The OpenBLAS build minigrad runs with (its run path picks it); PyTorch is given the same folder, whose
# libblas.so.3 (Debian's layout) then comes before the system-wide alternative.
blas_lib=$(ldd "$bin" | awk '/libopenblas/ {print $3; exit}')
blas_dir=$(dirname "$(readlink -f "$blas_lib")")
torch_env=(env "LD_LIBRARY_PATH=$blas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
results=$out/results  # every run's result line, prefixed with "round=R"

echo "# minigrad vs PyTorch: one training step of an encoder classifier"
# shellcheck source=bench/machine.sh
source bench/machine.sh
echo "machine: $(describe_machine), load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '$1 > 0.5 { print "warning: the machine is busy (load average " $1 "): other work skews the figures, two threads most" }' /proc/loadavg
echo "threads: $thread_counts; rounds: $rounds; configurations: $configs; kernel sets: $kernel_sets" \
  "(pinned: OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}; own: OpenBLAS's own choice)"
echo -n "timed steps per run:"
for c in $configs; do echo -n " $c=${steps[$c]}"; done
echo " (after $warmup warm-up step(s)); ms/step = median step of a run, then median over the rounds"
echo "minigrad's BLAS: $(readlink -f "$blas_lib")"
if [ -n "$python" ]; then
  echo "PyTorch: $("${torch_env[@]}" "$python" -c 'import torch; print(torch.__version__)'), run with LD_LIBRARY_PATH=$blas_dir"
fi
echo

run() {  # round, configuration, kernel set, then the command; keeps its result line and prints it
  local round=$1 config=$2 kset=$3 line
  shift 3
  # The pinned kernels: the environment as it is; OpenBLAS's own: its two settings unset.
  local prefix=(env)
  [ "$kset" = own ] && prefix=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
  line=$("${prefix[@]}" "$@" | grep '^result ') || { echo "failed: $*" >&2; return 1; }
  echo "round=$round for=$config set=$kset $line" >>"$results"
  echo "$line"
}
field() { sed -nE "s/.* $1=([^ ]*).*/\1/p" <<<"$2"; }

torch_variants=()
if [ -n "$python" ]; then
  torch_variants=(default)
  [ "$mallopt" = 1 ] && torch_variants+=(--mallopt)
fi
for round in $(seq 1 "$rounds"); do
  for c in $configs; do
    for t in $thread_counts; do
      threads_env=(env "MINIGRAD_NUM_THREADS=$t" "OMP_NUM_THREADS=$t")
      args=(--config "$c" --steps "${steps[$c]}" --warmup "$warmup" --threads "$t")
      for k in $kernel_sets; do
        line=$(run "$round" "$c" "$k" "${threads_env[@]}" "$bin" --sgemm-peak --threads "$t")
        summary="round $round/$rounds  $c  $t thread(s)  $(field blas_kernels "$line"):  sgemm $(field gflops "$line") GFLOP/s"
        line=$(run "$round" "$c" "$k" "${threads_env[@]}" "$bin" --config "$c" --products-alone --threads "$t")
        summary+="  products alone $(field ms_per_step "$line") ms"
        # Odd rounds run minigrad first, even rounds last, so that neither always follows the other.
        order=(minigrad "${torch_variants[@]}")
        [ $((round % 2)) = 0 ] && order=("${torch_variants[@]}" minigrad)
        for impl in "${order[@]}"; do
          case $impl in
            minigrad) line=$(run "$round" "$c" "$k" "${threads_env[@]}" "$bin" "${args[@]}") ;;
            default) line=$(run "$round" "$c" "$k" "${threads_env[@]}" "${torch_env[@]}" "$python" bench/train_step.py "${args[@]}") ;;
            *) line=$(run "$round" "$c" "$k" "${threads_env[@]}" "${torch_env[@]}" "$python" bench/train_step.py "${args[@]}" "$impl") ;;
          esac
          summary+="  $(field impl "$line") $(field ms_per_step "$line") ms"
        done
        echo "$summary  (load $(cut -d' ' -f1 /proc/loadavg))"
      done
    done
  done
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"

# The median over rounds of FIELD in the result lines of IMPL, CONFIG, THREADS under the kernel set $kset;
# "-" if there are none.
stat() {
  awk -v impl="$1" -v config="$2" -v threads="$3" -v key="$4" -v set="$kset" '
    { delete kv; for (i = 1; i <= NF; i++) if (split($i, p, "=") == 2) kv[p[1]] = p[2] }
    kv["impl"] == impl && kv["for"] == config && kv["threads"] == threads && kv["set"] == set { print kv[key] }
  ' "$results" | sort -g | awk 'BEGIN { OFMT = "%.10g" } { v[NR] = $1 }
    END { if (NR == 0) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
# A number formatted, or "-" if missing.
fmt() { awk -v a="$1" -v f="$2" 'BEGIN { if (a == "-") print "-"; else printf f "\n", a }'; }
# scale · a / b, formatted (default %.2f); "-" if either is missing.
ratio() {
  awk -v a="$1" -v b="$2" -v f="${3:-%.2f}" -v scale="${4:-1}" \
    'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf f "\n", scale * a / b }'
}
# A field of one implementation's result lines (blas, blas_kernels) under the kernel set $kset, each value
# once.
field_of() { awk -v impl="impl=$1" -v key="$2=" -v set="set=$kset" '$0 ~ set " " && $0 ~ impl " " { for (i = 1; i <= NF; i++) if (index($i, key) == 1) print substr($i, length(key) + 1) }' \
  "$results" | sort -u | tr '\n' ' '; }
blas_of() { field_of "$1" blas; }

echo
for kset in $kernel_sets; do
  echo "kernel set $kset: minigrad's BLAS (from /proc/self/maps): $(blas_of minigrad), OpenBLAS kernels: $(field_of minigrad blas_kernels | xargs)"
  [ -z "$python" ] || echo "kernel set $kset: PyTorch's BLAS (from /proc/self/maps): $(blas_of pytorch)"
done
echo
echo -n "| CPU (family/model), OpenBLAS kernels | config (d,heads,ffn,layers,seq,batch) | threads | minigrad ms/step | PyTorch ms/step | PyTorch ÷ minigrad "
echo -n "| PyTorch+mallopt ms/step | PyTorch+mallopt ÷ minigrad | minigrad tokens/s | peak RSS MB minigrad / PyTorch "
echo -n "| page faults/step minigrad / PyTorch | matmul GFLOP/s minigrad / PyTorch | % of sgemm peak minigrad / PyTorch "
echo "| % of sgemm peak, minigrad's products alone | sgemm peak GFLOP/s |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for kset in $kernel_sets; do
  cpu="$(short_machine), $(field_of minigrad blas_kernels | xargs)"
  for c in $configs; do
    for t in $thread_counts; do
      mg() { stat minigrad "$c" "$t" "$1"; }
      pt() { stat pytorch "$c" "$t" "$1"; }
      shape=$(for key in d heads ffn layers seq batch; do mg $key; done | paste -sd,)
      ms=$(mg ms_per_step) pms=$(pt ms_per_step) mms=$(stat pytorch-mallopt "$c" "$t" ms_per_step)
      peak=$(stat sgemm "$c" "$t" gflops)
      row="| $cpu | $c ($shape) | $t | $(fmt "$ms" %.1f) | $(fmt "$pms" %.1f) | $(ratio "$pms" "$ms")"
      row+=" | $(fmt "$mms" %.1f) | $(ratio "$mms" "$ms") | $(fmt "$(mg tokens_per_s)" %.0f)"
      row+=" | $(fmt "$(mg peak_rss_mb)" %.0f) / $(fmt "$(pt peak_rss_mb)" %.0f)"
      row+=" | $(fmt "$(mg faults_per_step)" %.0f) / $(fmt "$(pt faults_per_step)" %.0f)"
      row+=" | $(fmt "$(mg matmul_gflops)" %.1f) / $(fmt "$(pt matmul_gflops)" %.1f)"
      row+=" | $(ratio "$(mg matmul_gflops)" "$peak" %.0f%% 100) / $(ratio "$(pt matmul_gflops)" "$peak" %.0f%% 100)"
      row+=" | $(ratio "$(stat products_alone "$c" "$t" matmul_gflops)" "$peak" %.0f%% 100)"
      echo "$row | $(fmt "$peak" %.1f) |"
    done
  done
done

read -ra counts <<<"$thread_counts"
if [ "${#counts[@]}" -ge 2 ]; then
  first=${counts[0]}
  set -- "${counts[@]:1}"
  echo
  header="| kernels | config" rule="| --- | ---"
  for t in "$@"; do
    header+=" | minigrad $t-thread ÷ $first-thread speedup | PyTorch $t-thread ÷ $first-thread speedup"
    rule+=" | ---: | ---: "
  done
  echo "$header |"
  echo "$rule|"
  for kset in $kernel_sets; do
    kernels=$(field_of minigrad blas_kernels | xargs)
    for c in $configs; do
      row="| $kernels | $c"
      for t in "$@"; do
        row+=" | $(ratio "$(stat minigrad "$c" "$first" ms_per_step)" "$(stat minigrad "$c" "$t" ms_per_step)")"
        row+=" | $(ratio "$(stat pytorch "$c" "$first" ms_per_step)" "$(stat pytorch "$c" "$t" ms_per_step)")"
      done
      echo "$row |"
    done
  done
fi

# Both programs must have built the same model and counted the same work.
echo
echo -n "| config | parameters minigrad | parameters PyTorch | matmul GFLOP per step (both) "
echo "| loss at step 0 minigrad | loss at step 0 PyTorch | ln 2 |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
first_threads=${thread_counts%% *}
kset=${kernel_sets%% *}
status=0
for c in $configs; do
  mp=$(stat minigrad "$c" "$first_threads" params) pp=$(stat pytorch "$c" "$first_threads" params)
  mf=$(stat minigrad "$c" "$first_threads" step_gflop) pf=$(stat pytorch "$c" "$first_threads" step_gflop)
  [ "$pf" = - ] || [ "$pf" = "$mf" ] || mf+=" (PyTorch: $pf)"
  echo "| $c | $mp | $pp | $mf | $(stat minigrad "$c" "$first_threads" loss0) | $(stat pytorch "$c" "$first_threads" loss0) | 0.6931 |"
  if [ "$pp" != - ] && { [ "$mp" != "$pp" ] || [[ $mf == *PyTorch* ]]; }; then status=1; fi
done
[ "$status" = 0 ] || echo "MISMATCH: the two programs did not build the same model or count the same FLOPs" >&2
exit "$status"
