#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_docs_test.sh PYTHON CHECKER - the docs check finds each kind of problem in a small
# tree made here, and passes the same tree once the problems are mended.
set -euo pipefail
python=$1
checker=$2
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT

mkdir -p "$tree/core/vocabulary/include/lantern" "$tree/instrumentation/format/include/lantern/trace" "$tree/docs"
cat > "$tree/core/vocabulary/include/lantern/vocabulary.hpp" <<'CPP'
#define LANTERN_EVENTS(X) \
  X(task_begin, 0, tasks, "task", id, "", none, "") \
  X(dropped, 14, off, "count", count, "reason", id, "")
struct Scheduler { void run(); };
CPP
cat > "$tree/instrumentation/format/include/lantern/trace/format.hpp" <<'CPP'
// SPDX-License-Identifier: Apache-2.0
inline constexpr int kFormatVersion = 3;
// `dropped` is id 13 in this comment, which is wrong.
CPP
# The narration is assembled here, so that this test's own text does not narrate
# history. From docs/, two levels up is outside the tree.
narration="Until issue"" 16 this was slow"
outside="../../elsewhere/notes.md"
cat > "$tree/docs/guide.md" <<MD
# Guide
## Running it
See [the other doc](other.md), [a section](#running-it), [a lost one](#gone) and \`core/missing.hpp\`.
\`Scheduler::run\` exists; \`Scheduler::vanish\` and \`StealResult\` do not.
The format version is <!-- fact format_version -->2.
${narration}; see ${outside} and \`HOUSE_RULES.md\`.
MD
cat > "$tree/docs/other.md" <<'MD'
# Other
MD

expect() {  # expect PATTERN: the checker's report names it
  grep -qF -- "$1" "$tree/report" || { echo "FAIL: the report lacks: $1"; cat "$tree/report"; exit 1; }
}
if "$python" "$checker" "$tree" 2> "$tree/report"; then
  echo "FAIL: the checker passed a tree with problems"; cat "$tree/report"; exit 1
fi
expect "docs/guide.md:3: link to a missing section: #gone"
expect "docs/guide.md:3: cites a path that does not exist: core/missing.hpp"
expect "names \`Scheduler::vanish\`, which the code does not have (vanish)"
expect "names \`StealResult\`"
expect "docs/guide.md:5: says format_version is 2; the code says 3"
expect "docs/guide.md:6: narrates history"
expect "docs/guide.md:6: cites material outside the repository: ${outside}"
expect "docs/guide.md:6: cites a path that does not exist: HOUSE_RULES.md"
expect "format.hpp:3: says \`dropped\` is id 13; the vocabulary says 14"
expect "vocabulary.hpp:1: has no SPDX-License-Identifier line"
grep -q "format.hpp:1" "$tree/report" && { echo "FAIL: a licensed file was reported"; cat "$tree/report"; exit 1; }
grep -q "other.md" "$tree/report" && { echo "FAIL: a good link was reported"; cat "$tree/report"; exit 1; }
grep -q "Scheduler::run" "$tree/report" && { echo "FAIL: an existing name was reported"; cat "$tree/report"; exit 1; }

# Mended, the same tree passes.
cat > "$tree/docs/guide.md" <<'MD'
# Guide
## Running it
See [the other doc](other.md), [a section](#running-it) and `core/vocabulary/include/lantern/vocabulary.hpp`.
`Scheduler::run` exists.
The format version is <!-- fact format_version -->3.
MD
sed -i 's/is id 13/is id 14/' "$tree/instrumentation/format/include/lantern/trace/format.hpp"
sed -i '1i // SPDX-License-Identifier: Apache-2.0' "$tree/core/vocabulary/include/lantern/vocabulary.hpp"
"$python" "$checker" "$tree" || { echo "FAIL: the mended tree did not pass"; exit 1; }
echo "check_docs finds each problem: ok"
