"""Weighted RLS classifier (scikit-learn estimator) with exact leave-one-out model selection.

The maths and the LOO path are in :mod:`core.rls.loo` (docs/algorithms.md §1; seed 002 §2.4-2.6,
§3.1.1, App. A.2-A.3).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.linalg
import scipy.sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from ..criteria.risk import class_probabilities, predicted_class_indices
from ..kernels import Kernel
from ..validation import check_features, check_positive
from .loo import LooPath, default_widths, loo_path, select_index
from .weights import sample_weights as class_sample_weights

__all__ = ["WeightedRLSClassifier"]


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------

_KERNELS = ("rbf", "linear", "poly", "precomputed")
_CRITERIA = ("classification", "squared")


def _check_X(X, name: str = "X") -> np.ndarray:
    """check_features, but a sparse matrix or un-convertible objects raise TypeError."""
    if scipy.sparse.issparse(X):
        raise TypeError(f"Sparse input is not supported; convert {name} with {name}.toarray().")
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {arr.dtype}; pass real features.")
    if arr.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}. Reshape your data: "
            "X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single point."
        )
    if arr.ndim == 2 and arr.shape[0] > 0 and arr.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required; "
            "give at least one feature column."
        )
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except TypeError as exc:
            raise TypeError(
                f"{name} holds values that are not numbers ({exc}). Encode them as numbers first."
            ) from None
        except ValueError:
            pass  # strings that are not numbers: check_features names the problem
    return arr


class WeightedRLSClassifier(ClassifierMixin, BaseEstimator):
    """Weighted RLS classifier with exact LOO model selection (docs/algorithms.md §1, seed 002 §3.1.1).

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly", "precomputed"}
        Kernel. RBF: ``exp(-||x - x'||^2 / (2 width^2))``; poly: ``(x.x' + coef0) ** degree``.
        "precomputed": ``X`` is the (n, n) kernel matrix in ``fit`` and (m, n) in ``predict``.
    width : float > 0 or "auto"
        RBF width. "auto": chosen by LOO error over ``widths`` (RBF only).
    degree : int
        Polynomial degree.
    coef0 : float
        Polynomial offset.
    lam : float > 0 or "auto"
        Regularisation. "auto": chosen by LOO error over ``n_lams`` geometric values between
        the smallest positive and the largest eigenvalue of ``M = W K W``.
    fit_offset : bool
        Fit an unpenalised offset ``b`` (eq. 3.28).
    class_weight : None, "balanced", "equilibrating" or dict {class: weight}
        Loss weights per class (:func:`core.rls.weights.sample_weights`). "balanced" is
        ``n / (T n_y)``, the same weight in every column (scikit-learn's and the ARLS
        learner's meaning); "equilibrating" the one-vs-all weights of eq. 3.14-3.15, different
        per column for more than two classes.
    n_lams : int
        Size of the lambda grid for ``lam="auto"``.
    widths : array-like of float, optional
        Width grid for ``width="auto"``; default :func:`default_widths` of the training points.
    loo_criterion : {"classification", "squared"}
        LOO error minimised when choosing ``lam`` / ``width``. For each width, ties between
        lambdas go to the largest lambda (the seed's rule, §4.1). Between widths (each at its
        chosen lambda), ties go to the smaller LOO squared error, then to the larger width.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    lam_ : float
    width_ : float or None
        Chosen RBF width (None for other kernels).
    dual_coef_ : ndarray of shape (n_train, T)
        ``c``; T = 1 for two classes (+1 = ``classes_[1]``), else T = n_classes.
    intercept_ : ndarray of shape (T,)
    X_fit_ : ndarray of shape (n_train, n_features)
        Training points (the training kernel matrix for "precomputed").
    loo_residuals_ : ndarray of shape (n_train, T)
        ``y_it - f_{-i}(x_i)_t`` on the codes.
    loo_decision_ : ndarray of shape (n_train, T)
        Leave-one-out outputs ``f_{-i}(x_i)``.
    loo_error_ : float
        Weighted LOO classification error at the chosen parameters.
    loo_squared_error_ : float
        Weighted mean LOO squared error at the chosen parameters.
    loo_curve_ : dict of ndarray
        "lam", "classification", "squared" of shape (L,); with ``width="auto"`` also "width"
        of shape (W,) and the three others of shape (W, L).
    sample_weight_ : ndarray of shape (n_train, T)
        The loss weights used (class weights times sample weights).
    n_features_in_ : int

    Notes
    -----
    Binary decisions: ``f(x) > 0`` gives ``classes_[1]``; multiclass: argmax of the T outputs.
    The LOO quantities keep every other point's weight as fitted (class weights are counted once,
    on all training points). Cost: one factorisation of the n x n matrix ``M`` per width, or T
    of them for multiclass ``class_weight="equilibrating"`` (its weights differ per column); each
    lambda of the grid then costs O(n^2 T).
    ``predict_proba`` is the soft confidence of docs/algorithms.md §2: ``clip((f + 1) / 2, 0, 1)``,
    normalised over the classes (a row whose outputs are all <= -1 gets uniform probabilities).
    """

    def __init__(
        self,
        kernel="rbf",
        width=1.0,
        degree=3,
        coef0=1.0,
        lam=1.0,
        fit_offset=True,
        class_weight=None,
        n_lams=50,
        widths=None,
        loo_criterion="classification",
    ):
        self.kernel = kernel
        self.width = width
        self.degree = degree
        self.coef0 = coef0
        self.lam = lam
        self.fit_offset = fit_offset
        self.class_weight = class_weight
        self.n_lams = n_lams
        self.widths = widths
        self.loo_criterion = loo_criterion

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # -- parameter and data checks -------------------------------------------------------------

    def _check_params(self):
        if not isinstance(self.kernel, str) or self.kernel not in _KERNELS:
            raise ValueError(f"Unknown kernel {self.kernel!r}; choose one of {', '.join(_KERNELS)}.")
        if not (isinstance(self.width, str) and self.width == "auto"):
            check_positive("width", self.width)
        elif self.kernel != "rbf":
            raise ValueError(f"width='auto' needs kernel='rbf'; got kernel={self.kernel!r}.")
        if not (isinstance(self.lam, str) and self.lam == "auto"):
            check_positive("lam", self.lam)
        if self.loo_criterion not in _CRITERIA:
            raise ValueError(f"loo_criterion must be one of {_CRITERIA}; got {self.loo_criterion!r}.")
        if isinstance(self.n_lams, bool) or not isinstance(self.n_lams, numbers.Integral) or self.n_lams < 1:
            raise ValueError(f"n_lams must be an integer >= 1; got {self.n_lams!r}.")
        if not isinstance(self.fit_offset, (bool, np.bool_)):
            raise ValueError(f"fit_offset must be True or False; got {self.fit_offset!r}.")
        if self.kernel == "poly":
            Kernel("poly", degree=self.degree, coef0=self.coef0)  # validates degree
        cw = self.class_weight
        if not (cw is None or isinstance(cw, dict) or (isinstance(cw, str) and cw in ("balanced", "equilibrating"))):
            raise ValueError(f"class_weight must be None, 'balanced', 'equilibrating' or a dict; got {cw!r}.")

    def _kernel(self, width) -> Kernel:
        return Kernel(self.kernel, width=1.0 if width is None else width, degree=self.degree, coef0=self.coef0)

    def _width_grid(self, X: np.ndarray) -> np.ndarray:
        if self.widths is None:
            return default_widths(X)
        widths = np.atleast_1d(np.asarray(self.widths, dtype=np.float64))
        if widths.ndim != 1 or widths.size == 0 or not np.all(np.isfinite(widths)) or np.any(widths <= 0):
            raise ValueError(f"widths must be a non-empty list of numbers > 0; got {self.widths!r}.")
        return widths

    def _validate_fit_input(self, X, y, sample_weight):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        X = _check_X(X)
        if X.ndim == 2 and X.shape[0] < 2:
            raise ValueError(
                f"Got n_samples = {X.shape[0]}: fitting a classifier needs at least 2 points "
                "(of at least 2 classes)."
            )
        X = check_features(X, min_samples=2)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"y has {y.shape[0]} labels but X has {X.shape[0]} points; give one label per point."
            )
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(
                f"y holds 1 class ({classes[0]!r}); a classifier needs at least 2 classes."
            )
        if sample_weight is None:
            sw = np.ones(X.shape[0])
        else:
            sw = np.asarray(sample_weight)
            if sw.ndim == 0:
                sw = np.full(X.shape[0], sw, dtype=np.float64)
            if sw.dtype.kind not in "biuf" or sw.ndim != 1 or sw.shape[0] != X.shape[0]:
                raise ValueError(
                    f"sample_weight must be a 1-D array of {X.shape[0]} numbers; got {sw.dtype} {sw.shape}."
                )
            sw = sw.astype(np.float64)
            if not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise ValueError("sample_weight must be finite and >= 0 (0 leaves a point out).")
            if not np.any(sw > 0):
                raise ValueError(
                    "sample_weight is zero for every point; give a weight > 0 to points of at least 2 classes."
                )
            kept = np.unique(y[sw > 0])
            if kept.size < 2:
                raise ValueError(
                    f"sample_weight leaves only class {kept[0]!r} with positive weight; a classifier "
                    "needs points of at least 2 classes with weight > 0."
                )
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"With kernel='precomputed', X must be the square (n, n) kernel matrix of the "
                    f"training points; got shape {X.shape}."
                )
            scale = max(np.abs(X).max(), np.finfo(float).tiny)
            if np.abs(X - X.T).max() > 1e-10 * scale:
                raise ValueError(
                    "With kernel='precomputed', X must be a symmetric kernel matrix; it is not. "
                    "Pass k(X_train, X_train), e.g. (K + K.T) / 2 if it is asymmetric by rounding."
                )
        return X, y, classes, sw

    # -- fitting -------------------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Fit weighted RLS; choose ``lam`` / ``width`` by exact LOO if they are "auto".

        Parameters
        ----------
        X : array-like of shape (n, n_features), or (n, n) with kernel="precomputed"
        y : array-like of shape (n,)
            Class labels (at least 2 classes).
        sample_weight : array-like of shape (n,), optional
            Non-negative weights, multiplied with the class weights.

        Returns
        -------
        self
        """
        self._check_params()
        X, y, classes, sw = self._validate_fit_input(X, y, sample_weight)
        codes = np.searchsorted(classes, y)
        T = 1 if classes.size == 2 else classes.size
        if T == 1:
            Y = np.where(codes == 1, 1.0, -1.0)[:, None]
        else:
            Y = -np.ones((y.size, T))
            Y[np.arange(y.size), codes] = 1.0  # one-vs-all codes (eq. 2.15)
        A = class_sample_weights(y, classes, self.class_weight, sample_weight=sw)
        A = A.reshape(y.size, -1).repeat(T if A.ndim == 1 else 1, axis=1)

        lams = None if self.lam == "auto" else [float(self.lam)]
        if self.kernel != "rbf" or self.width != "auto":
            width = float(self.width) if self.kernel == "rbf" else None
            K = X if self.kernel == "precomputed" else self._kernel(width)(X)
            path = loo_path(K, Y, A, lams, self.fit_offset, n_lams=self.n_lams)
            choice = select_index(self._criterion(path))
            curve = {"lam": path.lams, "classification": path.classification, "squared": path.squared}
        else:
            widths = self._width_grid(X)
            paths = [loo_path(self._kernel(s)(X), Y, A, lams, self.fit_offset, n_lams=self.n_lams) for s in widths]
            best = [select_index(self._criterion(p)) for p in paths]
            errors = np.array([self._criterion(p)[j] for p, j in zip(paths, best)])
            squared = np.array([p.squared[j] for p, j in zip(paths, best)])
            # across widths: least error; ties -> least LOO squared error, then the largest width
            order = np.lexsort((-widths, squared, errors))
            i = int(order[0])
            width, path, choice = float(widths[i]), paths[i], best[i]
            curve = {"width": widths}
            L = max(p.lams.size for p in paths)
            for key in ("lam", "classification", "squared"):
                table = np.full((widths.size, L), np.nan)
                for row, p in enumerate(paths):
                    vals = p.lams if key == "lam" else getattr(p, key)
                    table[row, : vals.size] = vals
                curve[key] = table

        self.classes_ = classes
        self.lam_ = float(path.lams[choice])
        self.width_ = width
        self.dual_coef_ = path.dual_coef[choice]
        self.intercept_ = path.intercept[choice]
        self.X_fit_ = np.array(X, dtype=np.float64, copy=True)  # the caller may change X later
        self.sample_weight_ = A
        self.loo_residuals_ = path.residuals[choice]
        self.loo_decision_ = Y - self.loo_residuals_
        self.loo_error_ = float(path.classification[choice])
        self.loo_squared_error_ = float(path.squared[choice])
        self.loo_curve_ = curve
        self.n_features_in_ = X.shape[1]
        return self

    def _criterion(self, path: LooPath) -> np.ndarray:
        return path.classification if self.loo_criterion == "classification" else path.squared

    # -- prediction ----------------------------------------------------------------------------

    def _outputs(self, X) -> np.ndarray:
        """Decision values of shape (m, T)."""
        check_is_fitted(self)
        X = check_features(_check_X(X))
        if X.shape[1] != self.n_features_in_:
            what = "training points (kernel='precomputed')" if self.kernel == "precomputed" else "features"
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input ({what}); pass data shaped like the training data."
            )
        if self.kernel == "precomputed":
            K = X
        else:
            K = self._kernel(self.width_)(X, self.X_fit_)
        return K @ self.dual_coef_ + self.intercept_[None, :]

    def decision_function(self, X) -> np.ndarray:
        """RLS outputs ``f(x) = k(x, X_fit) c + b``.

        Returns
        -------
        ndarray of shape (m,) for two classes (> 0 means ``classes_[1]``), else (m, n_classes)
        """
        F = self._outputs(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X) -> np.ndarray:
        """Class labels of shape (m,): ``f > 0`` (binary) or argmax of the one-vs-all outputs.

        The decision rule of :func:`core.criteria.risk.predicted_class_indices`: ``f = 0`` gives
        ``classes_[0]``, ties between columns go to the lowest index.
        """
        F = self._outputs(X)  # first: raises NotFittedError before classes_ is read
        return self.classes_[predicted_class_indices(F)]

    def predict_proba(self, X) -> np.ndarray:
        """Soft probabilities ``clip((f + 1) / 2, 0, 1)``, normalised (docs/algorithms.md §2).

        :func:`core.criteria.risk.class_probabilities` of :meth:`decision_function`.

        Returns
        -------
        ndarray of shape (m, n_classes)
            Binary ``[1 - p, p]``; multiclass per class, normalised to sum 1 (uniform where
            every output is <= -1).
        """
        return class_probabilities(self._outputs(X))
