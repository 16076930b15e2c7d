"""Numerical core of the ARLS labeller: kernels, weighted RLS, confidence, Active RLS.

This package is pure numerics (numpy, scipy, scikit-learn, numba): no file I/O, no experiment
harness, no display layout and no environment writes. It must never import pandas, PIL,
pyarrow, sqlite3, Streamlit, plotly or :mod:`labeler` (``tests/test_core_purity.py`` checks):
loaders and preprocessing live in :mod:`labeler.data`, the simulation loop and the thesis
reproduction in :mod:`labeler.experiments`, the UI in :mod:`labeler`.
"""
