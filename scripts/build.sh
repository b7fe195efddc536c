#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build.sh NAME [CMAKE_ARGS...] [-- TARGET...] - configure and build into build/NAME
# with Ninja: every target, or only the TARGETs after "--" (and what they need).
#   scripts/build.sh release                        optimised build with tests, bench, examples
#   scripts/build.sh tsan -DLANTERN_SANITIZE=thread
#   scripts/build.sh release -- lantern_demo        the same configuration, one program
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
name=${1:?usage: build.sh NAME [CMAKE_ARGS...] [-- TARGET...]}
shift
cmake_args=()
while (($# > 0)) && [ "$1" != "--" ]; do
  cmake_args+=("$1")
  shift
done
targets=()
if (($# > 0)); then
  shift
  targets=(--target "$@")
fi
mkdir -p "$root/build"
# ccache (scripts/setup.sh installs it) makes a rebuild of unchanged sources cheap, also
# from another clone of the repository: paths are hashed relative to the repository.
launcher=()
if command -v ccache > /dev/null; then
  export CCACHE_BASEDIR="$root"
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$root" -B "$root/build/$name" -G Ninja "${launcher[@]}" "${cmake_args[@]}" > "$root/build/$name.configure.log" 2>&1 \
  || { mkdir -p "$root/build"; cat "$root/build/$name.configure.log"; exit 1; }
cmake --build "$root/build/$name" "${targets[@]}"
