"""labeler CLI: parsing, the app launcher, simulate output files, error exits, atomic writes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import labeler.experiments.simulate
import labeler.serve
from labeler import cli
from labeler.cli import common as cli_common, entry as cli_entry, simulate as cli_simulate
from labeler.atomic import atomic_write, atomic_write_text
from labeler.experiments.simulate import CURVE_COLUMNS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def app_calls(monkeypatch):
    calls = []
    monkeypatch.setattr(labeler.serve, "run_app", lambda **kw: calls.append(kw))
    return calls


def write_blobs(path: Path, n=120, seed=0, label="label", extra_cols=()):
    rng = np.random.default_rng(seed)
    y = rng.integers(2, size=n)
    X = rng.standard_normal((n, 2)) + 2.5 * y[:, None]
    frame = pd.DataFrame({"f1": X[:, 0], "f2": X[:, 1], label: np.where(y == 1, "pos", "neg")})
    for c in extra_cols:
        frame[c] = 0.0
    frame.to_csv(path, index=False)
    return frame


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- app
def test_no_arguments_starts_the_app_on_two_moons(app_calls, capsys):
    assert cli.main([]) == 0
    assert app_calls == [{"extra_args": ()}]


def test_app_passes_its_options(app_calls, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LABELER_DATA_OPTIONS", raising=False)
    write_blobs(tmp_path / "data.csv", n=20)
    code = cli.main(["app", "data.csv", "--store", "s.sqlite", "--port", "9001", "--host", "0.0.0.0",
                     "--session", "abc", "--token", "auto", "--", "--server.headless", "true"])
    assert code == 0
    roles = {"id_col": None, "label_col": "label", "text_col": None, "image_col": None,
             "layout_cols": None, "feature_cols": ["f1", "f2"], "features_from": "columns"}
    assert app_calls == [{"data": "data.csv", "store": "s.sqlite", "port": 9001, "host": "0.0.0.0",
                          "session": "abc", "extra_args": ("--server.headless", "true"),
                          "token": "auto", "allow_hosts": (), "data_options": roles}]


def test_app_defaults(app_calls, capsys):
    assert cli.main(["app"]) == 0
    assert app_calls == [{"data": None, "store": None, "port": 8501, "host": "127.0.0.1", "session": None,
                          "extra_args": (), "token": None, "allow_hosts": ()}]


def test_app_options_without_the_sub_command_start_the_app(app_calls, capsys):
    """``labeler`` alone is the app, so ``labeler --port 8611`` is ``labeler app --port 8611``
    (it was refused with "unrecognized arguments"); labeler's own options and unknown ones stay
    the top parser's."""
    assert cli.main(["--port", "8611"]) == 0
    assert cli.main(["--port=8612", "digits", "--host", "0.0.0.0", "--", "--server.headless", "true"]) == 0
    assert [(c["port"], c["data"], c["host"], c["extra_args"]) for c in app_calls] == [
        (8611, None, "127.0.0.1", ()), (8612, "digits", "0.0.0.0", ("--server.headless", "true"))]
    code, _, err = run(["--port", "0"], capsys)  # the app's own check
    assert code == 2 and "--port" in err and len(app_calls) == 2
    code, _, err = run(["--bogus"], capsys)
    assert code == 2 and "unrecognized arguments: --bogus" in err and len(app_calls) == 2
    assert cli.main(["--version"]) == 0 and capsys.readouterr().out.startswith("labeler ")
    assert len(app_calls) == 2


@pytest.mark.parametrize("port", ["0", "70000", "http"])
def test_app_bad_port_exits_2(app_calls, capsys, port):
    code, _, err = run(["app", "--port", port], capsys)
    assert code == 2 and "--port" in err and app_calls == []


def test_app_error_from_run_app_is_a_clean_exit_2(monkeypatch, capsys):
    from labeler.errors import SettingsError

    def fail(**kw):
        raise SettingsError("port 8501 is in use; pass --port")

    monkeypatch.setattr(labeler.serve, "run_app", fail)
    code, _, err = run(["app", "moons"], capsys)
    assert code == 2
    assert "labeler: error: port 8501 is in use" in err
    assert "Traceback" not in err
    code, _, err = run(["app", "nope.csv"], capsys)  # stops before the server
    assert code == 2 and "'nope.csv': no such file or folder" in err


