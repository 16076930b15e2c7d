"""No import cycles among the modules of ``core/`` and ``labeler/``, counting every import.

An import inside a function, a ``try`` or an ``if TYPE_CHECKING:`` block is still a dependency:
it hides a cycle from the interpreter's start-up order but not from the design (the two
modules cannot be understood, tested or moved apart). The check parses every module with
:mod:`ast` and reads every import statement:

- ``import a.b.c`` depends on ``a.b.c``;
- ``from a.b import c`` depends on the submodule ``a.b.c`` when there is one, else on ``a.b``
  (the name comes from the package's ``__init__``);
- relative imports are resolved against the importing module's package;
- ``importlib.import_module("a.b")`` with a literal name counts as ``import a.b``.

The modules of the project form a directed graph; every strongly connected component with more
than one module (or a module importing itself) is a cycle, and the test names each with the
import lines that close it. The detector is itself tested on small packages written to
``tmp_path``, one with a cycle hidden in a function.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "labeler")


def module_files(root: Path, packages=PACKAGES) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``root/<package>``."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _base_package(module: str, path: Path, level: int) -> str:
    """The package a relative import of ``level`` dots in ``module`` starts from."""
    parts = module.split(".")
    if path.name != "__init__.py":
        parts = parts[:-1]  # a plain module's package
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts)


def _known(name: str, modules) -> str | None:
    """``name`` if it is a project module, else its longest dotted prefix that is one."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def imports_of(module: str, path: Path, modules) -> dict[str, list[int]]:
    """The project modules ``module`` imports, each with the lines of its import statements.

    Parameters
    ----------
    module : str
        Dotted name of the importing module.
    path : pathlib.Path
        Its file.
    modules : collection of str
        Every project module's dotted name.

    Returns
    -------
    dict
        Imported module -> sorted line numbers of the statements importing it.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[str, list[int]] = {}

    def add(name: str | None, line: int) -> None:
        target = _known(name, modules) if name else None
        if target is not None and line not in found.setdefault(target, []):
            found[target].append(line)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = _base_package(module, path, node.level)
                source = ".".join(p for p in (base, node.module or "") if p)
            else:
                source = node.module or ""
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                add(submodule if submodule in modules else source, node.lineno)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__")))):
            add(node.args[0].value, node.lineno)
    return {target: sorted(lines) for target, lines in found.items()}


def import_graph(root: Path, packages=PACKAGES) -> dict[str, dict[str, list[int]]]:
    """Module -> {imported project module: lines} for every module of ``packages``."""
    files = module_files(root, packages)
    return {name: imports_of(name, path, files) for name, path in files.items()}


def cycles(graph: dict[str, dict[str, list[int]]]) -> list[list[str]]:
    """The strongly connected components that are cycles (Tarjan, iterative), each sorted.

    A component of one module is a cycle only when the module imports itself.
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        components.append(sorted(component))
    return sorted(components)


def describe(component: list[str], graph: dict[str, dict[str, list[int]]], files: dict[str, Path],
             root: Path) -> str:
    """One cycle as every import statement among its modules."""
    members = set(component)
    text = [f"cycle of {len(component)} modules: {', '.join(component)}"]
    for module in component:
        for target, lines in sorted(graph[module].items()):
            if target in members:
                text += [f"  {files[module].relative_to(root).as_posix()}:{line}: {module} imports {target}"
                         for line in lines]
    return "\n".join(text)


# --------------------------------------------------------------------------- the project
def test_no_import_cycle_among_core_and_labeler_modules():
    files = module_files(ROOT)
    assert {"core.learner.arls", "labeler.session.model", "labeler.ui.figures"} <= set(files)
    graph = import_graph(ROOT)
    found = cycles(graph)
    report = "\n".join(describe(c, graph, files, ROOT) for c in found)
    assert not found, ("import cycles (imports inside functions count): move the shared part into a "
                       "module both import, or pass it in\n" + report)


# --------------------------------------------------------------------------- the detector
def _write_package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_a_cycle_hidden_in_a_function_is_found(tmp_path):
    _write_package(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import b\n",
        "pkg/b.py": "def later():\n    from .c import thing\n    return thing\n",
        "pkg/c.py": "import os\n\ndef thing():\n    import pkg.a\n    return pkg.a\n\ndef other():\n    from . import a\n",
        "pkg/d.py": "from pkg import a\n",  # imports into the cycle, is not part of it
    })
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.b": [1]}  # `from pkg import b`: the submodule
    assert graph["pkg.b"] == {"pkg.c": [2]}  # relative, inside a function
    assert graph["pkg.c"] == {"pkg.a": [4, 8]}
    found = cycles(graph)
    assert found == [["pkg.a", "pkg.b", "pkg.c"]]
    text = describe(found[0], graph, module_files(tmp_path, ("pkg",)), tmp_path)
    assert "pkg/b.py:2: pkg.b imports pkg.c" in text and "pkg/c.py:8: pkg.c imports pkg.a" in text
    assert "pkg.d" not in text


def test_every_strongly_connected_component_is_one_cycle(tmp_path):
    _write_package(tmp_path, {
        "pkg/__init__.py": "from .sub import x\n",
        "pkg/sub/__init__.py": "from .. import y\nx = 1\n",  # `..` from a package's __init__
        "pkg/y.py": "import importlib\nimportlib.import_module('pkg.sub')\n",
        "pkg/p.py": "from . import q\n",
        "pkg/q.py": "from .p import name\n",
        "pkg/self.py": "try:\n    from pkg.self import z\nexcept ImportError:\n    pass\n",
        "pkg/free.py": "from pkg.p import name\nimport numpy\n",
    })
    graph = import_graph(tmp_path, ("pkg",))
    assert graph["pkg"] == {"pkg.sub": [1]}  # `from .sub import x`: x is a name, sub the module
    assert graph["pkg.sub"] == {"pkg.y": [1]}
    assert graph["pkg.free"] == {"pkg.p": [1]}  # numpy is not a project module
    assert graph["pkg.y"] == {"pkg.sub": [2]}
    # pkg imports pkg.sub but nothing imports pkg back: it is outside every cycle
    assert cycles(graph) == [["pkg.p", "pkg.q"], ["pkg.self"], ["pkg.sub", "pkg.y"]]


def test_a_package_without_cycles_passes(tmp_path):
    _write_package(tmp_path, {
        "pkg/__init__.py": "from pkg.a import f\n",
        "pkg/a.py": "from pkg.b import g\n\ndef f():\n    from pkg import c\n",
        "pkg/b.py": "def g():\n    from .c import h\n",
        "pkg/c.py": "def h():\n    return 1\n",
    })
    assert cycles(import_graph(tmp_path, ("pkg",))) == []
