#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# demo.sh [DEMO_OPTIONS...] - install what is missing, build, and run Lantern's demo.
#   scripts/demo.sh --help      what the demo's options are
# It installs only the packages building needs (setup.sh --build: the test-only ones
# wait for scripts/test.sh), and builds only what the demo and the commands it prints
# use: the demo, lantern-trace and lantern-view (the demo opens the viewer when a
# display is present). The configuration is exactly scripts/test.sh's Release one (same
# directory, build type and LANTERN_WERROR; a build that differed in any flag would be
# rebuilt from scratch by whichever runs next), so the test command later builds the rest
# on top, and a demo after the tests builds nothing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" --build
echo "demo: building the demo, lantern-trace and lantern-view in build/release"
mkdir -p "$root/build"
"$root/scripts/build.sh" release -DCMAKE_BUILD_TYPE=Release -DLANTERN_WERROR=ON -- lantern_demo lantern_trace_cli lantern_view \
  > "$root/build/demo-build.log" 2>&1 || { cat "$root/build/demo-build.log"; echo "demo: the build failed" >&2; exit 1; }
exec "$root/build/release/examples/lantern_demo" "$@"
