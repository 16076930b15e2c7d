"""labeler.runtime.limit_malloc_arenas: the app server's threads share at most 2 malloc arenas.

Counted in a fresh interpreter with glibc's own report (``malloc_info``: one ``<heap>`` per
arena) after 8 threads, alive at once, each allocated memory with malloc (numpy arrays).
"""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from labeler import runtime
from labeler.cli import app as cli_app, entry as cli_entry

REPO = Path(__file__).resolve().parents[1]

_SCRIPT = textwrap.dedent("""
    import ctypes, os, re, sys, tempfile, threading
    import numpy as np
    from labeler.runtime import limit_malloc_arenas
    applied = limit_malloc_arenas() if sys.argv[1] == "limit" else None
    barrier = threading.Barrier(8)
    keep = []
    def work():
        keep.append(np.ones(4096))  # 32 KB: malloc, from this thread's arena
        barrier.wait()              # all 8 alive at once: none can hand its arena on
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads: t.start()
    for t in threads: t.join()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    path = tempfile.mktemp()
    f = libc.fopen(path.encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(f))
    libc.fclose(ctypes.c_void_p(f))
    text = open(path).read(); os.unlink(path)
    print(applied, len(re.findall(r"<heap nr=", text)))
""")


def _heaps(mode: str) -> tuple[str, int]:
    env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-c", _SCRIPT, mode], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout.split()
    return out[0], int(out[1])


glibc = pytest.mark.skipif(not sys.platform.startswith("linux") or not ctypes.util.find_library("c"),
                           reason="glibc's malloc only")


@glibc
def test_limit_malloc_arenas_caps_the_heaps_of_new_threads():
    applied, heaps = _heaps("limit")
    assert applied == "True"
    assert heaps <= runtime.MALLOC_ARENAS
    _, heaps_default = _heaps("default")  # the test can fail: without the cap, more arenas
    assert heaps_default > runtime.MALLOC_ARENAS


def test_limit_malloc_arenas_leaves_the_users_setting(monkeypatch):
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert runtime.limit_malloc_arenas() is False


@pytest.mark.parametrize("argv", [["app", "moons", "--port", "1"], []])
def test_labeler_app_limits_the_arenas_before_starting(monkeypatch, argv):
    calls = []
    monkeypatch.setattr(cli_app, "limit_malloc_arenas", lambda: calls.append("limit"))
    import labeler.serve

    monkeypatch.setattr(labeler.serve, "run_app", lambda **kw: calls.append("app"))
    assert cli_entry._main(argv) == 0
    assert calls == ["limit", "app"]


def test_the_page_caps_the_arenas_under_streamlit_run_too(tmp_path, monkeypatch):
    """`streamlit run labeler/app.py` does not go through `labeler app`: the page sets the cap."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    calls = []
    monkeypatch.setattr(runtime, "limit_malloc_arenas", lambda: calls.append("limit") or True)
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    app = Path(runtime.__file__).resolve().parent / "app.py"
    AppTest.from_file(str(app), default_timeout=120).run()
    assert calls == ["limit"]


def test_block_threads_are_the_usable_cores_at_most_four_or_the_environments(monkeypatch):
    from labeler.runtime import MAX_BLOCK_THREADS, block_threads

    monkeypatch.delenv("LABELER_BLOCK_THREADS", raising=False)
    assert 1 <= block_threads() <= MAX_BLOCK_THREADS
    monkeypatch.setenv("LABELER_BLOCK_THREADS", "3")
    assert block_threads() == 3
    monkeypatch.setenv("LABELER_BLOCK_THREADS", "two")
    with pytest.raises(ValueError, match="LABELER_BLOCK_THREADS must be a whole number"):
        block_threads()
