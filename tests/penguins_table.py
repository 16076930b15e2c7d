"""A Palmer-penguins-like table made here (no download): species label, an id, NA in the
measurements, a ``year`` column of three integers, island and sex strings."""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Rows whose four measurements are missing ("NA" in the CSV), as in the real table's two.
MISSING_ROWS = (3, 271)
_MEANS = {"Adelie": (38.8, 18.3, 190.0, 3700.0), "Chinstrap": (48.8, 18.4, 196.0, 3730.0),
          "Gentoo": (47.5, 15.0, 217.0, 5080.0)}
MEASUREMENTS = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]


def penguins_frame(n: int = 330, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    species = rng.choice(sorted(_MEANS), n)
    values = np.array([_MEANS[s] for s in species]) + rng.normal(size=(n, 4)) * [2.5, 1.1, 6.5, 450.0]
    frame = pd.DataFrame({"rowid": [f"P{i:04d}" for i in range(n)], "species": species,
                          "island": rng.choice(["Biscoe", "Dream", "Torgersen"], n)})
    for j, name in enumerate(MEASUREMENTS):
        frame[name] = values[:, j].round(1)
    frame["sex"] = rng.choice(["male", "female"], n)
    frame["year"] = rng.choice([2007, 2008, 2009], n)
    frame.loc[list(MISSING_ROWS), MEASUREMENTS] = np.nan
    frame.loc[[8, 9, 10], "sex"] = np.nan
    return frame


def write_penguins_csv(path, n: int = 330, seed: int = 0) -> pd.DataFrame:
    frame = penguins_frame(n, seed)
    frame.to_csv(path, index=False, na_rep="NA")
    return frame
