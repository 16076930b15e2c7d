"""Low-rank posteriors of a session (issue 8; docs/algorithms.md §8-§9): their defaults, the factor's
build from scratch or from its stored parts, what LOO tunes on a factor, and the words that
say a pick is approximate. Used by :mod:`labeler.session.model` (which re-exports it); takes
any object with the fields of :class:`~labeler.session.model.ModelSpec`.
"""

from __future__ import annotations

import numpy as np

from core.kernels import Kernel

__all__ = ["LANDMARKS", "DEFAULT_RANK", "DEFAULT_KNN", "SUBSAMPLE_ABOVE", "SUBSAMPLED", "default_rank",
           "build_factor", "scoring_note", "loo_problem"]

LANDMARKS = ("uniform", "kmeans")
#: Default rank of a low-rank posterior (Nystrom landmarks; Laplacian eigenpairs).
DEFAULT_RANK = {"nystrom": 300, "spectral": 100}
DEFAULT_KNN = 10
#: A factor posterior on more points than this scores by SubsampledExpectedRisk (approximate).
SUBSAMPLE_ABOVE = 5_000
#: Its sizes: 200 smallest-margin + 300 random candidates, risk sum over 2,000 pool points
#: (benchmarks/scale.py: one step 0.2 s at 10^5 points, rank 300).
SUBSAMPLED = {"n_uncertain": 200, "n_random": 300, "n_points": 2_000}
#: The share of a spectral factor's progress bar taken by the kNN search (the eigenpairs take
#: the rest; 29 s against 66 s of CPU at 10^5 points: docs/benchmarks.md §15).
KNN_SHARE = 0.3


def default_rank(posterior: str, n_samples: int) -> int:
    """:data:`DEFAULT_RANK` of the posterior, at most the pool size (minus one: eigsh)."""
    return max(1, min(DEFAULT_RANK.get(posterior, 300), int(n_samples) - 1))


def build_factor(spec, X: np.ndarray, parts: dict | None = None, progress=None, executor=None):
    """The low-rank posterior of ``spec`` on ``X`` and the parts that rebuild it.

    * nystrom: landmarks ``Z`` (:func:`core.kernels.factors.nystrom_landmarks`, seeded with
      ``spec.seed``); the factor ``k(X, Z) T`` is recomputed from them (deterministic, about
      2 s per 10^5 points at rank 300) unless ``parts["factor"]`` holds it (the session cache,
      :mod:`labeler.session.cache`, keeps it memory-mapped beside the store), so only ``Z``
      (m x d) is stored, and a new width re-uses it (:class:`core.posteriors.NystromPosterior`).
    * spectral: the factor itself (kNN graph and eigenpairs take minutes at 10^5-10^6 points:
      the cell search from 50,000 points, hnswlib beyond 150,000, :mod:`core.kernels.knn_search`; Lanczos) and its
      eigenvalues; ``progress`` hears the search and the eigensolver as they go.

    Parameters
    ----------
    parts : dict, optional
        ``{"landmarks": Z}`` (and optionally ``"factor"``: its rows ``k(X, Z) T`` for the
        spec's kernel, taken as they are, with ``"factor_norms"``, their squared norms kept
        beside them: not computed again) or ``{"factor": Phi, "eigenvalues": lam}`` from an
        earlier build; parts that do not fit ``X`` and ``spec`` are ignored (rebuilt).
    progress : callable(message, fraction), optional
    executor : core.criteria.blocks.BlockExecutor, optional
        Runs the Nystrom rows (and, up to ``EXACT_KNN_MAX`` points, the exact kNN search) in
        tasks (:mod:`labeler.distributed_factors`); the factor does not depend on it.

    Returns
    -------
    posterior : core.posteriors.FactorPosterior
    parts : dict of ndarray
        What to store (a Nystrom factor's rows are not: the session cache keeps them).
    """
    from core.kernels.factors import nystrom_landmarks
    from core.kernels.graph import EXACT_KNN_MAX, knn_graph, spectral_factor
    from core.posteriors import FactorPosterior, NystromPosterior

    n, d = X.shape
    parts = dict(parts or {})
    say = progress or (lambda message, fraction: None)
    r = default_rank(spec.posterior, n) if spec.rank is None else int(spec.rank)
    if spec.posterior == "nystrom":
        Z = parts.get("landmarks")
        if Z is None or Z.ndim != 2 or Z.shape[1] != d or Z.shape[0] != min(r, n):
            say(f"choosing {min(r, n)} {spec.landmarks} landmarks", 0.0)
            Z = nystrom_landmarks(X, min(r, n), method=spec.landmarks, seed=int(spec.seed))
        Phi = parts.get("factor")  # the factor rows of these landmarks, from the session cache
        if Phi is not None and (Phi.ndim != 2 or Phi.shape[0] != n or Phi.shape[1] > Z.shape[0]):
            Phi = None
        if Phi is None and _distributes(executor):
            from labeler.distributed_factors import nystrom_rows

            say(f"Nystrom factor of {n:,} rows on {executor!r}", 0.1)
            Phi = nystrom_rows(X, spec.kernel_function(), Z, executor=executor)
        norms = parts.get("factor_norms") if Phi is not None and parts.get("factor") is Phi else None
        if norms is not None and norms.shape != (n,):
            norms = None
        from labeler.runtime import block_threads

        return (NystromPosterior(X, spec.kernel_function(), Z, Phi=Phi, progress=progress, row_norms=norms,
                                 threads=block_threads()),
                {"landmarks": Z})
    if spec.posterior == "spectral":
        Phi, lam = parts.get("factor"), parts.get("eigenvalues")
        if Phi is None or lam is None or Phi.shape != (n, r) or lam.shape != (r,):
            knn_say = f"kNN graph of {n:,} points (k = {spec.knn})"
            say(knn_say, 0.0)
            if _distributes(executor) and n <= EXACT_KNN_MAX:
                from labeler.distributed_factors import knn_graph_blocks

                W = knn_graph_blocks(X, int(spec.knn), executor=executor)
            else:
                W = knn_graph(X, int(spec.knn), seed=int(spec.seed),
                              progress=lambda f: say(knn_say, KNN_SHARE * f))
            eig_say = f"{r} smallest Laplacian eigenpairs"
            say(eig_say, KNN_SHARE)
            Phi, lam = spectral_factor(W, r, seed=int(spec.seed),
                                       progress=lambda f: say(eig_say, KNN_SHARE + (1 - KNN_SHARE) * f))
            del W
            say("spectral factor ready", 1.0)
        from labeler.runtime import block_threads

        post = FactorPosterior(np.ascontiguousarray(Phi, dtype=np.float64), copy=False)
        post.threads = block_threads()  # the O(n r) products of every label (the same bits)
        return post, {"factor": Phi, "eigenvalues": lam}
    raise ValueError(f"Unknown posterior {spec.posterior!r}; choose one of dense, nystrom, spectral.")


