# shellcheck shell=bash
# Sourced by the job scripts. Debian 12's OpenBLAS (0.3.21) predates Intel's Sapphire and Emerald Rapids:
# on them it falls back to a generic kernel that runs sgemm about 8 times slower (32 against 268 GFLOP/s
# on one Emerald Rapids core, docs/history/performance.md). Every Intel CPU with AVX-512 runs the Skylake-X
# kernel well, so it is asked for there unless the caller chose one; AMD CPUs are left to OpenBLAS.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q -m1 GenuineIntel /proc/cpuinfo && grep -qw -m1 avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
# A caller's choice is kept, but a choice of AVX2 kernels on a CPU with AVX-512 is said aloud: on a Zen 5
# whose environment set OPENBLAS_CORETYPE=Haswell, a training step ran 1.4 to 1.8 times as long as with
# the AVX-512 kernels OpenBLAS picks by itself (docs/performance.md, "OpenBLAS's kernels").
case ${OPENBLAS_CORETYPE:-} in
  "" | SkylakeX | Cooperlake | SapphireRapids) ;;
  *)
    if grep -qw -m1 avx512f /proc/cpuinfo; then
      echo "note: OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE asks OpenBLAS for kernels without AVX-512 on a CPU that has it;" \
        "matrix products may run much slower (docs/performance.md, \"OpenBLAS's kernels\"); unset it to let OpenBLAS choose" >&2
    fi
    ;;
esac
