"""The progress tab's error rate: the estimated share of wrong predictions in the unlabelled
pool (calibrated, :meth:`labeler.session.views.Views.pool_error_rate`) with its
interval, beside the LOO error of the labels, with model changes marked."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["error_rate_figure", "error_rate_caption"]

_RATE, _LOO, _BAND = "#1f77b4", "#ff7f0e", "rgba(31,119,180,0.18)"


def error_rate_caption(rate: dict) -> str:
    """One line: the estimated pool error in % with its interval and the LOO error of the labels."""
    if not np.isfinite(rate.get("rate", np.nan)):
        return "No unlabelled point left: nothing to estimate."
    text = (f"Estimated error on the {rate['n']:,} unlabelled points: **{100 * rate['rate']:.1f} %** "
            f"(95 % interval {100 * rate['lower']:.1f} – {100 * rate['upper']:.1f} %), about "
            f"{rate['rate'] * rate['n']:.0f} wrong predictions.")
    if rate.get("n_loo"):
        text += (f" Unweighted LOO error of your {rate['n_loo']:,} labels: {100 * rate['loo_error']:.1f} % (the queried "
                 "points are the hard ones, so it overstates the pool's error).")
    return text


def error_rate_figure(trace: pd.DataFrame, *, height: int = 260) -> go.Figure:
    """Estimated pool error (%) with its band and the labels' LOO error (%) by label count.

    Parameters
    ----------
    trace : pandas.DataFrame
        :meth:`~labeler.session.views.Views.error_rate_trace`: n_labeled, rate, lower,
        upper, loo_error, model, model_changed. Rows where ``model_changed`` get a dotted
        vertical line named by the new model.
    """
    x = trace["n_labeled"].to_numpy(float)
    pct = {c: 100 * trace[c].to_numpy(float) for c in ("rate", "lower", "upper", "loo_error")}
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=np.concatenate([x, x[::-1]]),
                             y=np.concatenate([pct["upper"], pct["lower"][::-1]]), fill="toself",
                             fillcolor=_BAND, line=dict(width=0), hoverinfo="skip", name="95 % interval"))
    fig.add_trace(go.Scatter(x=x, y=pct["rate"], mode="lines+markers", name="pool (estimated)",
                             line=dict(color=_RATE, width=2), marker=dict(size=5),
                             hovertemplate="%{x} labels: pool error %{y:.1f} %<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=pct["loo_error"], mode="lines+markers", name="labels (LOO)",
                             line=dict(color=_LOO, width=1.5, dash="dot"), marker=dict(size=4),
                             hovertemplate="%{x} labels: LOO error %{y:.1f} %<extra></extra>"))
    for _, row in trace[trace["model_changed"]].iterrows():
        fig.add_vline(x=float(row["n_labeled"]), line=dict(color="#888888", width=1, dash="dot"),
                      annotation_text=str(row["model"]), annotation_font_size=10)
    top = np.nanmax(np.concatenate([pct["upper"], pct["loo_error"], [1.0]]))
    fig.update_layout(height=height, margin=dict(l=8, r=8, t=24, b=8), plot_bgcolor="#ffffff",
                      legend=dict(orientation="h", y=1.12, x=0, font=dict(size=10)))
    fig.update_xaxes(title_text="labels", showgrid=True, gridcolor="#eef0f4", zeroline=False)
    fig.update_yaxes(title_text="error (%)", range=[0, min(100.0, 1.1 * top)], showgrid=True,
                     gridcolor="#eef0f4", zeroline=False)
    return fig
