"""Regenerate the small sample files of this folder (deterministic: run it, git diff is empty).

* ``moons.csv``: 300 points of the built-in "moons" set (seed 0) with columns x, y, label.
* ``shapes/``: 40 grayscale 24x24 PNGs, 20 in ``circle/`` and 20 in ``square/``: a light shape
  of random size and position on a dark, slightly noisy background (seeded).
* ``sentences.csv``: 300 short English sentences with columns id, text, label: 100 each about
  the weather, cooking and football, built from templates and word lists below (seeded), some
  words shared between topics so that a few sentences are hard.

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


# ---- sentences.csv: three topics, templates filled from word lists --------------------------
TOPICS = {
    "weather": {
        "subject": ["the forecast", "the sky", "the wind", "the morning", "the storm", "the rain",
                    "the afternoon", "the fog", "the temperature", "the weekend"],
        "verb": ["turned", "looks", "stayed", "became", "will be", "was", "felt", "seems"],
        "object": ["cloudy", "sunny and warm", "cold and windy", "wet", "stormy", "foggy",
                   "humid", "freezing", "mild", "bright"],
        "extra": ["with heavy showers", "after a frosty night", "with a strong breeze",
                  "under grey clouds", "with thunder in the hills", "with snow on the roads",
                  "with a chance of hail", "as the pressure dropped"],
    },
    "cooking": {
        "subject": ["the soup", "the bread", "the sauce", "my grandmother", "the chef", "the cake",
                    "the risotto", "the oven", "the recipe", "the dough"],
        "verb": ["needs", "tastes of", "was made with", "calls for", "smells of", "goes well with",
                 "was baked with", "simmered with"],
        "object": ["fresh garlic", "a pinch of salt", "butter and flour", "roasted peppers",
                   "olive oil", "chopped onions", "brown sugar", "lemon zest", "black pepper",
                   "thyme and rosemary"],
        "extra": ["for twenty minutes", "in a hot pan", "before serving", "on a low heat",
                  "until golden", "with a wooden spoon", "in the old oven", "for the dinner party"],
    },
    "football": {
        "subject": ["the striker", "the coach", "the home team", "the goalkeeper", "the referee",
                    "the captain", "the defender", "the fans", "the midfielder", "the visitors"],
        "verb": ["scored", "missed", "celebrated", "argued about", "defended", "saved",
                 "won", "lost"],
        "object": ["a late penalty", "the derby", "a header", "the final", "a free kick",
                   "the league title", "an own goal", "the second half", "the cup match",
                   "a corner"],
        "extra": ["in front of a full stadium", "after extra time", "before half time",
                  "in the rain", "on a cold evening", "with ten men", "in the last minute",
                  "despite the wind"],
    },
}
PER_TOPIC = 100


def make_sentences(seed: int = 7) -> list[tuple[int, str, str]]:
    """``(id, text, label)`` rows: PER_TOPIC sentences per topic, shuffled, ids 1..n.

    A quarter of the sentences get an ``extra`` phrase from another topic (weather words in a
    football report, "in the rain"), so that a few are hard to place from their words alone.
    """
    rng = np.random.default_rng(seed)
    rows = []
    names = list(TOPICS)
    for label in names:
        words = TOPICS[label]
        seen = set()
        while len([r for r in rows if r[1] == label]) < PER_TOPIC:
            parts = [str(rng.choice(words[k])) for k in ("subject", "verb", "object")]
            source = words if rng.random() > 0.25 else TOPICS[names[int(rng.integers(len(names)))]]
            extra = str(rng.choice(source["extra"]))
            text = f"{parts[0].capitalize()} {parts[1]} {parts[2]} {extra}."
            if text not in seen:
                seen.add(text)
                rows.append((text, label))
    order = rng.permutation(len(rows))
    return [(i + 1, rows[j][0], rows[j][1]) for i, j in enumerate(order)]


def write_sentences(path: Path) -> None:
    import csv

    with path.open("w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(["id", "text", "label"])
        writer.writerows(make_sentences())


if __name__ == "__main__":
    write_moons(HERE / "moons.csv")
    write_shapes(HERE / "shapes")
    write_sentences(HERE / "sentences.csv")
    print(f"wrote {HERE / 'moons.csv'}, {HERE / 'sentences.csv'} and {HERE / 'shapes'}")
