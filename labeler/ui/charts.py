"""Lower tabs of the labelling screen: progress (stopping signal, LOO curves), confidence
(with the bin inspector), history; and the small panels other parts show (the values in use,
why a point is asked for).

The adapters ``loo_arrays`` and ``bin_arrays`` turn the session's results into plain arrays
for :mod:`labeler.ui.figures`; ``tuning_caption`` and ``accept_warning`` are plain text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from labeler.session.settings import CurvesPending
from labeler.ui import actions
from labeler.ui import figures as F
from labeler.ui.error_chart import error_rate_caption, error_rate_figure
from labeler.ui.text import md_text
from labeler.ui.view import ScreenView, point_image, upscale

__all__ = ["render_progress", "render_confidence", "render_history", "render_stopping",
           "render_query_explanation", "loo_arrays", "bin_arrays", "tuning_caption", "accept_warning",
           "stopping_loo_row"]

_PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}
INSPECT_LIMIT = 24


def loo_arrays(result) -> dict:
    """The two LOO curves of ``session.loo_curve()`` as plain arrays: ``lam`` and ``width``
    entries, each ``(grid, errors, in_use, chosen)`` (``width`` None without an RBF kernel),
    and ``auto`` flags."""
    out = {"auto": dict(result.get("auto") or {})}
    lams = np.asarray(result["lams"], dtype=float)
    out["lam"] = (lams, np.asarray(result["errors"], dtype=float), result.get("current"), result.get("lam"))
    widths = np.asarray(result.get("widths", []), dtype=float)
    out["width"] = None if widths.size == 0 else (
        widths, np.asarray(result["width_errors"], dtype=float), result.get("width"), result.get("chosen_width"))
    return out


def bin_arrays(result) -> tuple[np.ndarray, ...]:
    """``(lo, hi, accuracy, counts, lower, upper)`` per bin from ``session.confidence_bins()``
    (:class:`core.confidence.ConfidenceBins`: ``edges``, ``accuracy``, ``counts``, and the
    Wilson interval ``lower``, ``upper``)."""
    edges = np.asarray(result.edges, dtype=float)
    lo, hi = edges[:-1], edges[1:]
    accuracy = np.asarray(result.accuracy, dtype=float)
    counts = np.asarray(result.counts, dtype=np.int64)
    lower = np.asarray(result.lower, dtype=float)
    upper = np.asarray(result.upper, dtype=float)
    return lo, hi, accuracy, counts, lower, upper


def _pct(x: float, digits: int = 1) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * max(float(x), 0.0):.{digits}f} %"


def tuning_caption(status: dict) -> str:
    """The width and lam in use, and whether each is re-tuned automatically, in words (from
    ``session.tuning_status()``)."""
    auto = status.get("auto") or {}
    if status.get("lam") is None:  # a graph model: nothing to tune
        return "No kernel width or λ: a graph model has none."
    parts = []
    if status.get("width") is not None:
        parts.append(f"width **{status['width']:.4g}**" + (" (auto)" if auto.get("width") else " (fixed)"))
    parts.append(f"λ **{status['lam']:.4g}**" + (" (auto)" if auto.get("lam") else " (fixed)"))
    text = "In use: " + ", ".join(parts) + "."
    if auto.get("width") or auto.get("lam"):
        text += (" *auto*: re-tuned by leave-one-out on your labels after each label up to 50, "
                 "then every 10-20-40… labels.")
    return text


def stopping_loo_row(sig) -> str:
    """The stopping panel's line on the labels' LOO error: unweighted (each label counts once),
    said so beside the model line's weighted error (labeler.session.model_selection)."""
    return (f"Unweighted LOO error of your {sig.loo_n:,} labels (each counts once): **{_pct(sig.loo_error)}** "
            f"(95 % interval {_pct(sig.loo_lower)} – {_pct(sig.loo_upper)}; the queried "
            "points are the hard ones, so this overstates the pool's error)")


def render_stopping(session) -> None:
    """The stopping signal (:mod:`labeler.session.stopping`) as a small panel in plain words."""
    with st.container(border=True, key="stopping_panel"):
        try:
            sig = session.stopping_signal()
        except ValueError as exc:
            st.caption(f"Stopping signal not available: {md_text(exc)}")
            return
        headline = "**Likely enough labels.**" if sig.enough else "**Keep going.**"
        reason = sig.message.split(": ", 1)[-1]
        (st.success if sig.enough else st.info)(headline + " " + md_text(reason[:1].upper() + reason[1:]))
        rows = []
        if sig.loo_n:
            rows.append(stopping_loo_row(sig))
        if sig.changed_since is not None:
            rows.append(f"Predictions changed over the last {sig.n_labels - sig.changed_since} labels: "
                        f"**{_pct(sig.changed_fraction)}** of the pool")
        if sig.kappas:
            rows.append("Agreement κ of successive models: " + ", ".join(f"{k:.3f}" for k in sig.kappas)
                        + f" (stable at a mean ≥ {session.stopping_monitor.threshold:g})")
        if sig.window_changed == sig.window_changed:  # NaN until the window is full
            rows.append(f"Predicted differently by the oldest and newest model of the window: "
                        f"**{_pct(sig.window_changed)}** of the pool (at most "
                        f"{_pct(session.stopping_monitor.max_window_changed)} for \"likely enough\")")
        if sig.uncovered == sig.uncovered:  # NaN: the pool has no separate clusters to check
            rows.append(f"Pool in clusters without any of your labels: **{_pct(sig.uncovered)}** "
                        f"(at most {_pct(session.stopping_monitor.max_uncovered)} for \"likely enough\")")
        if rows:
            st.markdown("\n".join(f"- {r}" for r in rows))


