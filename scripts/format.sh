#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# format.sh [--check] - format every C++ file git tracks with .clang-format (clang-format 14,
# Debian's clang-format package); with --check, change nothing and list the files that are
# not formatted (exit 1 if any).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
formatter=${CLANG_FORMAT:-clang-format}
command -v "$formatter" > /dev/null || { echo "format.sh: $formatter not found (scripts/setup.sh installs clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cc')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    "$formatter" --style=file "$f" | cmp -s - "$f" || bad+=("$f")
  done
  if ((${#bad[@]})); then
    printf 'not formatted (run scripts/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
  exit 0
fi
"$formatter" --style=file -i "${files[@]}"
echo "format.sh: formatted ${#files[@]} files"
