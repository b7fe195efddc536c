#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# consumer_test.sh BUILD_DIR SOURCE_DIR: install Lantern from BUILD_DIR (already built:
# nothing is rebuilt) into a temporary prefix and check what it holds (licence, READMEs,
# Grafana dashboard), then build tests/consumer against it twice - with CMake's
# find_package(lantern), and with pkg-config's lantern.pc - and run both: once with
# settings in code, once with only LANTERN_* environment variables. Between the two, the
# package's components: found, optional, and unknown ones failing with their name.
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
# The licence, the documentation and the Grafana dashboard are installed with the package.
docs=$work/prefix/share/doc/lantern
grep -q "Apache License" "$docs/LICENSE" 2>/dev/null || fail "the package has no share/doc/lantern/LICENSE"
(cd "$source_dir" && git ls-files 2>/dev/null || find . -name README.md) | sed 's|^\./||' |
  grep -E '^(README\.md|(core|instrumentation|exporters|viewer)/(.*/)?README\.md)$' > "$work/readmes"
[ "$(wc -l < "$work/readmes")" -ge 10 ] || fail "found only $(wc -l < "$work/readmes") READMEs to look for in $source_dir"
while read -r readme; do
  cmp -s "$source_dir/$readme" "$docs/$readme" || fail "share/doc/lantern/$readme is not installed"
done < "$work/readmes"
metrics_reference=exporters/prometheus/README.md
grep -q "^## Metrics reference" "$docs/$metrics_reference" || fail "the installed $metrics_reference has no metrics reference"
dashboard=$work/prefix/share/lantern/grafana/lantern-dashboard.json
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$dashboard" 2> /dev/null \
  || fail "share/lantern/grafana/lantern-dashboard.json is not installed, or is not JSON"

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

# 2. Components: each exported target is one; a missing one fails with its name, in
# either spelling of the package's name (tests/consumer/components says what each case expects).
components() {  # components NAME CASE: configure tests/consumer/components; its output in $work/components.log
  rm -rf "$work/components"
  cmake -S "$source_dir/tests/consumer/components" -B "$work/components" -G Ninja -DNAME="$1" -DCASE="$2" \
    -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/components.log" 2>&1
}
for name in lantern Lantern; do
  for case in required optional; do
    components $name $case || { cat "$work/components.log"; fail "find_package($name) with components: $case"; }
  done
  components $name unknown || { cat "$work/components.log"; fail "find_package($name COMPONENTS core nonsense) was found"; }
  grep -q "'nonsense'" "$work/components.log" || { cat "$work/components.log"; fail "find_package($name COMPONENTS core nonsense) does not name it"; }
  if components $name required_unknown; then
    cat "$work/components.log"
    fail "find_package($name REQUIRED COMPONENTS core nonsense) succeeded"
  fi
  grep -q "no component 'nonsense'" "$work/components.log" \
    || { cat "$work/components.log"; fail "find_package($name REQUIRED COMPONENTS core nonsense) does not name it"; }
done

# 3. pkg-config: lantern.pc and nothing else, not even -std=c++20 (the .pc says it).
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs lantern) || fail "pkg-config does not find lantern.pc"
case " $(pkg-config --cflags lantern) " in
  *" -std=c++20 "*) ;;
  *) fail "pkg-config --cflags lantern has no -std=c++20: $(pkg-config --cflags lantern)" ;;
esac
${CXX:-c++} -O1 "$source_dir/tests/consumer/main.cpp" -o "$work/consumer_pc" $flags > "$work/pc.log" 2>&1 \
  || { cat "$work/pc.log"; echo "flags: $flags"; fail "the pkg-config build failed"; }
mkdir -p "$work/run-pc"
(cd "$work/run-pc" && "$work/consumer_pc" "$work/run-pc") || fail "the pkg-config-built consumer failed"
echo "install_consumer: the installed files, components, and CMake and pkg-config builds of tests/consumer pass"
