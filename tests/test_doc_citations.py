"""Every citation of the formulas resolves inside the repository.

The code, tests, benchmarks and docs cite the formulas as "docs/algorithms.md §n" (lists and
ranges: "§5, §9", "§1-§4"). Each cited section must be a heading "## n. ..." of
docs/algorithms.md; the older forms ("A§n", "ALGORITHMS §n", "ALGORITHMS.md", a note outside the
repository) must be gone (``python scripts/cite_algorithms.py`` rewrites them), and nothing may
point at ``../shared/``.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("cite_algorithms", ROOT / "scripts" / "cite_algorithms.py")
cite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cite)

# "docs/algorithms.md §3", across a line break or a comment marker, then ", §5", "-§9", " and §8"
CITATION = re.compile(r"docs/algorithms\.md(?:[\s#*`\"']|\\n)*§(\d+)((?:\s*(?:,|-|–|and|or|to)\s*§\d+)*)")
OLD_FORMS = re.compile(r"(?<![\w/])A§[0-9n]|(?<![\w/.])ALGORITHMS(?:\.md|\s*§|\s*$|\s+notation)|\.\./shared/"
                       r"|(?<![\w/])shared/ALGORITHMS")


def _headings() -> set[int]:
    text = (ROOT / "docs" / "algorithms.md").read_text(encoding="utf-8")
    return {int(m.group(1)) for m in re.finditer(r"^## (\d+)\. \S", text, flags=re.M)}


def _citations(text: str):
    for m in CITATION.finditer(text):
        numbers = [int(m.group(1))] + [int(n) for n in re.findall(r"§(\d+)", m.group(2))]
        line = text.count("\n", 0, m.start()) + 1
        yield line, numbers


def test_algorithms_has_the_numbered_sections_the_code_cites():
    assert set(range(1, 19)) <= _headings()


def test_every_citation_resolves_to_a_heading():
    headings = _headings()
    found, missing = 0, []
    for path in cite.candidate_files(ROOT):
        text = path.read_text(encoding="utf-8")
        for line, numbers in _citations(text):
            found += 1
            missing += [f"{path.relative_to(ROOT)}:{line}: §{n}" for n in numbers if n not in headings]
    assert not missing, "citations of docs/algorithms.md with no such section:\n" + "\n".join(missing)
    assert found > 50  # the code does cite it (a broken pattern would find nothing)


def test_no_old_citation_and_nothing_outside_the_repository():
    stale = []
    for path in cite.candidate_files(ROOT):
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OLD_FORMS.search(line):
                stale.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not stale, ("old citations or paths outside the repository (run python scripts/cite_algorithms.py):\n"
                       + "\n".join(stale))


@pytest.mark.parametrize("old, new", [
    ("(ALGORITHMS §3, §8)", "(docs/algorithms.md §3, §8)"),
    ("index set (ALGORITHMS\n§3, §8)", "index set (docs/algorithms.md\n§3, §8)"),
    ("factor (A§9): the", "factor (docs/algorithms.md §9): the"),
    ("cited as \"A§n\"", "cited as \"docs/algorithms.md §n\""),
    ("Formulas: `../shared/ALGORITHMS.md`", "Formulas: `docs/algorithms.md`"),
    ("(seed 002 eq. 2.6; ALGORITHMS.md notation)", "(seed 002 eq. 2.6; docs/algorithms.md notation)"),
    ("ALGORITHMS §1-§4 (misprints", "docs/algorithms.md §1-§4 (misprints"),
    ("MAGIC_ALGORITHMS = 1; DATA§2", "MAGIC_ALGORITHMS = 1; DATA§2"),  # not a citation
    ("ALGORITHMS = ('a', 'b')", "ALGORITHMS = ('a', 'b')"),  # a name, not a citation
    ("# formulas: ALGORITHMS\n# §3", "# formulas: docs/algorithms.md\n# §3"),
])
def test_rewrite_examples_and_idempotence(old, new):
    assert cite.rewrite(old) == new
    assert cite.rewrite(new) == new
    if new != old:
        assert list(_citations(new)) or "§" not in new or "§n" in new


def test_citation_pattern_reads_lists_ranges_and_wrapped_lines():
    text = "a (docs/algorithms.md §5, §9) b docs/algorithms.md\n    # §1-§4 c docs/algorithms.md §3 and §8"
    assert [numbers for _, numbers in _citations(text)] == [[5, 9], [1, 4], [3, 8]]
