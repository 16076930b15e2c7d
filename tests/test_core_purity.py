"""core/ is numerics only: no file formats, UI, storage or plotting imports, no environment writes.

File loaders live in :mod:`labeler.data`, experiments and reports in :mod:`labeler.experiments`,
process set-up (``OMP_WAIT_POLICY``) where processes start (:func:`labeler.cli.main`,
``labeler/app.py``, ``tests/conftest.py``). Two checks: the source of every ``core/**/*.py``
(every import statement, also inside functions or ``try``), and a fresh interpreter that imports
every core module with those packages made unavailable.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core"
CORE_FILES = sorted(CORE.rglob("*.py"))
#: Packages core must never import: file formats, images, storage, UI, plotting, the app itself.
FORBIDDEN = ("pandas", "PIL", "pyarrow", "sqlite3", "streamlit", "plotly", "labeler")
#: Methods of os.environ that change the environment.
ENVIRON_WRITES = ("setdefault", "update", "pop", "popitem", "clear", "__setitem__", "__delitem__")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _imported_modules(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level module) of every import statement, relative imports excluded."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module.split(".")[0]))
        elif (isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute))
              and (getattr(node.func, "id", None) or getattr(node.func, "attr", None))
              in ("import_module", "__import__")
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value.split(".")[0]))
    return found


def _is_environ(node: ast.AST, aliases: set[str]) -> bool:
    """``os.environ`` (any ``<name>.environ``) or a name bound by ``from os import environ``."""
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id in aliases)


def _environ_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every write to the process environment."""
    aliases = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and node.module == "os" for a in node.names if a.name == "environ"}
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Subscript) and _is_environ(target.value, aliases):
                found.append((node.lineno, "os.environ[...] assignment or deletion"))
            elif isinstance(node, ast.AugAssign) and _is_environ(target, aliases):
                found.append((node.lineno, "os.environ |= ..."))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ENVIRON_WRITES and _is_environ(node.func.value, aliases):
                found.append((node.lineno, f"os.environ.{node.func.attr}(...)"))
            elif node.func.attr in ("putenv", "unsetenv") and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == "os":
                found.append((node.lineno, f"os.{node.func.attr}(...)"))
    return found


def _parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


# Subprocess: forbidden packages raise ModuleNotFoundError (as if not installed; libraries such
# as scikit-learn import pandas only when present), then every core module is imported.
_PROBE = r"""
import importlib, importlib.abc, json, os, pkgutil, sys

FORBIDDEN = set(json.loads(sys.argv[1]))

class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in FORBIDDEN:
            raise ModuleNotFoundError(f"{name} is blocked for this check", name=name)
        return None

sys.meta_path.insert(0, Block())
import numba, numpy, scipy, scipy.linalg, sklearn, sklearn.base  # their own set-up, environment included
before = dict(os.environ)
import core
names = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))
errors = {}
for name in names:
    try:
        importlib.import_module(name)
    except ImportError as exc:
        errors[name] = f"{type(exc).__name__}: {exc}"
after = dict(os.environ)
print(json.dumps({
    "modules": names,
    "errors": errors,
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] in FORBIDDEN),
    "environ": {k: after.get(k) for k in set(before) | set(after) if before.get(k) != after.get(k)},
}))
"""


@pytest.fixture(scope="module")
def probe():
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(FORBIDDEN)], capture_output=True,
                          text=True, cwd=ROOT, env={**_clean_env(), "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _clean_env() -> dict:
    """This process' environment without the variable core must not set (so a write shows)."""
    import os

    return {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}


def test_the_checks_see_every_core_file():
    names = {p.name for p in CORE_FILES}
    assert {"__init__.py", "arls.py", "kernel.py", "dense.py", "factor.py", "expected_risk.py"} <= names
    assert not {"datasets.py", "simulate.py", "layout.py", "preprocessing.py"} & names  # moved to labeler/


@pytest.mark.parametrize("path", CORE_FILES, ids=_rel)
def test_core_source_imports_no_io_ui_or_plotting_package(path):
    bad = [f"{_rel(path)}:{line}: imports {mod}" for line, mod in _imported_modules(_parse(path))
           if mod in FORBIDDEN]
    assert not bad, "core/ is numerics only; move this code to labeler/:\n" + "\n".join(bad)


def test_core_imports_without_those_packages_and_loads_none_of_them(probe):
    expected = {".".join(p.relative_to(ROOT).with_suffix("").parts[:-1] if p.name == "__init__.py"
                         else p.relative_to(ROOT).with_suffix("").parts) for p in CORE_FILES}
    assert set(probe["modules"]) == expected - {"core"}
    assert probe["errors"] == {}
    assert probe["loaded"] == []


def test_core_writes_no_environment_variable(probe):
    bad = [f"{_rel(path)}:{line}: {what}" for path in CORE_FILES for line, what in _environ_writes(_parse(path))]
    assert not bad, "set process-wide options where processes start, not in core/:\n" + "\n".join(bad)
    assert probe["environ"] == {}


def test_the_scanners_find_what_they_look_for():
    source = (
        "import os\nfrom os import environ as env\nimport pandas.io\nfrom PIL import Image\n"
        "def f():\n    import sqlite3\n    importlib.import_module('plotly.graph_objects')\n"
        "    os.environ['A'] = '1'\n    os.environ.setdefault('B', '2')\n    env.update(C='3')\n"
        "    del os.environ['A']\n    os.putenv('D', '4')\n    x = os.environ.get('E')\n"
    )
    tree = ast.parse(source)
    mods = [m for _, m in _imported_modules(tree)]
    assert [m for m in mods if m in FORBIDDEN] == ["pandas", "PIL", "sqlite3", "plotly"]
    assert sorted(line for line, _ in _environ_writes(tree)) == [8, 9, 10, 11, 12]  # reading (line 13) is fine
