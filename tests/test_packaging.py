"""A normal (non-editable) install ships what the built-in data sets read.

The MAGIC and MNIST files are package data of :mod:`labeler.data` (``labeler/data/files/``), so
``load_dataset("magic")`` and ``load_dataset("mnist")`` work in any installation, not only in a
checkout. The test installs the project into a fresh virtual environment, without network and
without dependencies (they come from this interpreter's environment), and loads both from a
folder outside the checkout with that environment's Python.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_LOAD = r"""
import json, sys
import core, labeler
from labeler.data import BUILTIN_DATA_DIR, load_dataset

magic = load_dataset("magic", n=40, n_val=20, seed=1)
mnist = load_dataset("mnist", n=30, digits=(4, 9), seed=1)
print(json.dumps({
    "labeler": labeler.__file__, "core": core.__file__, "files": str(BUILTIN_DATA_DIR),
    "magic": [list(magic.X.shape), magic.classes, len(magic.y_val)],
    "mnist": [list(mnist.images.shape), mnist.classes],
}))
"""


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=600, **kwargs)
    assert proc.returncode == 0, f"{' '.join(map(str, argv))} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.mark.slow
def test_non_editable_install_loads_magic_and_mnist_outside_the_checkout(tmp_path):
    # The sources as they are in the checkout (pip builds in the source folder: a copy keeps the
    # checkout free of build/ and *.egg-info).
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for package in ("core", "labeler"):
        shutil.copytree(ROOT / package, source / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))

    # A fresh environment that sees this interpreter's packages (numpy, pandas, setuptools, pip)
    # but not this checkout. Without pip of its own, so that no older bundled setuptools shadows
    # the one the build uses.
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    purelib = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    if sys.prefix != sys.base_prefix:  # running inside a virtualenv: its packages are not "system"
        paths = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
        (purelib / "_outer_environment.pth").write_text("\n".join(paths) + "\n")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PYTHONNOUSERSITE"] = "1"
    _run([python, "-m", "pip", "install", "--no-deps", "--no-build-isolation", "--no-index", "-q",
          str(source)], env=env, cwd=tmp_path)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    result = json.loads(_run([python, "-c", _LOAD], env=env, cwd=elsewhere).stdout.strip().splitlines()[-1])
    for module in ("labeler", "core"):  # the installed copy, not the checkout or its source copy
        assert Path(result[module]).resolve().is_relative_to(purelib.resolve()), result
    assert Path(result["files"]).resolve().is_relative_to(purelib.resolve())
    assert result["magic"] == [[40, 10], ["gamma", "hadron"], 20]
    assert result["mnist"] == [[30, 28, 28], [4, 9]]
