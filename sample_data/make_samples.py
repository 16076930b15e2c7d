"""Regenerate the small sample files of this folder (deterministic: run it, git diff is empty).

* ``moons.csv``: 300 points of the built-in "moons" set (seed 0) with columns x, y, label.
* ``shapes/``: 40 grayscale 24x24 PNGs, 20 in ``circle/`` and 20 in ``square/``: a light shape
  of random size and position on a dark, slightly noisy background (seeded).

Usage: ``python sample_data/make_samples.py`` from the repository root.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent
SIZE = 24
PER_CLASS = 20


def write_moons(path: Path) -> None:
    sys.path.insert(0, str(HERE.parent))
    from labeler.data import load_dataset

    data = load_dataset("moons", n=300, seed=0)
    lines = ["x,y,label"] + [f"{x:.6f},{y:.6f},{label}" for (x, y), label in zip(data.X, data.y)]
    path.write_text("\n".join(lines) + "\n")


def draw_shape(kind: str, rng: np.random.Generator) -> Image.Image:
    background = rng.integers(0, 40, size=(SIZE, SIZE)).astype(np.uint8)
    image = Image.fromarray(background, mode="L")
    draw = ImageDraw.Draw(image)
    radius = int(rng.integers(5, 9))
    cx, cy = (int(v) for v in rng.integers(radius + 1, SIZE - radius - 1, size=2))
    shade = int(rng.integers(180, 256))
    box = (cx - radius, cy - radius, cx + radius, cy + radius)
    if kind == "circle":
        draw.ellipse(box, fill=shade)
    else:
        draw.rectangle(box, fill=shade)
    return image


def write_shapes(folder: Path) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    rng = np.random.default_rng(2024)
    for kind in ("circle", "square"):
        (folder / kind).mkdir(parents=True)
        for i in range(PER_CLASS):
            draw_shape(kind, rng).save(folder / kind / f"{kind}_{i:02d}.png", optimize=False)


if __name__ == "__main__":
    write_moons(HERE / "moons.csv")
    write_shapes(HERE / "shapes")
    print(f"wrote {HERE / 'moons.csv'} and {HERE / 'shapes'}")