def test_an_internal_value_error_is_a_traceback_not_a_usage_error(monkeypatch, capsys):
    def bug(**kw):
        raise ValueError("operands could not be broadcast together")

    monkeypatch.setattr(labeler.serve, "run_app", bug)
    with pytest.raises(ValueError, match="broadcast"):
        cli.main(["app", "moons"])
    assert "labeler: error" not in capsys.readouterr().err


@pytest.mark.parametrize("argv,needle", [
    (["app", "--token", "short"], "--token must be 'auto' or a secret of at least 8 characters"),
    (["app", "--host", " "], "host must be a non-empty address"),
])
def test_app_options_the_server_refuses_exit_2_with_the_fix(monkeypatch, capsys, argv, needle):
    # the server's own checks (labeler.serve), reached with Streamlit never started
    import streamlit.web.cli as stcli

    monkeypatch.setattr(stcli.main, "main", lambda **kw: pytest.fail("the server started"))
    for name in ("LABELER_TOKEN", "LABELER_DATA_DIR"):  # run_app sets them; restored after the test
        monkeypatch.delenv(name, raising=False)
    code, _, err = run(argv, capsys)
    assert code == 2 and needle in err and "Traceback" not in err


def test_a_short_token_in_the_environment_exits_2(monkeypatch, capsys):
    import streamlit.web.cli as stcli

    monkeypatch.setattr(stcli.main, "main", lambda **kw: pytest.fail("the server started"))
    monkeypatch.setenv("LABELER_TOKEN", "abc")
    monkeypatch.delenv("LABELER_DATA_DIR", raising=False)
    code, _, err = run(["app"], capsys)
    assert code == 2 and "--token must be 'auto'" in err


def test_dash_dash_arguments_only_for_app(capsys):
    code, _, err = run(["simulate", "moons", "--", "--x"], capsys)
    assert code == 2 and "only for 'labeler app'" in err


