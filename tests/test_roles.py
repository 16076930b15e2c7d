"""Column roles of a table (labeler.data.roles): the guess, given roles, and the checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labeler.data import DatasetError, load_dataset
from labeler.data.dataset import GUESS
from labeler.data.load import read_roles
from labeler.data.roles import ColumnRoles, guess_roles, legacy_roles, summarize_columns

N = 40
RNG = np.random.default_rng(0)
SENTENCES = [f"sentence number {i} says something about topic {i % 3}" for i in range(N)]


def frame(**columns) -> pd.DataFrame:
    return pd.DataFrame(columns)


# ---- ids --------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["id", "ID", "Id", "user_id", "docId", "key", "uuid", "Record ID"])
def test_an_id_named_column_of_unique_integers_is_the_id_never_a_feature(name):
    roles = guess_roles(frame(**{name: np.arange(N) * 7 + 3, "a": RNG.normal(size=N),
                                 "b": RNG.normal(size=N)}))
    assert roles.id_col == name
    assert roles.feature_cols == ("a", "b")
    assert "named like an id" in roles.reasons["id_col"]


def test_an_id_named_column_of_unique_strings_is_the_id():
    roles = guess_roles(frame(a=RNG.normal(size=N), item_key=[f"k{i}" for i in range(N)]))
    assert roles.id_col == "item_key" and roles.feature_cols == ("a",)


def test_an_unnamed_saved_index_is_the_id():
    """``df.to_csv(path)`` without ``index=False`` writes a nameless first column."""
    df = pd.DataFrame({"a": RNG.normal(size=N), "b": RNG.normal(size=N)})
    roles = guess_roles(pd.read_csv(pd.io.common.StringIO(df.to_csv())))
    assert roles.id_col == "Unnamed: 0" and roles.feature_cols == ("a", "b")


def test_a_row_counter_is_the_id_when_no_column_is_named_like_one():
    roles = guess_roles(frame(n=np.arange(1, N + 1), a=RNG.normal(size=N)))
    assert roles.id_col == "n" and roles.feature_cols == ("a",)
    assert "counts the rows" in roles.reasons["id_col"]


def test_unique_integers_that_do_not_count_the_rows_stay_a_feature():
    values = RNG.permutation(N) * 3  # unique, not in order, not named like an id
    roles = guess_roles(frame(size=values, a=RNG.normal(size=N)))
    assert roles.id_col is None and roles.feature_cols == ("size", "a")


def test_the_only_column_of_unique_short_strings_is_the_id():
    roles = guess_roles(frame(name=[f"p{i:03d}" for i in range(N)], a=RNG.normal(size=N)))
    assert roles.id_col == "name"


def test_an_id_named_column_that_is_not_unique_is_neither_id_nor_feature():
    roles = guess_roles(frame(user_id=np.arange(N) % 5, a=RNG.normal(size=N)))
    assert roles.id_col is None
    assert roles.feature_cols == ("a",) and "user_id" in roles.ignored
    assert any("user_id" in note for note in roles.notes)


def test_a_numeric_id_given_as_a_feature_is_refused_with_the_fix():
    df = frame(id=np.arange(N), a=RNG.normal(size=N))
    with pytest.raises(DatasetError, match="'id' is the numeric id column.*--feature-cols"):
        guess_roles(df, feature_cols=["id", "a"])
    # without an id column it may be a feature, when asked for
    assert guess_roles(df, id_col=None, feature_cols=["id", "a"]).feature_cols == ("id", "a")


# ---- labels -----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["label", "class", "target", "y", "Category", "gold_label"])
def test_a_label_named_column_with_few_values_is_the_label(name):
    roles = guess_roles(frame(a=RNG.normal(size=N), **{name: np.arange(N) % 3}))
    assert roles.label_col == name and roles.feature_cols == ("a",)


def test_a_label_named_column_with_many_values_is_not_guessed_except_label_itself():
    many = RNG.normal(size=N)
    assert guess_roles(frame(a=RNG.normal(size=N), target=many)).label_col is None
    assert guess_roles(frame(a=RNG.normal(size=N), label=many)).label_col == "label"


def test_label_named_columns_rank_label_first():
    roles = guess_roles(frame(y=np.arange(N) % 2, label=np.arange(N) % 3, a=RNG.normal(size=N)))
    assert roles.label_col == "label" and roles.feature_cols == ("y", "a")


def test_the_only_string_column_with_few_values_is_the_label():
    roles = guess_roles(frame(a=RNG.normal(size=N), species=np.where(np.arange(N) % 2, "cat", "dog")))
    assert roles.label_col == "species"


def test_two_possible_label_columns_are_ambiguous_none_is_guessed_and_a_note_says_so():
    roles = guess_roles(frame(a=RNG.normal(size=N), species=np.where(np.arange(N) % 2, "cat", "dog"),
                              colour=np.where(np.arange(N) % 3, "red", "blue")))
    assert roles.label_col is None
    assert any("species" in n and "colour" in n and "--label-col" in n for n in roles.notes)
    assert set(roles.ignored) == {"species", "colour"}


def test_x_and_y_columns_are_the_layout_unless_y_is_a_label():
    xy = frame(x=RNG.normal(size=N), y=RNG.normal(size=N), label=np.arange(N) % 2)
    roles = guess_roles(xy)
    assert roles.layout_cols == ("x", "y") and roles.feature_cols == ("x", "y")  # its own map
    binary_y = frame(x=RNG.normal(size=N), y=np.arange(N) % 2)
    roles = guess_roles(binary_y)
    assert roles.label_col == "y" and roles.layout_cols is None and roles.feature_cols == ("x",)


# ---- text and images --------------------------------------------------------------------------
def test_a_text_column_is_found_by_name_or_by_its_free_text():
    named = guess_roles(frame(id=np.arange(N), text=[f"w{i}" for i in range(N)], label=np.arange(N) % 2))
    assert named.text_col == "text" and named.features_from == "text" and named.feature_cols == ()
    unnamed = guess_roles(frame(id=np.arange(N), blurb=SENTENCES, label=np.arange(N) % 2))
    assert unnamed.text_col == "blurb" and unnamed.features_from == "text"
    assert "free text" in unnamed.reasons["text_col"]


def test_a_text_column_beside_numeric_columns_is_shown_but_the_numbers_are_the_features():
    roles = guess_roles(frame(review=SENTENCES, stars=np.arange(N) % 5 + 0.5, length=RNG.normal(size=N)))
    assert roles.text_col == "review" and roles.features_from == "columns"
    assert roles.feature_cols == ("stars", "length")
    assert guess_roles(frame(review=SENTENCES, stars=np.arange(N) % 5 + 0.5),
                       features_from="text").features_from == "text"


def test_a_few_valued_phrase_column_is_a_label_not_text():
    roles = guess_roles(frame(a=RNG.normal(size=N),
                              verdict=np.where(np.arange(N) % 2, "very good indeed", "not good at all")))
    assert roles.text_col is None and roles.label_col == "verdict"


def test_image_paths_are_the_image_column():
    roles = guess_roles(frame(file=[f"img/{i}.PNG" for i in range(N)], label=np.arange(N) % 2))
    assert roles.image_col == "file" and roles.features_from == "image" and roles.id_col is None


def test_nothing_usable_gives_no_feature_source_and_loading_names_the_fix(tmp_path):
    df = frame(a=[f"x{i}" for i in range(4)], b=["u", "v", "u", "v"])
    assert guess_roles(df).features_from is None
    df.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="no numeric feature column.*--text-col"):
        load_dataset(tmp_path / "d.csv")


# ---- given roles ------------------------------------------------------------------------------
def test_given_roles_are_kept_and_left_out_of_the_guess():
    df = frame(id=np.arange(N), key=np.arange(N) + 100, label=np.arange(N) % 2, a=RNG.normal(size=N))
    roles = guess_roles(df, id_col="key")
    assert roles.id_col == "key" and roles.reasons["id_col"] == "given"
    assert roles.feature_cols == ("a",) and "id" in roles.ignored  # id-like: never a feature
    roles = guess_roles(df, label_col=None, id_col=None)
    assert roles.label_col is None and roles.feature_cols == ("label", "a")


@pytest.mark.parametrize("given,match", [
    ({"id_col": "nope"}, "Id column 'nope' not found.*--id-col"),
    ({"label_col": "a", "id_col": "a"}, "'a' cannot be both the id and the label"),
    ({"layout_cols": ["a", "label"], "label_col": "label"}, "both a layout column and the label"),
    ({"layout_cols": ["a"]}, "two columns"),
    ({"features_from": "image"}, "need an image column"),
    ({"features_from": "words"}, "features_from must be one of"),
    ({"feature_cols": [], "features_from": "columns"}, "No feature column chosen"),
    ({"feature_cols": ["label"]}, "'label' is the label column"),
])
def test_bad_given_roles_are_refused_with_the_fix(given, match):
    df = frame(id=np.arange(N), label=np.arange(N) % 2, a=RNG.normal(size=N))
    with pytest.raises(DatasetError, match=match):
        guess_roles(df, **given)


def test_options_round_trip_load_the_same_roles_whatever_the_guess(tmp_path, monkeypatch):
    df = frame(id=np.arange(N), text=SENTENCES, label=np.arange(N) % 2, a=RNG.normal(size=N))
    df.to_csv(tmp_path / "d.csv", index=False)
    ds = load_dataset(tmp_path / "d.csv")
    assert ds.load_options == {"id_col": "id", "label_col": "label", "text_col": "text",
                               "image_col": None, "layout_cols": None, "feature_cols": ["a"],
                               "features_from": "columns"}
    import labeler.data.tables as tables

    real = tables.guess_roles

    def nothing_left_to_guess(frame, **given):
        assert all(v is not GUESS for v in given.values()), given
        return real(frame, **given)

    monkeypatch.setattr(tables, "guess_roles", nothing_left_to_guess)
    again = load_dataset(tmp_path / "d.csv", **ds.load_options)
    assert again.feature_names == ds.feature_names and list(again.ids) == list(ds.ids)


def test_read_roles_reads_a_file_and_describes_its_columns(tmp_path):
    frame(id=np.arange(N), text=SENTENCES, label=np.arange(N) % 2).to_csv(tmp_path / "s.csv", index=False)
    guess = read_roles(tmp_path / "s.csv")
    assert guess.n_rows == N and guess.names() == ["id", "text", "label"]
    assert guess.names(("string",)) == ["text"]
    assert guess.roles == guess_roles(pd.read_csv(tmp_path / "s.csv"))
    with pytest.raises(DatasetError, match="not a CSV or Parquet"):
        (tmp_path / "a.npz").write_bytes(b"x")
        read_roles(tmp_path / "a.npz")


def test_summary_kinds_under_the_string_dtype_and_object_columns():
    df = frame(i=np.arange(3), f=[0.5, 1.0, np.nan], b=[True, False, True], s=["a b", "c", None],
               o=pd.Series([[1, 2], [3], [4]], dtype=object), d=pd.to_datetime(["2024-01-01"] * 3),
               p=pd.Series([np.zeros(16)] * 3, dtype=object), m=pd.Series([[("k", 1)]] * 3, dtype=object),
               r=pd.Series([{"a": 1}] * 3, dtype=object))
    kinds = {c.name: c.kind for c in summarize_columns(df)}
    # ragged lists are lists, not pixels; pixels are numeric arrays of one length (>= 16)
    assert kinds == {"i": "integer", "f": "float", "b": "bool", "s": "string", "o": "list", "d": "other",
                     "p": "nested", "m": "map", "r": "struct"}


def test_legacy_roles_are_the_fixed_roles_of_older_sessions():
    df = frame(x=RNG.normal(size=N), y=RNG.normal(size=N), target=np.arange(N) % 2, label=np.arange(N) % 2)
    roles = legacy_roles(df)
    assert roles.label_col == "label" and roles.layout_cols == ("x", "y")
    assert roles.feature_cols == ("target",)  # a guess would make it... not the label (label wins)
    assert roles.id_col is None and roles.text_col is None
    assert legacy_roles(frame(x=[1.0, 2.0], y=[3.0, 4.0])).feature_cols == ("x", "y")


def test_roles_describe_themselves_for_the_user():
    roles = guess_roles(frame(id=np.arange(N), text=SENTENCES, label=np.arange(N) % 2))
    rows = {role: (cols, why) for role, cols, why in roles.lines()}
    assert rows["features"][0].startswith("TF-IDF of the text column 'text'")
    assert rows["id"][0] == "id" and "unique integers" in rows["id"][1]
    assert ColumnRoles().lines()[0][1] == "- (row numbers)"
    assert repr(GUESS) == "GUESS"


def test_a_feature_columns_distinct_count_is_counted_when_asked_and_equals_nunique():
    import pandas as pd

    from labeler.data.columns import _Distinct, summarize_columns

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"f": np.round(rng.normal(size=500), 1), "label": np.round(rng.random(500) * 2),
                          "k": rng.integers(0, 7, 500), "s": rng.choice(["a", "b", None], 500)})
    infos = summarize_columns(frame)
    assert isinstance(infos[0].distinct, _Distinct)  # a float feature: not counted yet
    assert not isinstance(infos[1].distinct, _Distinct)  # named like a label: counted (the guess reads it)
    for info, column in zip(infos, frame.columns):
        assert info.n_unique == frame[column].nunique(dropna=True)
    assert isinstance(infos[0].distinct, int)  # counted once, kept
