"""scikit-learn's estimator checks on WeightedRLSClassifier (sklearn >= 1.6 API)."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from core.rls import WeightedRLSClassifier

ESTIMATORS = [
    WeightedRLSClassifier(),
    WeightedRLSClassifier(lam="auto", class_weight="balanced", n_lams=10),
    WeightedRLSClassifier(width="auto", lam="auto", n_lams=5, fit_offset=False, loo_criterion="squared"),
    WeightedRLSClassifier(kernel="precomputed", lam=0.5),
]

# Checks that do not apply to a precomputed *positive semi-definite* kernel: RLS solves
# (M + lam I) d = z, which needs a valid Gram matrix, and raises a helpful error otherwise.
PRECOMPUTED_XFAIL = {
    "check_positive_only_tag_during_fit": (
        "the check subtracts the mean from the precomputed Gram matrix, which makes it indefinite"
    ),
    "check_estimators_dtypes": (
        "the check truncates a float32 Gram matrix to integers, which makes it indefinite"
    ),
    "check_decision_proba_consistency": (
        "the check passes raw features (80, 4), not a kernel matrix, to a precomputed-kernel estimator"
    ),
}


# With lam / width chosen by leave-one-out, a point repeated k times is not the same as one point
# of weight k: leaving out one copy keeps the others in the fit. With fixed lam and width the
# fit itself is equivalent, and that is checked on the estimators without "auto".
AUTO_XFAIL = {
    "check_sample_weight_equivalence_on_dense_data": (
        "leave-one-out selection of lam/width leaves out one copy of a repeated point, so "
        "repetition is not equivalent to weighting during selection"
    ),
}


def expected_failed_checks(estimator):
    failed = dict(PRECOMPUTED_XFAIL) if estimator.kernel == "precomputed" else {}
    if estimator.lam == "auto" or estimator.width == "auto":
        failed.update(AUTO_XFAIL)
    return failed


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