def _distributes(executor) -> bool:
    return executor is not None and getattr(executor, "name", "serial") != "serial"


def scoring_note(spec, n_samples: int, exact_max: int | None = None) -> str:
    """In words, how the next query is chosen when it is not exact ("" when it is).

    ``exact_max``: the largest pool a dense posterior scores exactly
    (:func:`labeler.session.costs.dense_exact_pick_max_points`); None: every pool."""
    if spec.strategy != "arls":
        return ""
    c = SUBSAMPLED
    how = (f"approximate pick: the expected risk of {c['n_uncertain'] + c['n_random']} candidates "
           f"({c['n_uncertain']} smallest-margin, {c['n_random']} random), summed over "
           f"{c['n_points']:,} sampled points")
    if not spec.low_rank:
        if exact_max is None or int(n_samples) <= int(exact_max):
            return ""
        return (f"{how}, on the exact dense posterior (scoring every point of {int(n_samples):,} exactly would "
                f"take longer than a key press may, beyond {int(exact_max):,} points)")
    if int(n_samples) <= SUBSAMPLE_ABOVE:
        return ""
    return f"{how}, on a rank-{spec.rank or default_rank(spec.posterior, n_samples)} {spec.posterior} posterior"


def loo_problem(spec, learner, X: np.ndarray, idx: np.ndarray):
    """What exact LOO tuning sees: the labelled rows and the kernel the learner runs on them.

    LOO (core.rls.tuning) only needs the labelled kernel block ``K_LL``; with a factor it
    must be the factor's block ``Phi_L Phi_L^T``, not the exact kernel it approximates, or
    the tuner would judge another model than the one labelling. Dense: ``k(X_L, X_L)``.
    Nystrom: :class:`core.kernels.factors.NystromKernel` (``k(X_L, Z) W^+ k(Z, X_L)``, also at
    every candidate width, from the same landmarks). Spectral: the linear kernel on the rows
    ``Phi_L`` (no width).

    Returns
    -------
    X_L : ndarray of shape (n_labeled, d) or (n_labeled, r)
    kernel : core.kernels.Kernel
    width_tunable : bool
    """
    from core.kernels.factors import NystromKernel

    post = learner.posterior
    if spec.posterior == "spectral":
        return np.ascontiguousarray(post.factor[idx]), Kernel("linear"), False
    if spec.posterior == "nystrom":
        base = spec.kernel_function()
        return X[idx], NystromKernel(base.kind, base.width, base.degree, base.coef0,
                                     landmarks=post.landmarks), True
    return X[idx], spec.kernel_function(), True
