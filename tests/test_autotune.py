"""Automatic tuning of width and lam while labelling (core.rls.tuning.auto_tune, the session's
re-tunes as events), and the issue-7 target: two-moons 99 % right by 25 labels with the app's
defaults."""

from __future__ import annotations

import numpy as np
import pytest

from core.kernels import Kernel
from core.rls import default_widths
from core.rls.tuning import (
    MAX_TUNE_LABELS,
    TUNE_EVERY_LABEL_UNTIL,
    auto_tune,
    lam_grid,
    retune_due,
)
from labeler.session import LabelingSession, SessionConfig
from labeler.store import Store


def _brute_errors(X, y, width, lams):
    """Oracle: LOO classification error by refitting without each point (no offset, weights 1)."""
    codes = np.where(np.asarray(y) == "b", 1.0, -1.0)
    K = Kernel("rbf", width=width)(X)
    out = []
    for lam in lams:
        wrong = 0
        for i in range(len(y)):
            keep = np.arange(len(y)) != i
            f = K[i, keep] @ np.linalg.solve(K[np.ix_(keep, keep)] + lam * np.eye(keep.sum()), codes[keep])
            wrong += (f > 0) != (codes[i] > 0)
        out.append(wrong / len(y))
    return np.array(out)


def _xor(n=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.where(X[:, 0] * X[:, 1] > 0, "a", "b")


# ---- the rule -----------------------------------------------------------------------------
def _brute_wrong(X, y, width, lam=0.1, squared=False):
    """Oracle: which points the LOO refits without them misclassify (no offset, weights 1),
    and with ``squared`` also the mean squared LOO error."""
    codes = np.where(np.asarray(y) == "b", 1.0, -1.0)
    K = Kernel("rbf", width=width)(X)
    wrong = np.zeros(len(y), dtype=bool)
    sq = 0.0
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        f = K[i, keep] @ np.linalg.solve(K[np.ix_(keep, keep)] + lam * np.eye(keep.sum()), codes[keep])
        wrong[i] = (f > 0) != (codes[i] > 0)
        sq += (f - codes[i]) ** 2 / len(y)
    return (wrong, sq) if squared else wrong


def test_auto_tune_errors_match_brute_force_and_the_strict_rule_moves_on_any_lower_error():
    X, y = _xor()
    widths = default_widths(X)
    fit = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=4.0), lam=0.1, widths=widths,
                    width_alpha=None, max_width_step=None)
    np.testing.assert_allclose(fit.width_errors, [_brute_errors(X, y, w, [0.1])[0] for w in fit.widths],
                               atol=1e-12)
    np.testing.assert_allclose(fit.lam_errors, _brute_errors(X, y, fit.width, fit.lams), atol=1e-12)
    assert 4.0 in fit.widths  # the width in use is always on the curve
    assert fit.width_changed and fit.width_errors.min() < fit.before_error
    assert fit.error == pytest.approx(fit.width_errors.min())
    # at the chosen width nothing is strictly better: a second call keeps it (no flapping)
    again = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=fit.width), lam=fit.lam,
                      widths=widths, width_alpha=None, max_width_step=None)
    assert not again.width_changed and again.width == fit.width


@pytest.mark.parametrize("start", range(11))
def test_the_width_moves_only_when_a_sign_test_says_it_is_clearly_better(start):
    """Oracle: the move is decided by a one-sided sign test (p < WIDTH_ALPHA) on the LOO
    mistakes the best width within reach (a factor WIDTH_MAX_STEP of the width in use; the whole
    grid when it is None) fixes
    against those it makes, both found by refitting without each point, from every width of
    the grid as the one in use."""
    from scipy.stats import binomtest

    from core.rls.tuning import WIDTH_ALPHA, WIDTH_MAX_STEP

    X, y = _xor(40, seed=3)
    widths = default_widths(X)
    w0 = float(widths[start])
    fit = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=w0), lam=0.1,
                    widths=widths, tune_lam=False)
    loo = [_brute_wrong(X, y, w, squared=True) for w in widths]
    errors = np.array([wrong.mean() for wrong, _ in loo])
    sq = np.array([s for _, s in loo])
    # the best width in reach: least error, then least squared error, then the largest width
    reach = (np.ones(len(widths), dtype=bool) if WIDTH_MAX_STEP is None
             else np.abs(np.log(np.asarray(widths) / w0)) <= np.log(WIDTH_MAX_STEP) + 1e-9)
    order = np.lexsort((-np.asarray(widths), sq, np.round(errors, 12)))
    best = float(widths[int(order[reach[order]][0])])
    here, there = loo[start][0], _brute_wrong(X, y, best)
    fixed, broken = int(np.sum(here & ~there)), int(np.sum(there & ~here))
    p = binomtest(fixed, fixed + broken, 0.5, alternative="greater").pvalue if fixed > broken else 1.0
    best_error = there.mean()
    should_move = best_error < here.mean() - 1e-12 and p < WIDTH_ALPHA
    assert fit.width_changed == should_move, (w0, best, fixed, broken, p, fit.reason)
    assert fit.width == (best if should_move else w0)
    if should_move:
        assert "sign test" in fit.reason
    elif best_error < here.mean() - 1e-12:
        assert "not clearly" in fit.reason


