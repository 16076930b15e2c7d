"""Lower tabs of the labelling screen: progress, confidence (with the bin inspector), history.

The adapters ``loo_arrays`` and ``bin_arrays`` turn the session's results into plain arrays
for :mod:`labeler.ui.figures`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from labeler.ui import actions
from labeler.ui import figures as F
from labeler.ui.text import md_text
from labeler.ui.view import ScreenView, point_image, upscale

__all__ = ["render_progress", "render_confidence", "render_history", "loo_arrays", "bin_arrays"]

_PLOT_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}
INSPECT_LIMIT = 24


def loo_arrays(result) -> tuple[np.ndarray, np.ndarray, float | None, float | None]:
    """``(lams, errors, LOO-chosen lambda, lambda in use)`` from ``session.loo_curve()``
    (a mapping with ``lams``, ``errors``, ``lam`` and ``current``)."""
    lams = np.asarray(result["lams"], dtype=float)
    errors = np.asarray(result["errors"], dtype=float)
    chosen, current = result.get("lam"), result.get("current")
    return (lams, errors, None if chosen is None else float(chosen),
            None if current is None else float(current))


def bin_arrays(result) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(lo, hi, accuracy, counts)`` per bin from ``session.confidence_bins()``
    (:class:`core.confidence.ConfidenceBins`: ``edges``, ``accuracy``, ``counts``)."""
    edges = np.asarray(result.edges, dtype=float)
    lo, hi = edges[:-1], edges[1:]
    accuracy = np.asarray(result.accuracy, dtype=float)
    counts = np.asarray(result.counts, dtype=np.int64)
    return lo, hi, accuracy, counts


# ------------------------------------------------------------------------------------------
def render_progress(session) -> None:
    """Estimated risk over labels and the LOO error over lambda."""
    left, right = st.columns(2)
    with left:
        st.markdown("**Estimated risk** (eq. 3.49) after each label")
        st.caption("Expected number of misclassified pool points (weighted by 1/w of each "
                   "class), summed over the whole pool; lower is better.")
        history = session.history
        if len(history) and "estimated_risk" in history:
            fig = F.risk_curve_figure(history["n_labeled"].to_numpy(float),
                                      pd.to_numeric(history["estimated_risk"], errors="coerce").to_numpy(float))
            st.plotly_chart(fig, key="risk_chart", config=_PLOT_CONFIG)
        else:
            st.caption("Label a few points to see the risk curve.")
    with right:
        st.markdown("**Leave-one-out error** over λ")
        try:
            with st.spinner("Computing the LOO curve…"):
                lams, errors, chosen, current = loo_arrays(session.loo_curve())
        except ValueError as exc:
            st.caption(f"Not available yet: {md_text(exc)}")
            return
        if lams.size:
            st.plotly_chart(F.loo_curve_figure(lams, errors, chosen, current=current), key="loo_chart",
                            config=_PLOT_CONFIG)
        else:
            st.caption("Needs labels of at least two classes.")


def render_confidence(session, view: ScreenView) -> None:
    """Confidence histogram, accuracy per bin, and the bin inspector."""
    pred = view.predictions
    unlabeled = view.label_codes < 0
    conf = pred["confidence"].to_numpy(dtype=float)
    left, right = st.columns(2)
    with left:
        st.markdown(f"**Confidence of the {int(unlabeled.sum()):,} unlabelled points**")
        st.plotly_chart(F.confidence_histogram_figure(conf[unlabeled]), key="conf_hist",
                        config=_PLOT_CONFIG)
    with right:
        st.markdown("**Accuracy per confidence bin** (LOO predictions of labelled points)")
        st.caption("Accepted predictions are left out: they only repeat the model's guess.")
        try:
            lo, hi, accuracy, counts = bin_arrays(session.confidence_bins(n_bins=10))
        except ValueError as exc:
            st.caption(f"Not available yet: {md_text(exc)}")
        else:
            st.plotly_chart(F.accuracy_per_bin_figure(lo, hi, accuracy, counts), key="acc_bins",
                            config=_PLOT_CONFIG)
    _bin_inspector(session, view)


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
    conf = view.predictions["confidence"].to_numpy(dtype=float)
    order = indices[np.argsort(conf[indices], kind="stable")]
    shown = order[:INSPECT_LIMIT]
    predicted = view.predictions["predicted"].to_numpy()
    # the classes shown and the state they came from: the session refuses the batch if the
    # state changed (the key names the state, so a press on an old page names its old batch)
    st.button(f"Accept the predicted class of all {indices.size:,} points in this bin",
              key=f"accept_bin_{view.version}", on_click=actions.accept,
              args=(indices.tolist(), [str(c) for c in predicted[indices]], view.version),
              icon=":material/done_all:", help="One undo step reverts them all.")
    has_images = point_image(session.dataset, int(shown[0])) is not None
    if has_images:
        per_row = 8
        for start in range(0, shown.size, per_row):
            cols = st.columns(per_row)
            for col, i in zip(cols, shown[start:start + per_row]):
                with col:
                    st.image(upscale(point_image(session.dataset, int(i)), 96), width="stretch")
                    st.caption(f"#{i} → **{md_text(predicted[i])}** ({conf[i]:.2f})")
                    st.button("Label", key=f"inspect_{i}", on_click=actions.choose, args=(int(i),),
                              width="stretch")
    else:
        table = pd.DataFrame({"point": shown, "predicted": predicted[shown],
                              "confidence": np.round(conf[shown], 3)})
        X = np.asarray(session.dataset.X)
        names = list(getattr(session.dataset, "feature_names", None) or [])[: min(6, X.shape[1])]
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