def render_progress(session) -> None:
    """The stopping signal and estimated risk (left), the LOO error the tuner sees (right)."""
    left, right = st.columns(2)
    with left:
        render_stopping(session)
        st.markdown("**Estimated error of the unlabelled pool** after each label")
        try:
            rate = session.pool_error_rate()
            trace = session.error_rate_trace()
        except ValueError as exc:
            st.caption(f"Not available yet: {md_text(exc)}")
        else:
            st.markdown(error_rate_caption(rate))
            if len(trace):
                st.plotly_chart(error_rate_figure(trace), key="error_rate_chart", config=_PLOT_CONFIG)
            st.caption("From the calibrated confidence of every unlabelled point (its probability of "
                       "being wrong, summed); the band adds the calibration's uncertainty. Dotted "
                       "lines: the width, λ or model changed. Shown since this session was opened.")
    with right:
        st.markdown("**Leave-one-out error** of your labels around the values in use")
        try:
            result = session.loo_curve()  # the app computes it in the background: the last one ready
        except CurvesPending as exc:
            st.caption(f"Not shown yet: {md_text(exc)} (they appear at your next action).")
            return
        except ValueError as exc:  # too few labels, or a graph model (nothing to tune)
            st.caption(f"Not available{'' if 'does not apply' in str(exc) else ' yet'}: {md_text(exc)}")
            return
        curves = loo_arrays(result)
        if result.get("pending"):
            st.caption(f"Computed on {result['n_labels']:,} labels and the values then in use; those of the labels "
                       "and values now are being computed (shown at your next action).")
        auto = curves["auto"]
        if curves["width"] is not None:
            grid, errors, in_use, chosen = curves["width"]
            st.plotly_chart(F.loo_curve_figure(grid, errors, in_use, chosen=chosen, name="width",
                                               auto=bool(auto.get("width"))),
                            key="loo_width_chart", config=_PLOT_CONFIG)
        grid, errors, in_use, chosen = curves["lam"]
        st.plotly_chart(F.loo_curve_figure(grid, errors, in_use, chosen=chosen, name="λ",
                                           auto=bool(auto.get("lam"))),
                        key="loo_chart", config=_PLOT_CONFIG)
        st.caption("Width: at the λ in use; λ: at the width in use. The tuner moves the width "
                   "when another has fewer LOO mistakes, λ only when the sign test says it is "
                   "clearly better.")


def render_query_explanation(session, index: int, pending: bool = False) -> None:
    """Why the strategy asks for ``index`` (an expander of the point panel); ``pending``: not
    computed in this run, the expander says so (:mod:`labeler.ui.first_paint`)."""
    with st.expander("Why this point?", icon=":material/help:", expanded=False):
        if pending:
            from labeler.ui.first_paint import PENDING

            st.caption(PENDING)
            return
        try:
            why = session.explain_query(index)
        except (ValueError, IndexError) as exc:
            st.caption(f"Not available: {md_text(exc)}")
            return
        if why is None:
            return
        st.markdown("\n".join(f"- {md_text(r)}" for r in why.reasons))


def render_confidence(session, view: ScreenView) -> None:
    """Confidence histogram, accuracy per bin (with counts and intervals), the bin inspector."""
    unlabeled = view.label_codes < 0
    conf = view.confidence
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Confidence of the {int(unlabeled.sum()):,} unlabelled points**")
        st.plotly_chart(F.confidence_histogram_figure(conf[unlabeled]), key="conf_hist",
                        config=_PLOT_CONFIG)
    with right:
        st.markdown("**Accuracy per confidence bin** (LOO predictions of labelled points)")
        st.caption("n = labelled points behind each bar; whiskers: Wilson 95 % interval of the "
                   "bin's accuracy. Accepted predictions are left out: they only repeat the "
                   "model's guess.")
        try:
            lo, hi, accuracy, counts, lower, upper = bin_arrays(session.confidence_bins(n_bins=10))
        except ValueError as exc:
            st.caption(f"Not available yet: {md_text(exc)}")
        else:
            st.plotly_chart(F.accuracy_per_bin_figure(lo, hi, accuracy, counts, lower, upper),
                            key="acc_bins", config=_PLOT_CONFIG)
    _bin_inspector(session, view)


