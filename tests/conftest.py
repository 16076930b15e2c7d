"""Set-up shared by every test: the process environment of the labeller's entry points, and an
unwritable folder that works for every user.

``labeler.cli.main`` and ``labeler/app.py`` apply :func:`labeler.runtime.configure_threads`
(a passive OpenMP pool, one OpenBLAS thread) before numpy and numba load; the tests import the
library directly, so they apply it here. An explicit setting in the environment wins.
"""

import errno
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # as labeler.cli.main does, before any test module imports numpy or numba

from arls_oracle import POSTERIORS  # noqa: E402  (after the environment is set)


def _read_only_bind_mount(folder: Path) -> bool:
    """Mount ``folder`` read-only onto itself (root only); False where mounting is not allowed."""
    def mount(*args):
        return subprocess.run(["mount", *args], capture_output=True, timeout=30).returncode == 0

    try:
        if not mount("--bind", str(folder), str(folder)):
            return False
    except (OSError, subprocess.TimeoutExpired):  # no mount command
        return False
    if mount("-o", "remount,bind,ro", str(folder)):
        return True
    subprocess.run(["umount", str(folder)], capture_output=True, timeout=30)
    return False


@pytest.fixture
def unwritable_folder(tmp_path, monkeypatch):
    """A folder in which no file can be created, also when the tests run as root (as in CI).

    A normal user gets a folder without write permission (mode 0500). Root ignores permissions,
    so for root the folder is a read-only bind mount of itself (writes fail with EROFS); where
    root may not mount either, creating a temporary file in that folder fails with EACCES as
    the operating system would report it.
    """
    folder = tmp_path / "read-only"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield folder
        finally:
            folder.chmod(0o700)
    elif _read_only_bind_mount(folder):
        try:
            yield folder
        finally:
            subprocess.run(["umount", str(folder)], capture_output=True, timeout=30)
    else:
        real_mkstemp = tempfile.mkstemp

        def refuse(*args, dir=None, **kwargs):
            if dir is not None and Path(dir).resolve() == folder.resolve():
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder))
            return real_mkstemp(*args, dir=dir, **kwargs)

        monkeypatch.setattr(tempfile, "mkstemp", refuse)
        yield folder


@pytest.fixture(params=POSTERIORS)
def posterior(request):
    """Runs a test once per posterior store: the conformance suite (see tests/arls_oracle.py)."""
    return request.param


@pytest.fixture(autouse=True)
def _labeler_environment_restored():
    """Every test leaves the ``LABELER_*`` variables as it found them: an entry point run
    in-process (``labeler app --model ...`` hands its options to the page through
    ``LABELER_MODEL``) must not choose the model of a later test's app."""
    saved = {k: v for k, v in os.environ.items() if k.startswith("LABELER_")}
    yield
    for k in [k for k in os.environ if k.startswith("LABELER_") and k not in saved]:
        del os.environ[k]
    os.environ.update(saved)
