"""Shared fixtures of the test suite."""

from __future__ import annotations

import pytest

from arls_oracle import POSTERIORS


@pytest.fixture(params=POSTERIORS)
def posterior(request):
    """Runs a test once per posterior store: the conformance suite (see tests/arls_oracle.py)."""
    return request.param
