# shellcheck shell=bash
# Sourced by the job scripts. Debian 12's OpenBLAS (0.3.21) predates Intel's Sapphire and Emerald Rapids:
# on them it falls back to a generic kernel that runs sgemm about 8 times slower (32 against 268 GFLOP/s
# on one Emerald Rapids core, docs/performance.md). Every Intel CPU with AVX-512 runs the Skylake-X
# kernel well, so it is asked for there unless the caller chose one; AMD CPUs are left to OpenBLAS.
if [ -z "${OPENBLAS_CORETYPE:-}" ] && grep -q -m1 GenuineIntel /proc/cpuinfo && grep -qw -m1 avx512f /proc/cpuinfo; then
  export OPENBLAS_CORETYPE=SkylakeX
fi
