"""Input checks shared by the core modules.

Every check raises ``ValueError`` (or ``TypeError`` for a wrong type) whose message names the
bad value and says how to fix it. Checks never modify their input.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_features", "check_magnitude", "overflow_message", "check_positive", "check_index", "check_count",
           "MAX_FEATURE_MAGNITUDE", "LAM_RANGE", "WIDTH_RANGE", "check_lam", "check_width"]

#: Largest feature magnitude accepted where squares are formed (distances, variances): the
#: square of a larger value exceeds 1e300, and a sum of a few such squares overflows float64
#: (largest value about 1.8e308).
MAX_FEATURE_MAGNITUDE = 1e150

#: Regularisation values float64 supports: ``lambda / w`` (class weights up to ~1e6) and
#: ``1 / lambda`` stay finite and the outputs ``~ y / lambda`` stay normal numbers (not
#: subnormal, which would lose their digits).
LAM_RANGE = (1e-300, 1e300)
#: RBF widths float64 supports: ``1 / (2 width^2)`` is a finite, normal, positive number.
WIDTH_RANGE = (1e-150, 1e150)


def _check_in_range(name: str, value, bounds: tuple[float, float], what: str) -> float:
    v = check_positive(name, value)
    low, high = bounds
    if not low <= v <= high:
        raise ValueError(f"{name} must be between {low:g} and {high:g} ({what}); got {value!r}. "
                         f"Pass a value in that range.")
    return v


def check_lam(value, name: str = "lam") -> float:
    """``value`` as a float after checking it lies in :data:`LAM_RANGE` (ValueError with the range)."""
    return _check_in_range(name, value, LAM_RANGE, "what float64 supports for the regularisation")


def check_width(value, name: str = "width") -> float:
    """``value`` as a float after checking it lies in :data:`WIDTH_RANGE` (ValueError with the range)."""
    return _check_in_range(name, value, WIDTH_RANGE, "what float64 supports for an RBF width")


def check_features(X, *, name: str = "X", min_samples: int = 1, finite: bool = True) -> np.ndarray:
    """Return ``X`` as a C-contiguous float64 array of shape (n_samples, n_features).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Feature matrix. A 1-D array is refused (reshape it explicitly).
    name : str
        Name used in error messages.
    min_samples : int
        Smallest number of rows accepted.
    finite : bool, default True
        Check that every value is finite (one pass and an n x d boolean temporary); False
        leaves that to a caller that sees it more cheaply (a factor's row norms:
        :class:`core.posteriors.FactorPosterior`).

    Raises
    ------
    ValueError
        If ``X`` is empty, not 2-D, has fewer than ``min_samples`` rows, holds non-numeric
        values, or holds NaN or infinity.
    """
    arr = np.asarray(X)
    if arr.dtype == object or arr.dtype.kind in "USV":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name} holds non-numeric values (dtype {arr.dtype}). Encode categorical "
                "columns as numbers or drop them before fitting."
            ) from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(
            f"{name} has dtype {arr.dtype}, which is not numeric. Convert it to float first."
        )
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}. "
            "Use X.reshape(-1, 1) for a single feature."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): give at least one point and one feature.")
    if arr.shape[0] < min_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} point(s); at least {min_samples} are needed."
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not finite:
        return arr
    finite = np.isfinite(arr)
    if not finite.all():
        rows, cols = np.nonzero(~finite)
        raise ValueError(
            f"{name} contains {int((~finite).sum())} NaN or infinite value(s), first at row "
            f"{int(rows[0])}, column {int(cols[0])}. Impute or drop those rows before fitting."
        )
    return arr


def check_magnitude(X: np.ndarray, *, name: str = "X", columns=None) -> None:
    """Refuse features whose squares overflow float64 (``|x| > MAX_FEATURE_MAGNITUDE``).

    Squared distances (RBF widths and kernels) and variances (standardisation) of such values
    are infinite: a column holding one would silently become all zeros after standardising,
    or give infinite distances.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Finite float64 features (as :func:`check_features` returns them).
    name : str
        Name used in the message.
    columns : sequence of str, optional
        Column names for the message (default: column indices).

    Raises
    ------
    ValueError
        Naming every such column, the largest magnitude and its first row, and the fix.
    """
    largest = np.maximum(X.max(axis=0), -X.min(axis=0))  # |x| per column without a copy of X
    bad = np.flatnonzero(largest > MAX_FEATURE_MAGNITUDE)
    if bad.size:
        raise ValueError(overflow_message(X, bad, name=name, columns=columns))


def overflow_message(X: np.ndarray, bad, *, name: str = "X", columns=None) -> str:
    """The message of :func:`check_magnitude` for the columns ``bad`` of ``X``."""
    bad = [int(j) for j in bad]
    names = ", ".join(repr(str(columns[j])) if columns is not None else str(j) for j in bad)
    j = bad[0]
    col = X[:, j]
    row = int(np.argmax(np.abs(col)))
    return (
        f"{name}: column(s) {names} hold values too large for the kernel's arithmetic: "
        f"{'column ' + repr(str(columns[j])) if columns is not None else 'column ' + str(j)} has "
        f"{col[row]:.3g} at row {row}, and squares of values beyond {MAX_FEATURE_MAGNITUDE:.0e} "
        "overflow float64 (distances and standard deviations become infinite, a standardised "
        "column all zeros). Rescale those column(s) (e.g. divide by a power of ten, or take a "
        "logarithm) or drop them."
    )


def check_positive(name: str, value) -> float:
    """Return ``value`` as a float after checking it is a finite number > 0.

    Raises
    ------
    ValueError
        If ``value`` is not a finite positive real number.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a positive number; got {value!r}.")
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}. Pass a positive value.")
    return v


def check_index(i, n: int, *, name: str = "index") -> int:
    """Return ``i`` as a Python int after checking ``0 <= i < n``.

    Raises
    ------
    IndexError
        If ``i`` is not an integer in ``[0, n)``.
    """
    if isinstance(i, bool) or not isinstance(i, numbers.Integral):
        raise IndexError(f"{name} must be an integer point index; got {i!r}.")
    i = int(i)
    if not 0 <= i < n:
        raise IndexError(f"{name} {i} is out of range: the pool has {n} points (valid 0..{n - 1}).")
    return i


def check_count(name: str, value, minimum: int) -> int:
    """Return ``value`` as a Python int after checking it is an integer ``>= minimum``.

    Raises
    ------
    ValueError
        If ``value`` is not an integer (``bool`` is refused) or is below ``minimum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)
