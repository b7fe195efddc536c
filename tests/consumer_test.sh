#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# consumer_test.sh BUILD_DIR SOURCE_DIR: install Lantern from BUILD_DIR (already built:
# nothing is rebuilt) into a temporary prefix, then build tests/consumer against it twice
# - with CMake's find_package(lantern), and with pkg-config's lantern.pc - and run both:
# once with settings in code, once with only LANTERN_* environment variables.
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install_consumer: $*" >&2; exit 1; }

cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log" || { cat "$work/install.log"; fail "cmake --install failed"; }
# Nothing but the prefix: no path into the source or build tree may leak into the package.
if grep -rl -e "$source_dir" -e "$(cd "$build_dir" && pwd)" "$work/prefix/lib" --include='*.cmake' --include='*.pc'; then
  fail "the installed package names the source or build tree (files above)"
fi
# The licence is installed with the package.
grep -q "Apache License" "$work/prefix/share/doc/lantern/LICENSE" 2>/dev/null || fail "the package has no share/doc/lantern/LICENSE"

# Every library a target links is a target the config finds (Threads::Threads,
# PkgConfig::..., prometheus-cpp::...), never a bare name like "uring" that the app's
# linker would have to find by luck.
bare=$(sed -n 's/.*INTERFACE_LINK_LIBRARIES "\(.*\)"/\1/p' "$work/prefix/lib/cmake/lantern/lanternTargets.cmake" |
  tr ';' '\n' | sed 's/^\\\$<LINK_ONLY:\(.*\)>$/\1/' | grep -v '::' || true)
[ -z "$bare" ] || fail "the installed targets link bare library names: $bare"

# 1. CMake: find_package(lantern) and nothing else.
cmake -S "$source_dir/tests/consumer" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configure failed"; }
cmake --build "$work/build" > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build failed"; }
mkdir -p "$work/run-code" "$work/run-env"
(cd "$work/run-code" && "$work/build/consumer" "$work/run-code") || fail "the CMake-built consumer failed (settings in code)"
(cd "$work/run-env" && LANTERN_TRACE="$work/run-env/env.trace" LANTERN_METRICS=127.0.0.1:0 LANTERN_LEVEL=tasks \
  "$work/build/consumer" --env "$work/run-env") || fail "the CMake-built consumer failed (environment)"
test -s "$work/run-env/env.trace" || fail "LANTERN_TRACE did not make $work/run-env/env.trace"

# 2. pkg-config: lantern.pc and nothing else.
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs lantern) || fail "pkg-config does not find lantern.pc"
${CXX:-c++} -std=c++20 -O1 "$source_dir/tests/consumer/main.cpp" -o "$work/consumer_pc" $flags > "$work/pc.log" 2>&1 \
  || { cat "$work/pc.log"; echo "flags: $flags"; fail "the pkg-config build failed"; }
mkdir -p "$work/run-pc"
(cd "$work/run-pc" && "$work/consumer_pc" "$work/run-pc") || fail "the pkg-config-built consumer failed"
echo "install_consumer: CMake and pkg-config builds of tests/consumer pass"
