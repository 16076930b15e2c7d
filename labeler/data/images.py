"""Images: folders of PNG/JPEG files, image columns of a table, decoding to uint8 pixels.

A folder of images is a data set by itself (one class per subfolder, or unlabelled when every
image is at the top level); a table may name its images in an ``image_col`` (paths relative to
the table's folder, never outside it) or hold them as arrays (Parquet nested lists). Images are
decoded with Pillow, converted to grayscale when every one is gray (``color="auto"``) and
brought to one size: ``image_size`` if given, else the most common size shrunk so that its
longer side is at most ``max_image_side`` (a ``UserWarning`` says when images were resized).
Pixels / 255 become the features when a table has no numeric feature column.
"""

from __future__ import annotations

import os
import warnings
from collections import Counter
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd

from labeler.data.classnames import normalise_names
from labeler.data.dataset import IMAGE_SUFFIXES, Dataset, DatasetError, FileOptions, finish, subset

__all__ = ["load_image_folder", "images_from_column", "pixel_features", "to_uint8"]


def pixel_features(images: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Flattened pixels / 255 as features, with names ``px_row_col[_channel]``."""
    n, h, w = images.shape[:3]
    if images.ndim == 4:
        names = [f"px_{r}_{c}_{ch}" for r in range(h) for c in range(w) for ch in "rgb"]
    else:
        names = [f"px_{r}_{c}" for r in range(h) for c in range(w)]
    return images.reshape(n, -1).astype(np.float64) / 255.0, names


def _inside(folder: Path, relative) -> Path:
    """Resolve ``relative`` against ``folder``; refuse a result outside ``folder``."""
    root = folder.resolve()
    target = (root / Path(os.fspath(relative))).resolve()
    if not target.is_relative_to(root):
        raise DatasetError(
            f"Image path {str(relative)!r} resolves to {target}, outside the data folder {root}; "
            "refused for safety. Move the image into the data folder (or a subfolder)."
        )
    return target


def _as_uint8_image(value, where: str) -> np.ndarray:
    """An image value (nested lists / arrays) as uint8 (h, w) or (h, w, 3)."""
    try:
        arr = _nested_array(value)
    except ValueError:
        raise DatasetError(f"{where}: the image rows have different lengths.") from None
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if not (arr.ndim == 2 or (arr.ndim == 3 and arr.shape[2] == 3)) or arr.dtype.kind not in "biuf":
        raise DatasetError(
            f"{where}: an image must be a numeric (h, w) or (h, w, 3) array; got shape {arr.shape}, "
            f"dtype {arr.dtype}."
        )
    return to_uint8(arr, where)


def _nested_array(value) -> np.ndarray:
    """Nested lists / object arrays (as Parquet gives them back) as one numeric array."""
    arr = np.asarray(value)
    if arr.dtype == object:
        arr = np.stack([_nested_array(v) for v in arr])
    return arr


def to_uint8(arr: np.ndarray, where: str) -> np.ndarray:
    """Pixels as uint8: integers 0-255 kept, floats in [0, 1] scaled by 255 and rounded."""
    if not np.isfinite(arr).all():
        raise DatasetError(f"{where}: image pixels contain NaN or infinity.")
    if arr.dtype.kind == "f" and arr.min() >= 0 and arr.max() <= 1:
        arr = np.rint(arr * 255.0)
    if arr.min() < 0 or arr.max() > 255 or (arr.dtype.kind == "f" and not np.array_equal(arr, np.rint(arr))):
        raise DatasetError(f"{where}: pixel values must be integers 0-255 (or floats in 0-1).")
    return arr.astype(np.uint8)


def _common_size(sizes: list[tuple[int, int]], opts: FileOptions) -> tuple[int, int]:
    """Target (h, w): ``image_size`` if given, else the most common size, shrunk to ``max_image_side``."""
    if opts.image_size is not None:
        return opts.image_size
    (h, w), _ = Counter(sizes).most_common(1)[0]
    longest = max(h, w)
    if longest > opts.max_image_side:
        factor = opts.max_image_side / longest
        h, w = max(1, round(h * factor)), max(1, round(w * factor))
    return h, w


def _warn_resized(sizes: list[tuple[int, int]], target: tuple[int, int], opts: FileOptions, name: str) -> None:
    """Warn when images are resized to a size the loader chose (not to an explicit ``image_size``)."""
    resized = sum(size != target for size in sizes)
    if not resized or opts.image_size is not None:
        return
    common, _ = Counter(sizes).most_common(1)[0]
    reasons = []
    if len(set(sizes)) > 1:
        reasons.append(f"they come in {len(set(sizes))} sizes, {common[0]}x{common[1]} the most common")
    if target != common:
        reasons.append(f"the longer side is limited to max_image_side={opts.max_image_side}")
    warnings.warn(
        f"{name}: resized {resized} of {len(sizes)} image(s) to {target[0]}x{target[1]} pixels "
        f"(height x width): {'; '.join(reasons)}. Pass image_size=(height, width) to choose the "
        "size (or a larger max_image_side), or store the images at one size.",
        UserWarning,
        stacklevel=4,
    )


def _open_images(paths: list[Path], opts: FileOptions, name: str) -> np.ndarray:
    """Read, convert and resize image files to one uint8 array (n, h, w) or (n, h, w, 3).

    Memory is bounded by one image, not by all of them: the sizes are read from the files'
    headers first (refusing an image above :data:`MAX_PIXELS` before decoding it), then each
    image is decoded, converted and resized on its own and only the small result is kept.
    The pixels equal those of earlier versions, which decoded every image before resizing
    (an oracle test checks), except for images above :data:`REDUCE_ABOVE_PIXELS`
    (:func:`_decode`).
    """

    total = 0
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"{name}: image file {p} does not exist. Fix the path or remove the row.")
        total += p.stat().st_size
    if total > opts.max_bytes:
        raise DatasetError(
            f"{name}: the images take {total:,} bytes, above the limit of {opts.max_bytes:,}; pass a "
            "larger max_bytes or load a subset (n=...)."
        )
    sizes = [_header_size(p, name) for p in paths]
    h, w = _common_size(sizes, opts)
    _warn_resized(sizes, (h, w), opts, name)
    want_rgb, want_gray = opts.color in ("auto", "rgb"), opts.color in ("auto", "gray")
    rgb_out, gray_out = [], []
    for p in paths:
        with _reading(p, name):
            rgb, gray, is_gray = _decode(p, (w, h), want_rgb, want_gray, opts.color == "auto")
        if want_rgb:
            rgb_out.append(rgb)
        if want_gray and not is_gray:  # auto: one colour image makes the set RGB
            want_gray, gray_out = False, []
        if want_gray:
            gray_out.append(gray)
    return np.stack(gray_out if want_gray else rgb_out)


#: Largest image decoded, in pixels (Pillow's own decompression-bomb error threshold,
#: ``2 * PIL.Image.MAX_IMAGE_PIXELS`` by default): checked on the header, before decoding.
MAX_PIXELS = 2 * 89_478_485
#: Images above this many pixels are decoded reduced: JPEG by DCT scaling (``Image.draft``),
#: others by ``Image.reduce`` right after decoding, to at least twice the target size before
#: the LANCZOS resize. Their pixels differ slightly from a full-size decode; smaller images
#: (e.g. 8000 x 8000) are decoded in full, as by earlier versions.
REDUCE_ABOVE_PIXELS = 2**26


class _reading:
    """Context that turns Pillow's errors while reading ``path`` into a :class:`DatasetError`."""

    def __init__(self, path: Path, name: str):
        self.path, self.name = path, name

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        from PIL import Image, UnidentifiedImageError

        if isinstance(exc, Image.DecompressionBombError):
            raise DatasetError(
                f"{self.name}: image {self.path.name} ({self.path}) is too large to decode safely: {exc} "
                f"Shrink it (e.g. to a few thousand pixels on a side) or remove it."
            ) from None
        if isinstance(exc, (UnidentifiedImageError, OSError, ValueError)) and not isinstance(exc, DatasetError):
            raise DatasetError(
                f"{self.name}: cannot read image {self.path}: {exc}. Replace or remove that file."
            ) from None
        return False


def _header_size(path: Path, name: str) -> tuple[int, int]:
    """(height, width) from the file's header (nothing decoded); refuses more than :data:`MAX_PIXELS`."""
    from PIL import Image

    with _reading(path, name), Image.open(path) as im:
        w, h = im.size
    if w * h > MAX_PIXELS:
        raise DatasetError(
            f"{name}: image {path.name} is {w} x {h} pixels ({w * h:,}), above the limit of "
            f"{MAX_PIXELS:,} pixels ({path}): decoding it would take about "
            f"{w * h * 4 / 2**30:.1f} GiB, and such a file may be a decompression bomb. Shrink the "
            "image (e.g. to a few thousand pixels on a side) or remove it."
        )
    return h, w


def _decode(path: Path, size: tuple[int, int], want_rgb: bool, want_gray: bool, check_gray: bool):
    """One image as small arrays: ``(rgb (h, w, 3) or None, gray (h, w) or None, is_gray)``.

    As earlier versions: converted to RGB, to L (ITU-R 601 luma, exact when R == G == B) from
    the RGB image, each resized to ``size`` (width, height) with LANCZOS when it differs.
    ``is_gray`` is checked on the full-size RGB image, in strips of rows.
    """
    from PIL import Image

    w, h = size
    with Image.open(path) as im:
        if im.width * im.height > REDUCE_ABOVE_PIXELS:
            im.draft("RGB", (2 * w, 2 * h))  # JPEG: decode at 1/2, 1/4 or 1/8 scale; others: no-op
        im.load()
        full = im
        factor = min(full.width // (2 * w), full.height // (2 * h))
        if full.width * full.height > REDUCE_ABOVE_PIXELS and factor >= 2:
            try:
                full = full.reduce(factor)
            except ValueError:  # a mode reduce() does not handle (e.g. palette): decode in full
                pass
        rgb_full = full if full.mode == "RGB" else full.convert("RGB")  # convert() would copy an RGB image
    del full
    is_gray = _is_gray_image(rgb_full) if check_gray else True
    rgb = gray = None
    if want_rgb:
        rgb = np.asarray(_resized(rgb_full, size))
    if want_gray and is_gray:
        gray = np.asarray(_resized(rgb_full.convert("L"), size))
    return rgb, gray, is_gray


def _resized(im, size):
    from PIL import Image

    return im if im.size == size else im.resize(size, Image.Resampling.LANCZOS)


def _is_gray_image(rgb, rows: int = 256) -> bool:
    """:func:`_is_gray` of a PIL RGB image, a strip of ``rows`` rows at a time (no full-size copy)."""
    for top in range(0, rgb.height, rows):
        if not _is_gray(np.asarray(rgb.crop((0, top, rgb.width, min(rgb.height, top + rows))))):
            return False
    return True


def _is_gray(rgb: np.ndarray) -> bool:
    """True when every pixel of an RGB array has R == G == B."""
    return bool(np.array_equal(rgb[..., 0], rgb[..., 1]) and np.array_equal(rgb[..., 0], rgb[..., 2]))


def images_from_column(column: pd.Series, folder: Path, name: str, opts: FileOptions):
    """Images of a table column: file paths (relative to ``folder``) or arrays."""
    values = column.to_list()
    if all(isinstance(v, (str, os.PathLike)) for v in values):
        paths = [_inside(folder, v) for v in values]
        return _open_images(paths, opts, name), [str(p) for p in paths]
    if any(v is None or (isinstance(v, float) and np.isnan(v)) for v in values):
        raise DatasetError(f"{name}: image column {column.name!r} has empty cells; every row needs an image.")
    arrays = [_as_uint8_image(v, f"{name} image column {column.name!r} row {i}") for i, v in enumerate(values)]
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise DatasetError(f"{name}: image arrays have different shapes {sorted(shapes)}; store one size.")
    return np.stack(arrays), None


def _walk_images(root: Path) -> list[tuple[Path, str, str | None]]:
    """Image files under ``root`` in the order of a sorted top-down walk (a folder's files,
    then its subfolders one by one): ``(resolved path, path relative to root, class folder or
    None at the top level)``.

    Symbolic links to folders are followed when they stay inside ``root`` (the relative path
    goes through the link); hidden files and folders (names starting with ".") are skipped.

    Raises
    ------
    DatasetError
        A linked folder outside ``root``, a link loop, or one folder reached twice (its images
        would be loaded twice, possibly under two classes); a file outside ``root``
        (:func:`_inside`).
    """
    found: list[tuple[Path, str, str | None]] = []
    seen = {root: PurePosixPath()}  # real folder -> the relative path it was first reached by

    def visit(here: Path, rel: PurePosixPath) -> None:
        entries = sorted((e for e in os.scandir(here) if not e.name.startswith(".")), key=lambda e: e.name)
        label = rel.parts[0] if rel.parts else None
        for entry in entries:
            if not entry.is_dir() and Path(entry.name).suffix.lower() in IMAGE_SUFFIXES:
                found.append((_inside(root, rel / entry.name), str(rel / entry.name), label))
        for entry in (e for e in entries if e.is_dir()):
            sub = rel / entry.name
            real = Path(entry.path).resolve()
            if not real.is_relative_to(root):
                raise DatasetError(
                    f"Folder {str(sub)!r} of {root} is a symbolic link to {real}, outside the data "
                    "folder; refused for safety (as linked image files are). Copy (or move) those "
                    "images into the data folder, or load the folder the link points to."
                )
            if real in seen:
                first = seen[real]
                if rel == first or first in rel.parents:
                    raise DatasetError(
                        f"Folder {str(sub)!r} of {root} is a symbolic link back to "
                        f"{str(first) if first.parts else 'the data folder'!r}, which contains it: "
                        "a link loop. Remove the link."
                    )
                raise DatasetError(
                    f"Folders {str(sub)!r} and {str(first)!r} of {root} are the same folder "
                    "(through a symbolic link), so its images would be loaded twice. Remove the "
                    "link, or copy the images if they really belong to two classes."
                )
            seen[real] = sub
            visit(Path(entry.path), sub)

    visit(root, PurePosixPath())
    return found


def load_image_folder(folder: Path, *, seed, n, opts: FileOptions) -> Dataset:
    """A folder of PNG/JPEG images; images inside class subfolders get the subfolder as label.

    Class folder names lose their surrounding whitespace (:mod:`labeler.data.classnames`);
    symbolic links to folders inside the data folder are followed (:func:`_walk_images`).
    """
    root = folder.resolve()
    found = _walk_images(root)
    if not found:
        raise DatasetError(f"{folder} holds no PNG or JPEG images ({', '.join(IMAGE_SUFFIXES)}).")
    labels = [lab for _, _, lab in found]
    has_top = any(lab is None for lab in labels)
    has_sub = any(lab is not None for lab in labels)
    if has_top and has_sub:
        loose = next(p for p, _, lab in found if lab is None)
        raise DatasetError(
            f"{folder} mixes images at its top level (e.g. {loose.name}) with class subfolders. Put every "
            "image in a class subfolder, or all of them at the top level for unlabelled data."
        )
    if has_sub:
        try:
            class_of = normalise_names(labels, f"{folder}: class folders")
        except ValueError as exc:
            raise DatasetError(str(exc)) from None
        found = [(p, rel, class_of[lab]) for p, rel, lab in found]
    rng = np.random.default_rng(seed)
    rows = subset(len(found), n, rng, folder.name)
    found = [found[i] for i in rows]
    paths = [p for p, _, _ in found]
    images = _open_images(paths, opts, folder.name)
    X, feature_names = pixel_features(images)
    rel_names = [rel for _, rel, _ in found]
    y = np.array([lab for _, _, lab in found]) if has_sub else None
    frame = pd.DataFrame({"path": rel_names})
    if y is not None:
        frame["label"] = y
    return finish(folder.name, X, y, feature_names, ids=np.array(rel_names), images=images,
                  image_paths=[str(p) for p in paths], frame=frame)