def test_main_sets_a_passive_openmp_wait_policy_unless_the_user_chose_one(monkeypatch, capsys):
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert cli.main(["--version"]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert cli.main(["--version"]) == 0
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


def test_help_and_version(capsys):
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and "simulate" in out and "reproduce" in out
    code, out, _ = run(["simulate", "--help"], capsys)
    assert code == 0 and "--validation" in out and "--label-col" in out
    code, out, _ = run(["--version"], capsys)
    assert code == 0 and out.startswith("labeler ")


# --------------------------------------------------------------------------- simulate
def test_simulate_writes_the_curve_and_the_report(tmp_path, capsys):
    data = tmp_path / "pool.csv"
    val = tmp_path / "val.csv"
    write_blobs(data, n=100, seed=0)
    write_blobs(val, n=60, seed=1)
    out, report = tmp_path / "curve.csv", tmp_path / "curve.html"
    code, stdout, err = run(["simulate", str(data), "--validation", str(val), "--budget", "12", "--seed", "3",
                             "--lam", "0.3", "--width", "1.5", "--out", str(out), "--report", str(report)], capsys)
    assert code == 0, err
    assert stdout == ""
    curve = pd.read_csv(out)
    assert tuple(curve.columns) == CURVE_COLUMNS
    assert len(curve) == 12 and curve["step"].tolist() == list(range(1, 13))
    assert set(curve["label"]) <= {"pos", "neg"}
    assert curve["accuracy"].between(0, 1).all()
    assert "validation file" in err and "final accuracy" in err
    html = report.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert "balanced accuracy" in html and "estimated risk" in html and "seconds per query" in html
    assert "Plotly.newPlot" in html
    assert '<script src="http' not in html and "<script src='http" not in html  # plotly.js inlined
    assert len(html) > 1_000_000  # the plotly.js bundle is in the page
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.csv", "curve.html", "pool.csv", "val.csv"]


def test_simulate_matches_core_simulate(tmp_path, capsys):
    from labeler.data import load_dataset
    from core.kernels import Kernel
    from labeler.experiments.simulate import app_settings, simulate

    data = tmp_path / "pool.csv"
    write_blobs(data, n=80, seed=4)
    out = tmp_path / "c.csv"
    code, _, err = run(["simulate", str(data), "--budget", "10", "--seed", "2", "--strategy", "margin",
                        "--lam", "0.2", "--width", "1.0", "--weighting", "balanced", "--initial", "4",
                        "--out", str(out)], capsys)
    assert code == 0, err
    ds = load_dataset(data, seed=2)
    X = app_settings(ds, 2)["X"]  # the app's features: standardised
    expected = simulate(ds, "margin", 10, 2, Kernel("rbf", width=1.0), 0.2, "balanced", initial=4, X=X)
    got = pd.read_csv(out)
    cols = [c for c in CURVE_COLUMNS if c not in ("step_seconds", "stop")]
    pd.testing.assert_frame_equal(got[cols], expected[cols], check_dtype=False, rtol=1e-12)
    assert got["stop"].tolist() == expected["stop"].tolist()
    assert "rest of the pool" in err and "re-tuned" not in err  # width and lam given: fixed


def test_simulate_builtin_uses_the_app_defaults(capsys, tmp_path):
    """`labeler simulate DATA` starts where a new session of the app starts (one set of
    defaults: labeler.session.config.DEFAULTS), and re-tunes width and lam alike."""
    from labeler.data import load_dataset
    from labeler.experiments.simulate import app_settings, simulate
    from labeler.session import LabelingSession, SessionConfig

    code, out, err = run(["simulate", "spheres", "--budget", "3", "--quiet"], capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert lines[0] == ",".join(CURVE_COLUMNS) and len(lines) == 4
    assert err == ""
    path = tmp_path / "c.csv"
    code, _, err = run(["simulate", "moons", "--budget", "12", "--out", str(path)], capsys)
    assert code == 0, err
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons"))
    assert f"width {s.config.width:.4g} (median pairwise distance)" in err
    assert f"lambda {s.config.lam:g}" in err and f"weighting {s.config.weighting}" in err
    assert "width and lam re-tuned by leave-one-out" in err and "built-in validation set" in err
    ds = load_dataset("moons", seed=0)
    a = app_settings(ds, 0, X_val=ds.X_val)
    expected = simulate(ds, "auto", 12, 0, a["kernel"], a["lam"], a["weighting"], X=a["X"], X_val=a["X_val"],
                        y_val=ds.y_val, auto_tune=a["auto_tune"])
    cols = [c for c in CURVE_COLUMNS if c != "step_seconds"]
    pd.testing.assert_frame_equal(pd.read_csv(path)[cols], expected[cols], check_dtype=False, rtol=1e-12)


def test_simulate_weighting_defaults_to_the_apps_and_can_be_set(tmp_path, capsys):
    data = tmp_path / "pool.csv"
    write_blobs(data, n=60, seed=3)
    argv = ["simulate", str(data), "--budget", "3", "--lam", "0.2", "--width", "1.0"]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert "weighting balanced" in err
    code, _, err = run(argv + ["--weighting", "none"], capsys)
    assert code == 0, err
    assert "weighting none" in err


def test_simulate_median_width_and_auto_lam_for_files(tmp_path, capsys):
    data = tmp_path / "pool.csv"
    write_blobs(data, n=60)
    code, _, err = run(["simulate", str(data), "--budget", "2", "--initial", "20"], capsys)
    assert code == 0, err
    assert "median pairwise distance" in err and "width and lam re-tuned by leave-one-out" in err


def test_simulate_linear_kernel(tmp_path, capsys):
    data = tmp_path / "pool.csv"
    write_blobs(data, n=40)
    code, out, err = run(["simulate", str(data), "--budget", "3", "--kernel", "linear", "--quiet"], capsys)
    assert code == 0, err
    assert len(out.strip().splitlines()) == 4


def test_progress_lines_are_throttled(tmp_path, capsys, monkeypatch):
    data = tmp_path / "pool.csv"
    write_blobs(data, n=60)
    monkeypatch.setattr(cli_common, "PROGRESS_INTERVAL", 0.0)
    code, _, err = run(["simulate", str(data), "--budget", "5", "--out", str(tmp_path / "c.csv")], capsys)
    assert code == 0
    steps = [line for line in err.splitlines() if "queries/s" in line]
    assert [s.split()[3] for s in steps] == ["1/5", "2/5", "3/5", "4/5"]  # the last step is the summary
    monkeypatch.setattr(cli_common, "PROGRESS_INTERVAL", 3600.0)
    code, _, err = run(["simulate", str(data), "--budget", "5", "--out", str(tmp_path / "c.csv")], capsys)
    assert "queries/s" not in err


# --------------------------------------------------------------------------- errors
def make_error_files(tmp_path: Path) -> dict:
    data = tmp_path / "pool.csv"
    write_blobs(data, n=30)
    unlabelled = tmp_path / "unlabelled.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.0, 1.0, 0.0]}).to_csv(unlabelled, index=False)
    other_cols = tmp_path / "other.csv"
    write_blobs(other_cols, n=20, extra_cols=("f3",)).drop(columns=["f2"]).to_csv(other_cols, index=False)
    duplicated = tmp_path / "duplicated.csv"
    pd.DataFrame({"a": [1.0] * 6, "b": [2.0] * 6, "label": [0, 1] * 3}).to_csv(duplicated, index=False)
    return {"d": str(data), "unlabelled": str(unlabelled), "other": str(other_cols), "tmp": tmp_path,
            "dup": str(duplicated)}


ERROR_CASES = {
    "missing file": (lambda f: ["simulate", str(f["tmp"] / "nope.csv")], "nope.csv"),
    "unknown builtin": (lambda f: ["simulate", "moonz"], "moonz"),
    "folder without images": (lambda f: ["simulate", str(f["tmp"])], "images"),
    "lam zero": (lambda f: ["simulate", f["d"], "--lam", "0"], "--lam"),
    "lam negative": (lambda f: ["simulate", f["d"], "--lam", "-1"], "--lam"),
    "lam text": (lambda f: ["simulate", f["d"], "--lam", "big"], "--lam"),
    "lam nan": (lambda f: ["simulate", f["d"], "--lam", "nan"], "--lam"),
    "width zero": (lambda f: ["simulate", f["d"], "--width", "0"], "--width"),
    "no median width": (lambda f: ["simulate", f["dup"], "--budget", "2"], "--width W"),
    "budget zero": (lambda f: ["simulate", f["d"], "--budget", "0"], "--budget"),
    "budget too big": (lambda f: ["simulate", f["d"], "--budget", "31"], "--budget"),
    "initial plus budget": (lambda f: ["simulate", f["d"], "--budget", "20", "--initial", "15"], "--budget"),
    "bad strategy": (lambda f: ["simulate", f["d"], "--strategy", "greedy"], "--strategy"),
    "bad kernel": (lambda f: ["simulate", f["d"], "--kernel", "sigmoid"], "--kernel"),
    "negative seed": (lambda f: ["simulate", f["d"], "--seed", "-3"], "--seed"),
    "no labels": (lambda f: ["simulate", f["unlabelled"]], "label"),
    "wrong label column": (lambda f: ["simulate", f["d"], "--label-col", "klass"], "klass"),
    "missing validation": (lambda f: ["simulate", f["d"], "--validation", str(f["tmp"] / "v.csv")], "v.csv"),
    "validation columns": (lambda f: ["simulate", f["d"], "--validation", f["other"]],
                           "--validation .*Feature column 'f2' not found"),
    "out folder missing": (lambda f: ["simulate", f["d"], "--out", str(f["tmp"] / "no" / "c.csv")],
                           "does not exist"),
    "out is a folder": (lambda f: ["simulate", f["d"], "--out", str(f["tmp"])], "folder"),
    "same out and report": (lambda f: ["simulate", f["d"], "--out", str(f["tmp"] / "x"),
                                       "--report", str(f["tmp"] / "x")], "same file"),
    "no such command": (lambda f: ["frobnicate"], "invalid choice"),
    "reproduce seeds": (lambda f: ["reproduce", "--seeds", "0"], "--seeds"),
    "reproduce out is a file": (lambda f: ["reproduce", "--out", f["d"]], "is a file"),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_errors_exit_2_with_a_message_and_no_output(tmp_path, capsys, case):
    files = make_error_files(tmp_path)
    make_argv, needle = ERROR_CASES[case]
    argv = make_argv(files)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    if "--out" not in argv and argv[0] == "simulate":
        argv = argv + ["--out", str(tmp_path / "curve.csv")]
    code, out, err = run(argv, capsys)
    assert code == 2, (out, err)
    assert "error" in err and re.search(needle, err), err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written, no temp file


def test_error_exit_through_the_real_entry_point(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "labeler", "simulate", str(tmp_path / "missing.csv"),
                           "--out", str(tmp_path / "c.csv")], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "labeler: error:" in proc.stderr and "missing.csv" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "c.csv").exists()


@pytest.mark.parametrize("bug", [IndexError("index 7 is out of bounds"), TypeError("unsupported operand"),
                                 KeyError("n_labeled")])
def test_programming_errors_propagate_with_their_traceback(tmp_path, capsys, monkeypatch, bug):
    # Only user errors (the project's own error types, OSError) become "labeler: error:".
    data = tmp_path / "pool.csv"
    write_blobs(data, n=40)

    def broken(*args, **kwargs):
        raise bug

    monkeypatch.setattr(labeler.experiments.simulate, "simulate", broken)
    with pytest.raises(type(bug)):
        cli.main(["simulate", str(data), "--model", "rls", "--budget", "3", "--quiet"])
    assert "labeler: error" not in capsys.readouterr().err


def test_version_falls_back_only_when_the_package_is_not_installed(monkeypatch):
    import importlib.metadata

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert cli_entry._version() == "0.1.0"
    monkeypatch.setattr(importlib.metadata, "version", lambda name: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        cli_entry._version()


def test_auto_lam_waits_for_labels_without_warnings(tmp_path, capsys):
    """'auto' starts at 0.1 and re-tunes once LOO can judge: too few labels is no warning."""
    data = tmp_path / "pool.csv"
    write_blobs(data, n=40)
    code, _, err = run(["simulate", str(data), "--budget", "2", "--lam", "auto", "--quiet"], capsys)
    assert code == 0, err
    assert not [line for line in err.splitlines() if "warning" in line]
    assert "UserWarning" not in err and ".py:" not in err


# --------------------------------------------------------------------------- atomic output
def test_failed_run_leaves_an_existing_output_untouched(tmp_path, capsys, monkeypatch):
    data = tmp_path / "pool.csv"
    write_blobs(data, n=40)
    out = tmp_path / "curve.csv"
    out.write_text("old content\n")

    def explode(self, step, budget):
        if step == 3:
            raise KeyboardInterrupt

    monkeypatch.setattr(cli_common.Progress, "__call__", explode)
    code, _, err = run(["simulate", str(data), "--budget", "10", "--out", str(out)], capsys)
    assert code == 130 and "interrupted" in err
    assert out.read_text() == "old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.csv", "pool.csv"]


def test_failed_csv_write_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    data = tmp_path / "pool.csv"
    write_blobs(data, n=40)
    out = tmp_path / "curve.csv"

    def broken_to_csv(self, path, **kw):
        Path(path).write_text("step,index\n1,")  # half a file, then the disk fills up
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", broken_to_csv)
    code, _, err = run(["simulate", str(data), "--budget", "3", "--out", str(out)], capsys)
    assert code == 2 and "No space left on device" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pool.csv"]


def test_atomic_write_replaces_in_one_step(tmp_path):
    target = tmp_path / "f.txt"
    atomic_write_text(target, "first")
    assert target.read_text() == "first"

    def failing(tmp):
        Path(tmp).write_text("partial")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        atomic_write(target, failing)
    assert target.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]
    with pytest.raises(FileNotFoundError, match="does not exist"):
        atomic_write_text(tmp_path / "missing" / "f.txt", "x")


# --------------------------------------------------------------------------- column roles
SENTENCES = ROOT / "sample_data" / "sentences.csv"


def test_simulate_prints_the_guessed_roles_and_uses_text_features(capsys):
    code, out, err = run(["simulate", str(SENTENCES), "--budget", "3"], capsys)
    assert code == 0, err
    assert "labeler: columns of sentences.csv (300 rows):" in err
    assert re.search(r"\n  id +id  \(named like an id, 300 unique integers\)", err)
    assert re.search(r"\n  text +text  \(named 'text'", err)
    assert "TF-IDF of the text column 'text'" in err and "--feature-cols" in err
    assert "labeler: text features: TF-IDF of" in err and "20 SVD components" in err
    assert len(out.strip().splitlines()) == 4
    code, _, err = run(["simulate", str(SENTENCES), "--budget", "3", "--quiet"], capsys)
    assert code == 0 and "columns of" not in err


def test_role_options_change_the_guess(tmp_path, capsys, monkeypatch):
    rng = np.random.default_rng(0)
    path = tmp_path / "t.csv"
    pd.DataFrame({"key": np.arange(40) + 7, "a": rng.normal(size=40), "b": rng.normal(size=40),
                  "kind": np.arange(40) % 2, "note": [f"word{i % 5} other{i % 3} more" for i in range(40)]}
                 ).to_csv(path, index=False)
    loaded = []
    real = cli_simulate.open_data

    def spy(*args, **kwargs):
        ds, options = real(*args, **kwargs)
        loaded.append(options)
        return ds, options

    monkeypatch.setattr(cli_simulate, "open_data", spy)
    argv = ["simulate", str(path), "--budget", "2", "--out", str(tmp_path / "c.csv"), "--label-col", "kind"]
    code, _, err = run(argv, capsys)
    assert code == 0, err
    assert loaded[-1]["id_col"] == "key" and loaded[-1]["feature_cols"] == ["a", "b"]
    assert loaded[-1]["text_col"] == "note" and loaded[-1]["label_col"] == "kind"
    code, _, err = run(argv + ["--id-col", "", "--feature-cols", "a", "--text-col", "none"], capsys)
    assert code == 0, err
    assert loaded[-1]["id_col"] is None and loaded[-1]["feature_cols"] == ["a"]
    assert loaded[-1]["text_col"] is None and "id             - (row numbers)" in err
    code, _, err = run(argv + ["--features-from", "text"], capsys)
    assert code == 0, err
    assert loaded[-1]["features_from"] == "text" and "labeler: text features" in err
    code, _, err = run(argv + ["--feature-cols", "key,a"], capsys)
    assert code == 2 and "'key' is the numeric id column" in err
    code, _, err = run(argv + ["--layout-cols", "a"], capsys)
    assert code == 2 and "--layout-cols needs two columns" in err


def test_role_options_for_data_without_columns_are_refused(app_calls, capsys):
    code, _, err = run(["simulate", "moons", "--id-col", "id", "--budget", "2"], capsys)
    assert code == 2 and "--id-col: column roles apply to CSV and Parquet tables" in err
    code, _, err = run(["app", "moons", "--text-col", "t"], capsys)
    assert code == 2 and "column roles apply" in err and app_calls == []
    code, _, err = run(["app", "--label-col", "y"], capsys)
    assert code == 2 and "need a data file" in err and app_calls == []


@pytest.mark.parametrize("extra,needle", [
    ([], "the median distance between the points is 0"),  # SettingsError at its source (width_grid)
    (["--posterior", "spectral", "--validation", "VAL"], "A spectral (graph) posterior has no kernel outside"),
    (["--validation", "OTHER"], "are not classes of the pool"),
    (["--executor", "local-dask:0"], "--executor local-dask:0"),
    (["--posterior", "nystrom", "--rank", "500"], "rank must be between 1 and 40"),  # session/config.py
    (["--posterior", "spectral", "--knn", "100"], "knn must be below the pool size 40"),
    (["--model", "harmonic", "--graph-k", "100"], "pass --graph-k between 1 and 39"),  # was core's knn_graph
])
def test_settings_that_cannot_work_exit_2_with_the_fix(tmp_path, capsys, extra, needle):
    """Each was a bare ValueError caught by the command line; now the project's own error type."""
    data = tmp_path / "pool.csv"
    if not extra:  # constant points: no automatic RBF width
        pd.DataFrame({"f1": [1.0] * 8, "f2": [2.0] * 8, "label": ["a", "b"] * 4}).to_csv(data, index=False)
    else:
        write_blobs(data, n=40)
    write_blobs(tmp_path / "val.csv", n=20, seed=1)
    write_blobs(tmp_path / "other.csv", n=20, seed=2, label="label")
    other = pd.read_csv(tmp_path / "other.csv")
    other["label"] = np.where(other["label"] == "pos", "up", "down")
    other.to_csv(tmp_path / "other.csv", index=False)
    extra = [str(tmp_path / "val.csv") if a == "VAL" else str(tmp_path / "other.csv") if a == "OTHER" else a
             for a in extra]
    code, _, err = run(["simulate", str(data), "--budget", "2", "--quiet", *extra], capsys)
    assert code == 2, err
    assert needle in err and "labeler: error:" in err


def test_simulate_refuses_a_validation_file_for_text_features(tmp_path, capsys):
    code, _, err = run(["simulate", str(SENTENCES), "--validation", str(SENTENCES), "--budget", "2"], capsys)
    assert code == 2 and "TF-IDF of its text column" in err and "Leave --validation out" in err


def test_app_on_a_text_table_prints_roles_and_passes_them_with_the_environment_options(
        app_calls, capsys, monkeypatch):
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 120, "label_col": null}')
    code, _, err = run(["app", str(SENTENCES), "--port", "9002"], capsys)
    assert code == 0, err
    assert "labeler: columns of sentences.csv" in err
    assert "labeler: sentences: 120 points, 20 features, no labels; starting the app" in err
    options = app_calls[-1]["data_options"]
    assert options["n"] == 120 and options["label_col"] is None  # given in the environment
    assert options["text_col"] == "text" and options["features_from"] == "text"
    assert options["text_components"] == 20
    monkeypatch.setenv("LABELER_DATA_OPTIONS", "[1]")
    code, _, err = run(["app", str(SENTENCES)], capsys)
    assert code == 2 and "LABELER_DATA_OPTIONS must be a JSON object" in err


