"""The picker's Columns box as plain functions: a guess to widget values and back, and the
problems of a choice named before opening."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labeler.data.roles import TableGuess, guess_roles, summarize_columns
from labeler.ui.columns import KEYS, NONE, check_state, initial_state, options_from_state


def table_guess(frame: pd.DataFrame) -> TableGuess:
    return TableGuess(guess_roles(frame), summarize_columns(frame), len(frame))


@pytest.fixture
def guess():
    rng = np.random.default_rng(0)
    return table_guess(pd.DataFrame({
        "id": np.arange(30), "x": rng.normal(size=30), "y": rng.normal(size=30),
        "u": rng.normal(size=30), "text": [f"some words {i}" for i in range(30)],
        "label": np.arange(30) % 2}))


def test_the_widgets_start_at_the_guess_and_give_it_back(guess):
    state = initial_state(guess)
    assert state[KEYS["id_col"]] == "id" and state[KEYS["image_col"]] == NONE
    assert state[KEYS["layout_x"]] == "x" and state[KEYS["feature_cols"]] == ["u"]
    assert options_from_state(state) == guess.roles.options()
    assert check_state(state, guess) is None


def test_choices_that_cannot_work_are_named(guess):
    state = initial_state(guess)
    assert "'id' is the numeric id column" in check_state({**state, KEYS["feature_cols"]: ["u", "id"]}, guess)
    assert "both the id and the label" in check_state({**state, KEYS["label_col"]: "id"}, guess)
    assert "x and y" in check_state({**state, KEYS["layout_y"]: NONE}, guess)
    assert "2-D map" in check_state({**state, KEYS["layout_x"]: "label"}, guess)
    assert "No feature column" in check_state({**state, KEYS["feature_cols"]: []}, guess)
    assert "need a text column" in check_state(
        {**state, KEYS["features_from"]: "text", KEYS["text_col"]: NONE}, guess)
    text = {**state, KEYS["features_from"]: "text"}
    assert check_state(text, guess) is None
    assert options_from_state(text)["feature_cols"] == []  # the multiselect's value is unused
    with pytest.raises(ValueError, match="both columns of the 2-D map"):
        options_from_state({**state, KEYS["layout_x"]: NONE})
