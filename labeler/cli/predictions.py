"""``labeler simulate --predictions CSV``: the option, its path checked first, and the file
written after the last label (:mod:`labeler.experiments.predictions`), for the kernel and the
graph simulations alike."""

from __future__ import annotations

from labeler.cli.common import check_output_path

__all__ = ["add_prediction_argument", "prediction_request", "write_requested_predictions"]


def add_prediction_argument(sim) -> None:
    """``labeler simulate --predictions CSV`` (on the ``simulate`` parser ``sim``)."""
    sim.add_argument("--predictions", metavar="CSV", help="after the last label, write id, label, predicted and "
                     "calibrated confidence of every evaluated point (the validation set, else the unlabelled pool)")


def prediction_request(args) -> dict | None:
    """``{}`` for ``simulate(..., final=...)`` to fill when ``--predictions`` is given (its path
    checked first, as ``--out``'s), else None."""
    path = check_output_path(getattr(args, "predictions", None), "--predictions")
    return None if path is None else {"path": path}


def write_requested_predictions(args, final: dict | None, dataset, y_val=None, validation=None) -> None:
    """Write ``--predictions`` from ``final`` (filled by the simulation); nothing without it.
    ``validation`` is the ``--validation`` data set (its ids name the rows), if any."""
    if final is None:
        return
    from labeler.experiments.predictions import write_final_predictions

    write_final_predictions(final["path"], final, dataset, y_val, getattr(validation, "ids", None))