@pytest.mark.parametrize("content,needle", [
    ("a,b\nx,y\nz,w\n", "no numeric feature column"),
    ("u,label\n1.0,a\n2.0,a\n", "at least two classes"),
    ("", "is empty"),
])
def test_app_with_a_file_that_cannot_be_loaded_exits_before_the_server(tmp_path, content, needle):
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("LABELER_DATA_OPTIONS", None)
    proc = subprocess.run([sys.executable, "-m", "labeler", "app", str(bad), "--port", "1"],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    # a server, once started, would run until the timeout
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "labeler: error:" in proc.stderr and needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "streamlit" not in (proc.stdout + proc.stderr).lower()
    assert "URL" not in proc.stdout


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_the_app_session_takes_the_file_labeler_app_checked_instead_of_reading_it_again(
        tmp_path, monkeypatch, suffix):
    """`labeler app PATH` loads the file before the server starts; the first session made as
    the app makes it (SessionConfig(dataset, data_options)) gets that data set, not a second
    read. A later session, or a file changed in between, reads the file."""
    import pandas as pd

    import labeler.data.load as load_mod
    import labeler.serve
    from labeler.cli.entry import _main
    from labeler.session import LabelingSession, SessionConfig

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": [f"r{i}" for i in range(60)], "f1": rng.normal(size=60),
                          "f2": rng.normal(size=60), "label": rng.choice(["a", "b"], 60)})
    path = tmp_path / f"data{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    reads = []
    real_read = load_mod.read_table
    monkeypatch.setattr(load_mod, "read_table", lambda *a, **k: reads.append(1) or real_read(*a, **k))
    given = {}
    monkeypatch.setattr(labeler.serve, "run_app", lambda **kw: given.update(kw))
    monkeypatch.delenv("LABELER_DATA_OPTIONS", raising=False)
    assert _main(["app", str(path), "--port", "1"]) == 0
    checked = len(reads)  # the command's own reads (its column roles, then the data set)
    assert checked >= 1

    def new_session(name):
        config = SessionConfig(dataset=given["data"], dataset_options=given.get("data_options", {}))
        return LabelingSession.create(tmp_path / f"{name}.sqlite", config)

    first = new_session("first")
    assert len(reads) == checked  # handed over: not read again
    second = new_session("second")
    assert len(reads) == checked + 1  # one use only
    np.testing.assert_array_equal(first.X, second.X)
    # the file changes after the check: the session reads the new file
    assert _main(["app", str(path), "--port", "1"]) == 0
    again = len(reads)
    frame.loc[0, "f1"] = 99.0
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    os.utime(path, ns=(os.stat(path).st_atime_ns, os.stat(path).st_mtime_ns + 10**9))
    third = new_session("third")
    assert len(reads) == again + 1 and 99.0 in np.asarray(third.dataset.frame["f1"])


