"""Kernel functions, computed in row blocks to bound memory.

A Gaussian (RBF) kernel of width ``s`` is ``k(x, x') = exp(-||x - x'||^2 / (2 s^2))``
(seed 002 eq. 2.6; docs/algorithms.md notation). Polynomial: ``(x.x' + coef0) ** degree``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..validation import WIDTH_RANGE, check_features, check_magnitude, check_positive

__all__ = ["Kernel", "KERNELS", "median_distance"]

KERNELS = ("rbf", "linear", "poly")
_BLOCK_BYTES = 64 * 2**20  # temporary memory per block of rows


@dataclass(frozen=True)
class Kernel:
    """A kernel function with fixed parameters.

    Parameters
    ----------
    kind : {"rbf", "linear", "poly"}
        Kernel family.
    width : float
        RBF width ``s`` (only for ``"rbf"``).
    degree : int
        Polynomial degree (only for ``"poly"``).
    coef0 : float
        Polynomial offset (only for ``"poly"``).
    """

    kind: str = "rbf"
    width: float = 1.0
    degree: int = 3
    coef0: float = 1.0

    def __post_init__(self):
        if self.kind not in KERNELS:
            raise ValueError(f"Unknown kernel {self.kind!r}; choose one of {', '.join(KERNELS)}.")
        if self.kind == "rbf":
            width = check_positive("width", self.width)
            if not WIDTH_RANGE[0] <= width <= WIDTH_RANGE[1]:
                raise ValueError(
                    f"RBF width {self.width!r} gives no usable kernel: the width must be between "
                    f"{WIDTH_RANGE[0]:g} and {WIDTH_RANGE[1]:g} (1 / (2 width^2) a normal float64 number). "
                    "Use a width on the scale of the distances between points (e.g. the median distance)."
                )
            with np.errstate(over="ignore", divide="ignore", under="ignore"):
                gamma = np.float64(1.0) / (np.float64(2.0) * np.float64(width) ** 2)
            if not (np.isfinite(gamma) and gamma > 0.0):
                raise ValueError(
                    f"RBF width {self.width!r} gives no usable kernel: 1 / (2 width^2) is "
                    f"{'infinite' if not np.isfinite(gamma) else 'zero'} in float64. Use a width "
                    "on the scale of the distances between points (e.g. the median distance)."
                )
        if self.kind == "poly" and (int(self.degree) != self.degree or self.degree < 1):
            raise ValueError(f"degree must be a positive integer; got {self.degree!r}.")

    def __call__(self, X, Y=None, out=None) -> np.ndarray:
        """Kernel matrix ``k(X, Y)`` of shape (len(X), len(Y)), written into ``out`` if given.

        Computed in blocks of rows so that temporaries stay below 64 MiB whatever the size.
        """
        X = np.asarray(X, dtype=np.float64)
        Y = X if Y is None else np.asarray(Y, dtype=np.float64)
        n, m = X.shape[0], Y.shape[0]
        if out is None:
            out = np.empty((n, m), dtype=np.float64)
        elif out.shape != (n, m) or out.dtype != np.float64:
            raise ValueError(f"out must be a float64 array of shape {(n, m)}; got {out.dtype} {out.shape}.")
        y_sq = np.einsum("ij,ij->i", Y, Y) if self.kind == "rbf" else None
        step = max(1, _BLOCK_BYTES // (8 * max(m, 1)))
        for start in range(0, n, step):
            stop = min(n, start + step)
            block = out[start:stop]
            np.matmul(X[start:stop], Y.T, out=block)
            if self.kind == "rbf":
                x_sq = np.einsum("ij,ij->i", X[start:stop], X[start:stop])
                # -||x - y||^2 = 2 x.y - |x|^2 - |y|^2, clipped at 0 against rounding
                block *= 2.0
                block -= x_sq[:, None]
                block -= y_sq[None, :]
                np.minimum(block, 0.0, out=block)
                block *= self.gamma
                np.exp(block, out=block)
            elif self.kind == "poly":
                block += self.coef0
                block **= self.degree
        return out

    @property
    def gamma(self) -> float:
        """RBF ``1 / (2 width^2)`` (finite and > 0: checked at construction)."""
        return float(np.float64(1.0) / (np.float64(2.0) * np.float64(self.width) ** 2))

    def diag(self, X) -> np.ndarray:
        """Diagonal ``k(x_i, x_i)`` of shape (len(X),), without forming the matrix."""
        X = np.asarray(X, dtype=np.float64)
        if self.kind == "rbf":
            return np.ones(X.shape[0])
        sq = np.einsum("ij,ij->i", X, X)
        return sq if self.kind == "linear" else (sq + self.coef0) ** self.degree


def median_distance(X, max_points: int = 1000, seed=0) -> float:
    """Median Euclidean distance between pairs of points: the usual RBF width heuristic.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        At least two points.
    max_points : int
        Beyond this many points the median is taken over a random subset of ``max_points``
        rows (drawn without replacement), so the cost stays O(max_points^2 n_features).
    seed : int or numpy.random.Generator
        Seed (or generator) of that subset; with an int the result is deterministic.

    Returns
    -------
    float
        ``median_{i < j} ||x_i - x_j||`` over the (subset of) points, > 0.

    Raises
    ------
    ValueError
        If ``X`` has fewer than two points, ``max_points < 2``, or the median is 0 (at least
        half of the pairs are identical points, e.g. every point is the same): no width can be
        derived from such data; or if a column holds values whose squares overflow float64
        (:func:`core.validation.check_magnitude`, the column is named).
    """
    from scipy.spatial.distance import pdist

    X = check_features(X, min_samples=2)
    check_magnitude(X)
    if isinstance(max_points, bool) or int(max_points) != max_points or max_points < 2:
        raise ValueError(f"max_points must be an integer >= 2; got {max_points!r}.")
    if X.shape[0] > max_points:
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        X = X[rng.choice(X.shape[0], int(max_points), replace=False)]
    median = float(np.median(pdist(X)))
    if not median > 0:
        raise ValueError(
            f"The median distance between the {X.shape[0]} points is 0: at least half of the "
            "pairs are identical points (all points the same, or heavily duplicated), so no RBF "
            "width can be derived from the data. Remove the duplicated points or pass an explicit "
            "width=..."
        )
    return median
