#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_docs.py - keep the docs honest where a machine can.

Reads every file git tracks (or, outside a checkout, every file below the root) and checks:

  links     every relative Markdown link names a file that exists, and its #anchor a
            heading of that file;
  paths     every path a doc or comment cites (`core/README.md`, `detail/lane.hpp`,
            SLEEP.md) names a file or folder of the repository;
  names     every code name a Markdown doc cites in backticks (`Scheduler::run`,
            `TaskGroup`, `LANTERN_OBSERVER`) is declared or used in the code;
  history   no comment or doc narrates the project's history ("session 19", "issue 16",
            "before the fix"): docs say what is and why, git holds the history;
  outside   no relative path climbs out of the repository (a clone could not follow it);
  licence   every source file names its licence in an SPDX line near its top;
  facts     numbers that come from the code are quoted from it: a doc writes
            `<!-- fact NAME -->VALUE`, and VALUE must equal what FACTS below reads from the
            code; and every "`EVENT` is id N" matches the event table.

Usage: check_docs.py [ROOT]   (default: the repository this script is in)
Exit status: 0 when every check passes, 1 with one line per problem on stderr.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()

SOURCE_SUFFIXES = {".hpp", ".cpp", ".h", ".cc", ".py", ".sh", ".cmake", ".in", ".pml", ".rs", ".toml"}
TEXT_SUFFIXES = SOURCE_SUFFIXES | {".md", ".txt", ".json", ".yml", ".yaml"}
SOURCE_NAMES = {"CMakeLists.txt", "run", "before-stop"}
# Paths that are made by a build or a run, not kept in the repository.
GENERATED_PREFIXES = ("build/", "/", "~", "$", "../", "http", "lantern-demo", "out/")
# Recorded results may quote older commits' file names and history; they are data.
# Recorded results quote the files a run wrote and the code of the commit they name: their
# links are checked, their paths and names are data.
DATA_DOCS = {"bench/RESULTS.md"}
# The checker and its self-test, whose fixtures are wrong on purpose.
SELF = {"scripts/check_docs.py", "tests/style/check_docs_test.sh"}


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True, text=True).stdout
        files = [f for f in out.splitlines() if f and (ROOT / f).is_file()]
        if files:
            return sorted(set(files))
    except (OSError, subprocess.CalledProcessError):
        pass
    found = (p.relative_to(ROOT) for p in ROOT.rglob("*") if p.is_file())
    return sorted(str(p) for p in found if ".git" not in p.parts and "build" not in p.parts)


FILES = tracked_files()
FILE_SET = set(FILES)
DIR_SET = {str(Path(f).parent) for f in FILES} | {str(p) for f in FILES for p in Path(f).parents}
DIR_NAMES = {Path(d).name for d in DIR_SET}
TEMPLATE_NAMES = {Path(f).name for f in FILES if f.endswith(".in")}


def is_text(path: str) -> bool:
    p = Path(path)
    return p.suffix in TEXT_SUFFIXES or p.name in SOURCE_NAMES


def is_source(path: str) -> bool:
    p = Path(path)
    return p.suffix in SOURCE_SUFFIXES or p.name in SOURCE_NAMES


def read(path: str) -> str:
    try:
        return (ROOT / path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


TEXTS = {f: read(f) for f in FILES if is_text(f)}
problems: list[str] = []


def problem(path: str, line: int, what: str) -> None:
    problems.append(f"{path}:{line}: {what}")


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


# ---------------------------------------------------------------------------------------
# Which parts of a file are prose: a Markdown doc is prose but for its fenced code; a
# source file's prose is its comments.
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def markdown_prose(text: str) -> str:
    """The doc with fenced code blocks blanked (line numbers kept)."""
    return FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


COMMENT = {
    "c": re.compile(r"//[^\n]*|/\*.*?\*/", re.S),
    "hash": re.compile(r"#[^\n]*"),
}


def comments(path: str, text: str) -> list[tuple[int, str]]:
    """(offset, comment text) for each comment of a source file."""
    suffix = Path(path).suffix
    if suffix in {".hpp", ".cpp", ".h", ".cc", ".pml", ".rs"}:
        kind = "c"
    elif suffix in {".py", ".sh", ".cmake", ".in", ".toml"} or Path(path).name in SOURCE_NAMES:
        kind = "hash"
    else:
        return []
    return [(m.start(), m.group(0)) for m in COMMENT[kind].finditer(text)]


def prose_pieces(path: str, text: str) -> list[tuple[int, str]]:
    if path.endswith(".md"):
        return [(0, markdown_prose(text))]
    return comments(path, text)


# ---------------------------------------------------------------------------------------
# links: [text](target) in Markdown.
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    s = re.sub(r"[`*_~]", "", heading.strip().lower())
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path: str) -> set[str]:
    text = markdown_prose(TEXTS.get(path, ""))
    result: set[str] = set()
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M):
        base = slug(m.group(1))
        n = 0
        name = base
        while name in result:
            n += 1
            name = f"{base}-{n}"
        result.add(name)
    return result