def accept_warning(risk: dict) -> str:
    """The confirmation text for accepting a bin (from ``session.bulk_accept_risk``)."""
    n = risk["n"]
    if risk["labelled"] == 0:
        basis = ("No labelled point has a LOO confidence in this bin, so its accuracy is unknown: "
                 f"anywhere from 0 to all {n:,} labels may be wrong.")
    else:
        basis = (f"Estimated from the {risk['labelled']} labelled point(s) in this bin: LOO accuracy "
                 f"{_pct(risk['accuracy'], 0)} (95 % interval {_pct(risk['lower'], 0)} – "
                 f"{_pct(risk['upper'], 0)}).")
    expected = risk["expected_wrong"]
    guess = "" if not np.isfinite(expected) else f"about {expected:.0f}, "
    return (f"Expect {guess}up to {risk['wrong_high']:.0f} of these {n:,} labels to be wrong "
            f"(95 % interval {risk['wrong_low']:.0f} – {risk['wrong_high']:.0f}). {basis}")


def _bin_inspector(session, view: ScreenView) -> None:
    st.markdown("**Inspect a confidence bin** of the unlabelled pool")
    edges = np.round(np.linspace(0.0, 1.0, 11), 2)
    labels = [f"{a:.1f} – {b:.1f}" for a, b in zip(edges[:-1], edges[1:])]
    st.session_state.setdefault("inspect_bin", 5)
    choice = st.select_slider("Bin", options=list(range(10)), format_func=lambda b: labels[b],
                              key="inspect_bin")
    lo, hi = float(edges[choice]), float(edges[choice + 1])
    if choice == 9:
        hi = np.nextafter(1.0, 2.0)  # the top bin holds confidence 1.0
    indices = np.asarray(session.points_in_bin(lo, hi), dtype=np.int64)
    st.caption(f"{indices.size:,} unlabelled points with confidence in [{lo:.1f}, {min(hi, 1.0):.1f}"
               f"{']' if choice == 9 else ')'}")
    if indices.size == 0:
        return
    conf = view.confidence
    order = indices[np.argsort(conf[indices], kind="stable")]
    shown = order[:INSPECT_LIMIT]
    predicted = view.predictions["predicted"].to_numpy()
    # the classes shown and the state they came from: the session refuses the batch if the
    # state changed (the key names the state, so a press on an old page names its old batch)
    args = (indices.tolist(), [str(c) for c in predicted[indices]], view.version)
    title = f"Accept the predicted class of all {indices.size:,} points in this bin"
    try:
        risk = session.bulk_accept_risk(lo, hi)
    except ValueError:
        risk = None
    if risk is not None and risk["uncertain"]:
        # an uncertain bin asks first, stating the wrong labels to expect
        with st.popover(title + "…", icon=":material/done_all:", key=f"accept_bin_ask_{view.version}"):
            st.warning(md_text(accept_warning(risk)))
            st.button(f"Accept all {indices.size:,} anyway", key=f"accept_bin_{view.version}",
                      on_click=actions.accept, args=args, type="primary",
                      help="One undo step reverts them all.")
    else:
        st.button(title, key=f"accept_bin_{view.version}", on_click=actions.accept, args=args,
                  icon=":material/done_all:",
                  help="One undo step reverts them all." + ("" if risk is None else " " + accept_warning(risk)))
    has_images = point_image(session.dataset, int(shown[0])) is not None
    if has_images:
        per_row = 8
        for start in range(0, shown.size, per_row):
            cols = st.columns(per_row)
            for col, i in zip(cols, shown[start:start + per_row]):
                with col:
                    st.image(upscale(point_image(session.dataset, int(i)), 96), width="stretch")
                    st.caption(f"{md_text(session.point_name(int(i)))} → **{md_text(predicted[i])}** ({conf[i]:.2f})")
                    st.button("Label", key=f"inspect_{i}", on_click=actions.choose, args=(int(i),),
                              width="stretch")
    else:
        table = pd.DataFrame({"point": shown, "predicted": predicted[shown],
                              "confidence": np.round(conf[shown], 3)})
        X = np.asarray(session.dataset.X)
        names = list(session.dataset.feature_names or [])[: min(6, X.shape[1])]
        for j, name in enumerate(names):
            table[str(name)] = np.round(X[shown, j], 4)
        st.dataframe(table, hide_index=True, width="stretch", height=min(38 + 35 * len(table), 320))
        cols = st.columns([3, 1])
        pick = cols[0].selectbox("Point to label", shown.tolist(), key="inspect_pick",
                                 label_visibility="collapsed")
        cols[1].button("Label it", key="inspect_label", on_click=actions.choose, args=(int(pick),),
                       width="stretch")
    if indices.size > shown.size:
        st.caption(f"Showing the {shown.size} least confident of {indices.size:,}.")


def render_history(session) -> None:
    """The latest label events, newest first."""
    history = session.history
    if not len(history):
        st.caption("No labels yet.")
        return
    cols = [c for c in ("order", "index", "id", "label", "source", "n_labeled", "estimated_risk",
                        "timestamp") if c in history]
    st.dataframe(history[cols].iloc[::-1].head(200), hide_index=True, width="stretch", height=320,
                 column_config={"estimated_risk": st.column_config.NumberColumn(format="%.2f")})
