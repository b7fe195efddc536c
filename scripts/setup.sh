#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# setup.sh [--build] - install the Debian 12 packages Lantern builds and tests with, if
# missing. Uses sudo when not run as root. Safe to run again: it installs only what is
# missing.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config git ccache   # toolchain (ccache: cheap rebuilds)
  libgtest-dev libgmock-dev               # tests
  libbenchmark-dev libtbb-dev             # benchmarks (oneTBB is the peer)
  cargo librust-rayon-dev                 # bench/rayon: rayon, the fork-join peer, built offline
  liburing-dev                            # io_uring (core: IO sleep strategy, lantern/io.hpp)
  libcli11-dev                            # every program's command-line options (CLI11)
  libhwloc-dev                            # core: the machine's topology (caches, NUMA, cpusets, CPU kinds)
  libboost-dev                            # Boost.Lockfree (instrumentation)
  clang libclang-rt-14-dev                # libFuzzer target for the trace reader
  nlohmann-json3-dev                      # tests: parse JSON (Chrome export, Prometheus API)
  prometheus-cpp-dev                      # exporters/prometheus
  prometheus                              # the real server (and promtool) for end-to-end tests
  libimgui-dev libstb-dev libglfw3-dev libgl-dev   # viewer (lantern-view)
  xvfb xauth libgl1-mesa-dri              # viewer screenshot tests (a real window, headless GL)
  spin                                    # model check of the sleep protocol (core/sleep/sleep.pml)
  python3-minimal                         # scripts/check_docs.py (the docs check)
  clang-format                            # scripts/format.sh (the house style, .clang-format)
)

# setup.sh --build: only what configuring and building needs (scripts/demo.sh), without
# the packages that only the tests and benchmarks run: the fuzzer's clang, the Prometheus
# server, the headless X server, spin, clang-format (about half of the whole download),
# and cargo with rayon (the benchmarks' peer).
if [ "${1:-}" = "--build" ]; then
  tests_only=" clang libclang-rt-14-dev prometheus xvfb xauth spin clang-format cargo librust-rayon-dev "
  build=()
  for p in "${packages[@]}"; do
    [[ "$tests_only" == *" $p "* ]] || build+=("$p")
  done
  packages=("${build[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo > /dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
echo "setup: done"