def test_a_handed_over_data_set_waits_for_the_next_load_only(tmp_path):
    import pandas as pd

    import labeler.data.load as load_mod

    path = tmp_path / "d.csv"
    pd.DataFrame({"f": np.arange(10.0), "g": np.arange(10.0) ** 2, "label": ["a", "b"] * 5}).to_csv(path, index=False)
    ds = load_mod.load_dataset(str(path))
    load_mod.hand_over(ds)
    load_mod.load_dataset("moons")  # another load first: the kept one is let go
    assert load_mod._HANDED_OVER is None
    assert load_mod.load_dataset(str(path)) is not ds
    load_mod.hand_over(ds)
    assert load_mod.load_dataset(str(path), seed=0) is ds  # the same arguments, defaults filled in
    assert load_mod.load_dataset(str(path)) is not ds
    load_mod.hand_over(ds)
    assert load_mod.load_dataset(str(path), seed=1) is not ds  # other arguments: read


def test_simulate_standardize_on_off_auto(tmp_path, capsys, monkeypatch):
    data = tmp_path / "pool.csv"
    frame = write_blobs(data, n=60, seed=4)
    frame["f2"] = frame["f2"] * 1000.0  # columns on different scales: auto standardises
    frame.to_csv(data, index=False)
    seen = []
    real = labeler.experiments.simulate.app_settings

    def spy(*a, **kw):
        out = real(*a, **kw)
        seen.append((kw.get("standardize"), out["standardize"]))
        return out

    monkeypatch.setattr(labeler.experiments.simulate, "app_settings", spy)
    for flag, want in (([], True), (["--standardize", "off"], False), (["--standardize", "on"], True)):
        code, _, err = run(["simulate", str(data), "--budget", "2", "--quiet"] + flag, capsys)
        assert code == 0, err
        assert seen[-1][1] is want, flag
    code, _, err = run(["simulate", str(data), "--budget", "2", "--standardize", "maybe"], capsys)
    assert code == 2 and "--standardize" in err


def test_app_standardize_goes_to_the_first_session(app_calls, capsys, monkeypatch):
    import json

    monkeypatch.delenv("LABELER_MODEL", raising=False)
    assert cli.main(["app", "moons", "--standardize", "off"]) == 0
    assert json.loads(os.environ["LABELER_MODEL"])["standardize"] == "off"
    from labeler.ui.config import _model_options
    assert _model_options(os.environ["LABELER_MODEL"])["standardize"] == "off"
    monkeypatch.delenv("LABELER_MODEL", raising=False)