def check_links(path: str, text: str) -> None:
    prose = markdown_prose(text)
    for m in LINK.finditer(prose):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        resolved = path if not file_part else os.path.normpath(str(Path(path).parent / file_part))
        if resolved.startswith(".."):
            problem(path, line_of(prose, m.start()), f"link leaves the repository: {target}")
            continue
        if resolved not in FILE_SET and resolved not in DIR_SET:
            problem(path, line_of(prose, m.start()), f"link to a missing file: {target}")
            continue
        if anchor and resolved.endswith(".md") and anchor not in anchors(resolved):
            problem(path, line_of(prose, m.start()), f"link to a missing section: {target}")


# ---------------------------------------------------------------------------------------
# paths: a cited file or folder exists. Matched on a doc's backticked tokens and, in docs
# and comments alike, on any word that ends in a file suffix of the repository's own.
PATH_SUFFIXES = r"(?:hpp|cpp|md|sh|py|pml|cmake|json|txt)"
PATH_WORD = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\." + PATH_SUFFIXES + r")(?![\w/])")
BACKTICK = re.compile(r"`([^`\n]+)`")


def path_exists(cited: str, near: str) -> bool:
    cited = cited.rstrip("/")
    if cited.startswith("./"):
        cited = cited[2:]
    candidates = [cited, os.path.normpath(str(Path(near).parent / cited))]
    # A file configure makes from a template (lantern/version.hpp from version.hpp.in),
    # or a program built from one source file (bench/io_bench from io_bench.cpp).
    candidates += [c + ".in" for c in candidates] + [c + ".cpp" for c in candidates]
    if any(c in FILE_SET or c in DIR_SET for c in candidates):
        return True
    if Path(cited).name + ".in" in TEMPLATE_NAMES:
        return True
    # A path given from an include root or a folder below the root: a suffix of a real path.
    suffix = "/" + cited
    return any(f.endswith(suffix) for f in FILES) or any(d.endswith(suffix) for d in DIR_SET)


def looks_generated(cited: str) -> bool:
    return cited.startswith(GENERATED_PREFIXES) or any(ch in cited for ch in "*{}<>$%[]") or "..." in cited \
        or re.search(r"\b(demo|my|your|app|out|t|a|b|trace)\.(json|txt|cpp)$", cited) is not None


def check_paths(path: str, text: str) -> None:
    seen: set[tuple[int, str]] = set()
    for base, piece in prose_pieces(path, text):
        tokens = [(m.start(), m.group(1)) for m in PATH_WORD.finditer(piece)]
        if path.endswith(".md"):
            for m in BACKTICK.finditer(piece):
                token = m.group(1).strip()
                if "/" in token and " " not in token and re.fullmatch(r"[\w./-]+/?", token) \
                        and not re.search(r"\.\w+$", token) and token.split("/")[0] in DIR_NAMES:
                    tokens.append((m.start(), token))  # a folder, such as `core/include/`
        for offset, cited in tokens:
            if looks_generated(cited) or path_exists(cited, path):
                continue
            if re.fullmatch(r"[\w-]+\.(json|txt)", cited):  # a file a user makes: out.json
                continue
            key = (line_of(text, base + offset), cited)
            if key not in seen:
                seen.add(key)
                problem(path, key[0], f"cites a path that does not exist: {cited}")


# ---------------------------------------------------------------------------------------
# names: a Markdown doc's backticked code names exist in the code.
SOURCE_WORDS: set[str] = set()
for f, t in TEXTS.items():
    if is_source(f):
        SOURCE_WORDS.update(re.findall(r"[A-Za-z_]\w*", t))

FOREIGN_NAMESPACES = {"std", "prometheus", "ImGui", "tbb", "oneapi", "rayon", "hwloc", "boost", "testing",
                      "CLI", "nlohmann", "GTest", "PkgConfig", "benchmark", "Threads", "civetweb", "io_uring"}
CODE_NAME = re.compile(r"^~?[A-Za-z_]\w*(?:::~?[A-Za-z_]\w*)*(?:\(\))?$")


def worth_checking(name: str) -> bool:
    parts = name.split("::")
    if parts[0] in FOREIGN_NAMESPACES:
        return False
    last = parts[-1].lstrip("~")
    if len(parts) > 1:
        return True
    if re.fullmatch(r"LANTERN_[A-Z0-9_]+", last):
        return True
    # A CamelCase type name: an upper-case start and another capital after a lower-case letter.
    return re.fullmatch(r"[A-Z][a-z0-9]+[A-Z]\w*", last) is not None


FOREIGN_MARK = re.compile(r"<!--\s*check_docs:\s*foreign\s+([^>]*?)\s*-->")


def check_names(path: str, text: str) -> None:
    """A doc that cites another project's names lists them: <!-- check_docs: foreign A B -->."""
    foreign = {w for m in FOREIGN_MARK.finditer(text) for w in m.group(1).split()}
    prose = markdown_prose(text)
    for m in BACKTICK.finditer(prose):
        token = m.group(1).strip()
        if not CODE_NAME.match(token) or not worth_checking(token.removesuffix("()")):
            continue
        words = [w.lstrip("~") for w in token.removesuffix("()").split("::")]
        if words[0] == "lantern":
            words = words[1:]
        missing = [w for w in words if w not in SOURCE_WORDS and w not in foreign]
        if missing:
            problem(path, line_of(prose, m.start()), f"names `{token}`, which the code does not have ({missing[0]})")


