#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# demo.sh [DEMO_OPTIONS...] - install what is missing, build, and run Lantern's demo.
#   scripts/demo.sh --help      what the demo's options are
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release -DCMAKE_BUILD_TYPE=Release > /dev/null
exec "$root/build/release/examples/lantern_demo" "$@"