def test_a_near_tie_keeps_the_width_a_clear_gain_moves_it():
    X, y = _xor()
    widths = default_widths(X)
    # at 4.0 the best width fixes 4 LOO mistakes and makes 2 (p = 0.34): kept
    near = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=4.0), lam=0.1, widths=widths,
                     max_width_step=None)
    assert not near.width_changed and near.width == 4.0 and "not clearly" in near.reason
    # far too smooth: the XOR is smoothed away, the best width fixes many more than it makes
    far = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=float(widths[-1]) * 4), lam=0.1,
                    widths=widths, max_width_step=None)
    assert far.width_changed and far.error < far.before_error and "sign test" in far.reason


def test_auto_tune_keeps_the_width_in_use_on_a_tie():
    X, y = _xor()
    widths = default_widths(X)
    probe = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=widths[0]), lam=0.1,
                      widths=widths, tune_lam=False)
    tied = [w for w, e in zip(probe.widths, probe.width_errors) if np.isclose(e, probe.width_errors.min())]
    for w in tied:  # every width with the least error stays when it is the one in use
        fit = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=w), lam=0.1,
                        widths=widths, tune_lam=False)
        assert not fit.width_changed and fit.width == w


def test_lam_moves_only_on_decisive_evidence():
    X, y = _xor(40, seed=1)
    k = Kernel("rbf", width=0.6)
    # lam = 100 smooths the XOR away: the best lam fixes 9 LOO mistakes, makes 1 (p = 0.011)
    fit = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=k, lam=100.0, tune_width=False)
    assert fit.lam_changed and fit.error < fit.before_error - 0.15 and "sign test" in fit.reason
    # at the default 0.1 the best lam is at most a few points better: lam stays
    keep = auto_tune(X, y, ["a", "b"], [1.0, 1.0], kernel=k, lam=0.1, tune_width=False)
    assert not keep.lam_changed and keep.lam == 0.1
    np.testing.assert_allclose(keep.lams, lam_grid(1.0), rtol=1e-12)  # 0.1 is on the grid


def test_auto_tune_refuses_too_few_labels_and_caps_the_points():
    X, y = _xor(8)
    with pytest.raises(ValueError, match="Label more points first"):
        auto_tune(X[:3], y[:3], ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=1.0), lam=0.1,
                  tune_width=False)
    Xb, yb = _xor(MAX_TUNE_LABELS + 40, seed=2)
    fit = auto_tune(Xb, yb, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=1.0), lam=0.1,
                    tune_width=False)
    assert fit.n_points == MAX_TUNE_LABELS


def test_retune_schedule_every_label_then_a_doubling_step():
    due = [n for n in range(1, 400) if retune_due(n - 1, n)]
    assert due[: TUNE_EVERY_LABEL_UNTIL - 3] == list(range(4, TUNE_EVERY_LABEL_UNTIL + 1))
    later = [n for n in due if n > TUNE_EVERY_LABEL_UNTIL]
    assert later == [60, 70, 80, 90, 100, 120, 140, 160, 180, 200, 240, 280, 320, 360]
    assert retune_due(55, 95) and retune_due(95, 55)  # a batch or an undo that crosses a step
    assert not retune_due(61, 65) and not retune_due(2, 3)


# ---- the session --------------------------------------------------------------------------
def _label_truly(s, k):
    y = s.dataset.y
    for _ in range(k):
        q = s.next_query()
        assert s.label(q, str(y[q]), expected_query=q)


def test_re_tunes_are_setting_events_and_a_reopened_session_replays_them(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 200}, seed=2))
    assert s.tuning_status()["auto"] == {"width": True, "lam": True}
    _label_truly(s, 20)
    with Store(store) as st:
        events = [e for e in st.events(s.id) if e.kind == "setting"]
    assert events and all(e.value["auto"] is True and e.value["name"] in ("width", "lam") for e in events)
    assert events[-1].value["value"] == s.config.width  # the stored number is the one in use
    m = np.array(s.learner.decision_values)
    width, lam, sid = s.config.width, s.config.lam, s.id
    s.close()
    # reopening never runs the tuner: it replays the stored numbers
    from labeler.session import model

    monkeypatch.setattr(model, "auto_tune", lambda *a, **k: pytest.fail("the tuner ran on reopening"))
    r = LabelingSession.open(store, sid)
    assert (r.config.width, r.config.lam) == (width, lam)
    np.testing.assert_allclose(np.array(r.learner.decision_values), m, rtol=0, atol=1e-10)