# ---------------------------------------------------------------------------------------
# history: comments and docs say what is.
HISTORY = re.compile(
    r"\b(?:[Ss]ession \d+|[Ii]ssue #?\d+|until issue|before the fix|after the fix|used to (?!\w+ (?:it|them)\b)"
    r"|RESULTS\.md, ['\"]?[Ss]ession)")


def check_history(path: str, text: str) -> None:
    for base, piece in prose_pieces(path, text):
        for m in HISTORY.finditer(piece):
            problem(path, line_of(text, base + m.start()), f"narrates history: \"{m.group(0)}\" (say what is; git holds history)")


# A relative path that climbs out of the repository: whatever it names is not here, so a
# clone cannot follow it. (A path that stays inside is the paths check's.)
CLIMBING = re.compile(r"(?<![\w/.$}-])((?:\.\./)+[\w.-]+(?:/[\w.-]+)*)")


def check_outside(path: str, text: str) -> None:
    if path in SELF:
        return
    for m in CLIMBING.finditer(text):
        if os.path.normpath(str(Path(path).parent / m.group(1))).startswith(".."):
            problem(path, line_of(text, m.start()), f"cites material outside the repository: {m.group(1)}")


LICENSED_SUFFIXES = {".hpp", ".cpp", ".h", ".cc", ".py", ".sh", ".cmake", ".in", ".pml"}
SPDX = re.compile(r"SPDX-License-Identifier: [\w.-]+")


def check_licence(path: str, text: str) -> None:
    p = Path(path)
    if p.suffix not in LICENSED_SUFFIXES and p.name not in SOURCE_NAMES:
        return
    if not SPDX.search("\n".join(text.splitlines()[:3])):
        problem(path, 1, "has no SPDX-License-Identifier line in its first three lines")


# ---------------------------------------------------------------------------------------
# facts: numbers read from the code.
def event_table() -> dict[str, int]:
    text = TEXTS.get("core/vocabulary/include/lantern/vocabulary.hpp", "")
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*X\((\w+),\s*(\d+),", text, re.M)}


EVENTS = event_table()


def from_code(path: str, pattern: str):
    def read_value() -> str | None:
        m = re.search(pattern, TEXTS.get(path, ""), re.M)
        return m.group(1) if m else None
    return read_value


FACTS = {
    "format_version": from_code("instrumentation/format/include/lantern/trace/format.hpp",
                                r"kFormatVersion\s*=\s*(\d+)"),
    "event_types": lambda: str(len(EVENTS)) if EVENTS else None,
}
FACT = re.compile(r"<!--\s*fact\s+([\w:]+)\s*-->\s*([^\s<|,;)]+)")
EVENT_ID_CLAIM = re.compile(r"`?\b(\w+)\b`?(?: event)? (?:is|has|as) (?:event )?id (\d+)")


def check_facts(path: str, text: str) -> None:
    for m in FACT.finditer(text):
        name, quoted = m.group(1), m.group(2).rstrip(".")
        if name.startswith("event_id:"):
            event = name.split(":", 1)[1]
            actual = str(EVENTS[event]) if event in EVENTS else None
        else:
            actual = FACTS[name]() if name in FACTS else None
        if actual is None:
            problem(path, line_of(text, m.start()), f"fact '{name}' is not one the checker can read from the code")
        elif quoted != actual:
            problem(path, line_of(text, m.start()), f"says {name} is {quoted}; the code says {actual}")
    if path == "core/vocabulary/include/lantern/vocabulary.hpp":
        return
    for base, piece in prose_pieces(path, text):
        for m in EVENT_ID_CLAIM.finditer(piece):
            event, quoted = m.group(1), int(m.group(2))
            if event in EVENTS and EVENTS[event] != quoted:
                problem(path, line_of(text, base + m.start()),
                        f"says `{event}` is id {quoted}; the vocabulary says {EVENTS[event]}")


def main() -> int:
    for path, text in TEXTS.items():
        if path.endswith(".md"):
            check_links(path, text)
            if path not in DATA_DOCS:
                check_names(path, text)
        if path in DATA_DOCS or path in SELF:
            continue
        if path.endswith(".md") or is_source(path):
            check_paths(path, text)
            check_history(path, text)
            check_facts(path, text)
        check_outside(path, text)
        check_licence(path, text)
    for p in problems:
        print(p, file=sys.stderr)
    docs = sum(1 for f in TEXTS if f.endswith(".md"))
    if problems:
        print(f"check_docs: {len(problems)} problems in {docs} docs and {len(TEXTS) - docs} other files", file=sys.stderr)
        return 1
    print(f"check_docs: {docs} docs and {len(TEXTS) - docs} other files checked: links, paths, names, history, "
          "outside citations, licence lines, facts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
