"""labeler.atomic: a write either completes (durably) or leaves the target untouched."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import labeler.atomic as atomic
from labeler.atomic import atomic_target, atomic_write, atomic_write_bytes, atomic_write_text


def test_content_is_fsynced_before_the_rename(tmp_path, monkeypatch):
    target = tmp_path / "out.bin"
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    assert atomic_write_bytes(target, b"\x00\x01data") == target
    assert events == ["fsync", "replace"]
    assert target.read_bytes() == b"\x00\x01data"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "f.txt"
    atomic_write_text(target, "first")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_target(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    with pytest.raises(ValueError):
        atomic_write(target, lambda tmp: (Path(tmp).write_text("partial"), int("x")))
    assert target.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_text_is_utf8_with_unix_line_ends(tmp_path):
    target = tmp_path / "t.md"
    atomic_write_text(target, "é\nline\n")
    assert target.read_bytes() == "é\nline\n".encode("utf-8")


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda d: d / "missing" / "f.txt", FileNotFoundError, "does not exist"),
        (lambda d: d, IsADirectoryError, "directory"),
        (lambda d: (d / "file").write_text("x") and d / "file" / "f.txt", NotADirectoryError, "not a directory"),
    ],
)
def test_bad_targets_name_the_problem(tmp_path, make, exc, match):
    with pytest.raises(exc, match=match):
        atomic_write_text(make(tmp_path), "x")


def test_read_only_folder_is_a_permission_error(unwritable_folder):
    with pytest.raises(PermissionError, match="not writable"):
        atomic_write_text(unwritable_folder / "f.txt", "x")
    assert list(unwritable_folder.iterdir()) == []
