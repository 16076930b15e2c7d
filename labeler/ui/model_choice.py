"""The model of a new session and what the learner panel offers for it (plain functions: the
sidebar (:mod:`labeler.ui.sidebar`) draws them, the tests call them without Streamlit).

Issue 10 §2: a session's model is kernel RLS (``"rls"``, the default) or a graph model
(``"harmonic"``, ``"lgc"``, ``"poisson"``: issue 20 §3) on the kNN graph of the pool, chosen when the session is made (the
sidebar's "Open data" form, ``labeler app --model``). A graph model has no kernel width, lam,
class weights or posterior, so the learner panel offers only the strategies it can run.
"""

from __future__ import annotations

from labeler.session.model import MODEL_OPTIONS, MODELS, strategies_for

__all__ = ["MODEL_LABELS", "MODEL_OPTIONS", "model_label", "picked_model_settings", "same_model_settings",
           "strategies_for",
           "DEFAULT_ALPHA"]

MODEL_LABELS = {
    "rls": "Kernel RLS (ARLS)",
    "harmonic": "Harmonic function (kNN graph)",
    "lgc": "LGC: local and global consistency (kNN graph)",
    "poisson": "Poisson learning (kNN graph)",
    "auto": "Auto: chosen by leave-one-out (the first from the pool's graph)",  # session/model_selection.py
}
DEFAULT_ALPHA = 0.99


def model_label(name) -> str:
    """How the app names a model of :data:`labeler.session.model.MODELS`."""
    return MODEL_LABELS.get(name, str(name))


def picked_model_settings(values: dict, default_model: str = "rls") -> dict:
    """The :class:`~labeler.session.SessionConfig` fields of the new-session form's model choice.

    Parameters
    ----------
    values : dict
        The form's values: ``pick_model``, ``pick_graph_k``, ``pick_alpha``, ``pick_class_mass``
        (missing ones take their defaults).
    default_model : str
        The model when the form has none yet (``labeler app --model``).

    Returns
    -------
    dict
        ``{}`` for rls (the posterior settings of ``labeler app`` stay as they are); for a graph
        model ``model``, ``knn``, ``class_mass`` and, for lgc, ``alpha``.
    """
    model = values.get("pick_model") or default_model
    if model == "auto":  # chosen by LOO as labels arrive; the posterior settings stay as they are
        return {"model": "auto"}
    if model not in MODELS:
        raise ValueError(f"Unknown model {model!r}; choose one of {', '.join(MODELS)}.")
    options = MODEL_OPTIONS[model]
    if not options:
        return {}
    picked = {"knn": int(values.get("pick_graph_k") or 10), "class_mass": bool(values.get("pick_class_mass", False)),
              "alpha": float(values.get("pick_alpha") or DEFAULT_ALPHA)}
    return {"model": model, **{name: picked[name] for name in options}}


def same_model_settings(config, app_model: dict | None = None) -> dict:
    """The model settings of "New session on this data": the model of the session open now.

    Parameters
    ----------
    config : SessionConfig or None
        The open session's (resolved) configuration.
    app_model : dict, optional
        ``labeler app``'s model options (``LABELER_MODEL``), the settings a new session starts
        with at start-up.

    Returns
    -------
    dict
        For a graph model its ``model``, ``knn``, ``class_mass`` and (lgc) ``alpha``, so a
        harmonic session's new session is a harmonic session again; for rls ``app_model``
        without its graph-model fields (an rls session's new session is an rls session).
    """
    model = getattr(config, "model", "rls") or "rls"
    if getattr(config, "model_choice", "fixed") == "auto":  # an auto session's new session is auto again
        return {**{k: v for k, v in dict(app_model or {}).items() if k not in ("alpha", "class_mass")},
                "model": "auto"}
    options = MODEL_OPTIONS[model]
    if not options:
        return {k: v for k, v in dict(app_model or {}).items() if k not in ("model", "alpha", "class_mass")}
    kept = {"knn": int(config.knn), "class_mass": bool(getattr(config, "class_mass", False)),
            "alpha": float(getattr(config, "alpha", DEFAULT_ALPHA))}
    return {"model": model, **{name: kept[name] for name in options}}
