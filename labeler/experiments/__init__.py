"""Experiments: the oracle simulation loop, the thesis reproduction and their plotly reports.

:mod:`labeler.experiments.simulate` runs ``labeler simulate``, :mod:`labeler.experiments.reproduce`
runs ``labeler reproduce`` and :mod:`labeler.experiments.report` draws the learning curves.
Nothing in :mod:`core` imports this package.
"""
