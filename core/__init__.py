"""Numerical core of the ARLS labeller: kernels, weighted RLS, confidence, Active RLS.

This package is pure numerics (numpy, scipy, scikit-learn, numba). It must never import
Streamlit, plotly or sqlite3: the UI lives in :mod:`labeler`.
"""
