"""benchmarks/auto_model.py: the paired table from stored rows, and its section of
docs/defaults.md kept when benchmarks/defaults.py rewrites the file."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("auto_model_benchmark", ROOT / "benchmarks" / "auto_model.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _rows(bench, out, task, method, seed, acc):
    bench.append_rows(task, [(task, seed, method, n, f"{acc:.6f}", n) for n in range(1, 101)], out)


def test_paired_table_and_the_kept_section(tmp_path):
    am = _load()
    bench = am.bench
    out = tmp_path / "rows"
    for seed, (a, b) in enumerate([(0.80, 0.83), (0.82, 0.84)]):
        _rows(bench, out, "iris", "rls-default", seed, a)
        _rows(bench, out, "iris", "auto-model", seed, b)
    text = am.table(["iris"], out)
    assert "| iris | 2 | 81.0 | 83.5 | +2.5 ± 0.7 | - | - | - | - |" in text
    assert "auto-model: mean +2.50 points over 1 tasks, worst task +2.5: adopt" in text
    doc = tmp_path / "defaults.md"
    doc.write_text("# old\n")
    am.write_section(doc, am.section(["iris"], out))
    am.write_section(doc, am.section(["iris"], out))  # replaced, not appended twice
    assert doc.read_text().count(bench.KEPT_BEGIN) == 1
    kept = bench._kept_section(doc)
    assert kept.strip().startswith(bench.KEPT_BEGIN) and "| iris | 2 |" in kept
