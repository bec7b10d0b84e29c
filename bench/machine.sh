# shellcheck shell=bash
# Sourced by the benchmark scripts: one line saying which machine ran them. "AMD EPYC" names Zen 3 and
# Zen 4 alike, and the two differ (AVX-512 on Zen 4 only; minigrad compiles with -march=native), so the
# family, model and vector width are printed too.
describe_machine() {
  local family model avx512=no
  family=$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | xargs)
  model=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | xargs)
  grep -m1 '^flags' /proc/cpuinfo | grep -qw avx512f && avx512=yes
  echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs) (cpu family $family, model $model, AVX-512: $avx512)"
}

# The CPU in a few words, for a table's column: "AMD EPYC 25/17" (cpu family 25, model 17: a Zen 4).
short_machine() {
  local name family model
  name=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed -E 's/\((R|TM)\)//g; s/ Processor.*//; s/ [0-9]+-Core.*//' | xargs)
  family=$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | xargs)
  model=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | xargs)
  echo "$name $family/$model"
}