def test_a_number_typed_turns_auto_off_and_auto_turns_it_on_again(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 120}))
    s.set_width(0.9)
    assert s.auto_tune == {"width": False, "lam": True} and s.config.width == 0.9
    _label_truly(s, 12)
    assert s.config.width == 0.9  # fixed widths stay
    s.set_width("auto")
    assert s.auto_tune["width"]
    status = s.tuning_status()
    assert status["width"] == s.config.width and status["note"]


def test_a_failed_re_tune_keeps_the_label_and_says_why(tmp_path, monkeypatch):
    from labeler.session import model

    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 120}))
    _label_truly(s, 5)

    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("K_LL + Lambda_L is not positive definite")

    monkeypatch.setattr(model, "auto_tune", broken)
    q = s.next_query()
    assert s.label(q, str(s.dataset.y[q]), expected_query=q)
    assert s.n_labeled == 6 and "not applied" in s.tuning_status()["note"]


def test_old_sessions_without_the_flag_are_not_re_tuned(tmp_path):
    cfg = SessionConfig(dataset="moons", dataset_options={"n": 120})
    s = LabelingSession.create(tmp_path / "s.sqlite", cfg)
    s._config.auto_tune = None  # as read from a config stored before the flag existed
    width = s.config.width
    _label_truly(s, 10)
    assert s.config.width == width and s.auto_tune == {"width": False, "lam": False}


@pytest.mark.slow
@pytest.mark.parametrize("model", ["auto", "rls"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_two_moons_99_percent_by_25_labels_with_the_app_defaults(tmp_path, seed, model):
    """Issue 7's target. The session is made as the app makes it (labeler.ui.state.new_session:
    SessionConfig(dataset, dataset_options) and the layout/PCA/initial-label defaults; the
    model "auto" of ``labeler app``, which starts the two moons on the harmonic model, and RLS
    fixed), the queried points get their true labels, and 99 % of the pool (all 1000 points)
    must be predicted right by 25 labels, for every one of 5 seeds (measured over 10 seeds: at
    least 99.3 % each, docs in the README)."""
    config = SessionConfig(dataset="moons", dataset_options={}, layout="auto", pca_components=None,
                           initial_labels=0, seed=seed, model=model)
    s = LabelingSession.create(tmp_path / "s.sqlite", config)
    assert s.n_samples == 1000 and s.auto_tune == {"width": True, "lam": True}
    assert s.config.model == ("harmonic" if model == "auto" else "rls")
    y = np.asarray(s.dataset.y).astype(str)
    _label_truly(s, 25)
    accuracy = np.mean(np.asarray(s.learner.predict()).astype(str) == y)
    print(f"moons seed {seed} model {model} -> {s.config.model}: {100 * accuracy:.1f} % at 25 labels")
    assert accuracy >= 0.99, (seed, accuracy, s.tuning_status())


# ---- bounded width moves (issue 20 §6) ---------------------------------------------------------
def test_a_bounded_width_move_is_the_best_width_within_the_factor():
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=40, noise=0.05, random_state=0)
    labels = ["a" if v == 0 else "b" for v in y]
    grid = np.geomspace(0.05, 8.0, 15)
    kernel = Kernel("rbf", width=3.0)  # far too smooth: LOO asks for a much smaller width
    free = auto_tune(X, labels, ["a", "b"], [1.0, 1.0], kernel=kernel, lam=0.1, tune_lam=False, widths=grid,
                     max_width_step=None)
    bounded = auto_tune(X, labels, ["a", "b"], [1.0, 1.0], kernel=kernel, lam=0.1, tune_lam=False, widths=grid,
                        max_width_step=2.0)
    assert free.width < 0.75  # the unbounded rule jumps more than a factor 4
    assert bounded.width_changed and 1.5 - 1e-9 <= bounded.width < 3.0
    # oracle: least error among the widths in reach (ties: least squared error, largest width)
    reach = np.abs(np.log(bounded.widths / 3.0)) <= np.log(2.0) + 1e-9
    best_err = bounded.width_errors[reach].min()
    assert bounded.width_errors[np.isclose(bounded.widths, bounded.width)][0] == best_err


def test_width_max_step_default_is_read_at_call_time(monkeypatch):
    from core.rls import tuning
    from sklearn.datasets import make_moons

    X, y = make_moons(n_samples=40, noise=0.05, random_state=0)
    labels = ["a" if v == 0 else "b" for v in y]
    grid = np.geomspace(0.05, 8.0, 15)
    monkeypatch.setattr(tuning, "WIDTH_MAX_STEP", 2.0)
    fit = auto_tune(X, labels, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=3.0), lam=0.1, tune_lam=False,
                    widths=grid)
    assert fit.width >= 1.5 - 1e-9
