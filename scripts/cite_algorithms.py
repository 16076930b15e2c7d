"""Point every citation of the formulas at docs/algorithms.md (idempotent).

Older code cites the formulas as "A§n", "ALGORITHMS §n" or "ALGORITHMS.md", a note outside the
repository. This rewrites those citations, in place, in the text files of core/, labeler/,
tests/, benchmarks/, docs/ and README.md, to "docs/algorithms.md §n" (same section numbers).
Running it twice changes nothing the second time. tests/test_doc_citations.py checks the result.

Usage: ``python scripts/cite_algorithms.py [--check]`` from the repository root; ``--check``
only lists the files it would change (exit status 1 if any).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TREES = ("core", "labeler", "tests", "benchmarks", "docs")
FILES = ("README.md",)
SUFFIXES = {".py", ".md", ".txt", ".rst", ".toml", ".cfg", ".sh"}
# files that talk about the old forms on purpose
SKIP = {Path("scripts/cite_algorithms.py"), Path("tests/test_doc_citations.py")}
TARGET = "docs/algorithms.md"

RULES = (
    # a path to the note outside the repository, with or without backticks
    (re.compile(r"(?:\.\./)+shared/ALGORITHMS\.md"), TARGET),
    (re.compile(r"(?<![\w/])ALGORITHMS\.md"), TARGET),
    # "ALGORITHMS §3", "ALGORITHMS\n    §3", "ALGORITHMS notation" (not a name such as ALGORITHMS = ...)
    (re.compile(r"(?<![\w/.])ALGORITHMS(?=\s*(?:#\s*)?§|\s+notation)"), TARGET),
    # "A§3", "A§n"
    (re.compile(r"(?<![\w/])A§(?=[0-9n])"), TARGET + " §"),
)


def rewrite(text: str) -> str:
    """The text with every old citation replaced (unchanged when there is none)."""
    for pattern, replacement in RULES:
        text = pattern.sub(replacement, text)
    return text


def candidate_files(root: Path = ROOT):
    """The text files whose citations are rewritten and checked."""
    for tree in TREES:
        base = root / tree
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts:
                if path.relative_to(root) not in SKIP:
                    yield path
    for name in FILES:
        if (root / name).is_file():
            yield root / name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="list the files that would change; change nothing")
    args = parser.parse_args(argv)
    changed = []
    for path in candidate_files():
        text = path.read_text(encoding="utf-8")
        new = rewrite(text)
        if new != text:
            changed.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    for path in changed:
        print(path)
    print(f"{len(changed)} file(s) {'to change' if args.check else 'changed'}", file=sys.stderr)
    return 1 if (args.check and changed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
