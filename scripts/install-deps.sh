#!/usr/bin/env bash
# Installs the Debian packages minigrad builds with, if any are missing. Needs root (or sudo) only when
# something is missing. Extra package names can be passed as arguments.
set -euo pipefail

# libopenblas-openmp-dev: the OpenMP build of OpenBLAS, which minigrad calls one thread at a time and
# which the PyTorch comparisons are given (see cmake/minigradDependencies.cmake). libopenmpi-dev, openmpi-bin: the distributed layer and its tests.
# procps: pgrep, with which the black-box tests check that no process is left behind. doxygen: the API
# reference (the docs target), which a test builds. python3: tests/docs/check_docs.py, which checks the
# docs' links, programs and outputs. pkgconf: the install test builds a program with minigrad.pc. zlib1g-dev:
# the image example reads Fashion-MNIST's gzip files.
packages=(g++ make cmake libopenblas-dev libopenblas-openmp-dev libboost-test-dev libcli11-dev
  nlohmann-json3-dev libplplot-dev plplot-driver-cairo libopenmpi-dev openmpi-bin procps doxygen python3
  pkgconf zlib1g-dev "$@")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "minigrad: installing missing packages: ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  sudo=()
elif command -v sudo >/dev/null; then
  sudo=(sudo)
else
  echo "minigrad: these packages are missing and this user cannot install them: ${missing[*]}" >&2
  echo "          ask an administrator to run: apt-get install ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
