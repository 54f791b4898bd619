#!/usr/bin/env bash
# Installs what mcugen's tests and demo need on a Debian machine (apt-get, as
# root), and only what is missing. Safe to run again.
#
#   scripts/setup.sh        everything the tests need
#   scripts/setup.sh demo   only what `make demo` needs (the ARM toolchain and QEMU)
set -euo pipefail

have_cmd() { command -v "$1" >/dev/null 2>&1; }

# Go first: without it nothing below is of use (a fresh-machine check spent
# two minutes installing packages before saying Go was missing).
if ! have_cmd go; then
  echo "setup: Go 1.26 or newer is required (https://go.dev/dl/); it is not on PATH" >&2
  exit 1
fi

need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

have_cmd arm-none-eabi-gcc || need+=(gcc-arm-none-eabi)
have_pkg libnewlib-arm-none-eabi || need+=(libnewlib-arm-none-eabi)
have_cmd qemu-system-arm || need+=(qemu-system-arm)
have_cmd git || need+=(git)
if [ "${1:-}" != demo ]; then
have_cmd qemu-aarch64 || need+=(qemu-user)
have_cmd aarch64-linux-gnu-gcc || need+=(gcc-aarch64-linux-gnu)
have_pkg libc6-dev-arm64-cross || need+=(libc6-dev-arm64-cross)
have_pkg libonnx-testdata || need+=(libonnx-testdata)
have_cmd cmake || need+=(cmake)
have_cmd arduino-builder || need+=(arduino-builder)
have_pkg arduino-core-avr || need+=(arduino-core-avr)
have_cmd avr-gcc || need+=(gcc-avr)
have_pkg avr-libc || need+=(avr-libc)
have_cmd simavr || need+=(simavr)
have_cmd bazel || need+=(bazel-bootstrap)
have_cmd gcc || need+=(gcc)
have_cmd clang || need+=(clang)
have_pkg libclang-rt-14-dev || need+=(libclang-rt-14-dev)
have_cmd make || need+=(make)
{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; } || need+=(python3-numpy)
{ [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'from onnx import numpy_helper' 2>/dev/null; } || need+=(python3-onnx)
fi

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing Debian packages: ${need[*]}" >&2
    echo "setup: run as root, or: sudo apt-get install -y ${need[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

echo "setup: toolchain ready ($(go version | cut -d' ' -f3), $(arm-none-eabi-gcc -dumpversion 2>/dev/null || echo no arm gcc), qemu $(qemu-system-arm --version | head -1 | awk '{print $4}'))"
