"""The column picker's guess outlives its table: its distinct counts are numbers, and it pickles
(Streamlit's ``cache_data`` keeps it by pickling)."""

import gc
import pickle

import numpy as np
import pandas as pd

from labeler.data.columns import summarize_columns
from labeler.data.load import read_roles


def test_a_guess_read_for_the_picker_pickles_and_counts_after_its_table_is_gone(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "t.csv"
    pd.DataFrame({"f": np.round(rng.normal(size=50), 1), "g": rng.normal(size=50),
                  "label": ["a", "b"] * 25}).to_csv(path, index=False)
    guess = read_roles(path)
    gc.collect()
    copy = pickle.loads(pickle.dumps(guess))
    frame = pd.read_csv(path)
    for info, again in zip(copy.columns, guess.columns):
        assert info.n_unique == again.n_unique == frame[info.name].nunique()


def test_a_lazy_count_pickles_as_its_number_while_the_table_lives():
    frame = pd.DataFrame({"x": [0.5, 0.5, 1.5, np.nan]})
    info = summarize_columns(frame)[0]
    assert pickle.loads(pickle.dumps(info)).n_unique == 2
