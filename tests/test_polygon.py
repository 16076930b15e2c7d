"""Point in polygon (core/polygon.py) against a slow, obvious, exact oracle: every point against
every edge in rational arithmetic, on random lassos, boxes and the edge cases (points on edges
and vertices, rays through vertices, self-intersecting and degenerate polygons)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from core.polygon import points_in_box, points_in_polygon


def oracle_inside(point, polygon) -> bool:
    """The closed even-odd rule, exactly (fractions), one edge at a time.

    On an edge (collinear with it and between its ends) -> inside. Otherwise count the edges
    that a ray from the point towards +x crosses: the edge spans the point's y in the half-open
    band ``min(ay, by) <= y < max(ay, by)`` and meets the ray right of the point.
    """
    px, py = (Fraction(float(v)) for v in point)
    vertices = [(Fraction(float(a)), Fraction(float(b))) for a, b in polygon]
    if not vertices:
        return False
    crossings = 0
    for k, (ax, ay) in enumerate(vertices):
        bx, by = vertices[(k + 1) % len(vertices)]
        collinear = (bx - ax) * (py - ay) == (by - ay) * (px - ax)
        if collinear and min(ax, bx) <= px <= max(ax, bx) and min(ay, by) <= py <= max(ay, by):
            return True
        if min(ay, by) <= py < max(ay, by):
            x_meet = ax + (py - ay) * (bx - ax) / (by - ay)
            if px < x_meet:
                crossings += 1
    return crossings % 2 == 1


def oracle(points, polygon) -> np.ndarray:
    return np.array([bool(np.isfinite(p).all()) and oracle_inside(p, polygon) for p in points])


SQUARE = [(0, 0), (4, 0), (4, 4), (0, 4)]


def test_a_square_holds_its_inside_edges_and_corners_by_hand():
    points = np.array([[2, 2], [0, 0], [4, 4], [4, 2], [2, 0], [0, 3], [2, 4],  # inside / boundary
                       [5, 2], [-1, 2], [2, 5], [2, -1], [4.000001, 2], [np.nan, 2], [np.inf, 1]])
    expected = [True] * 7 + [False] * 7
    assert points_in_polygon(points, SQUARE).tolist() == expected
    assert oracle(points, SQUARE).tolist() == expected
    # the same box given as ranges (either order), and the closing vertex repeated
    assert points_in_box(points, (4, 0), (0, 4)).tolist() == expected
    assert points_in_polygon(points, SQUARE + [SQUARE[0]]).tolist() == expected


def test_rays_through_vertices_count_once():
    # a diamond: a horizontal ray from (-1, 0) or (0.5, 0) passes through the vertices (±2, 0)
    diamond = [(0, -2), (2, 0), (0, 2), (-2, 0)]
    # a "W" bottom whose inner vertex (2, 1) lies on the rays of y = 1
    w = [(0, 0), (1, 0), (2, 1), (3, 0), (4, 0), (4, 3), (0, 3)]
    points = np.array([[0.5, 0], [-3, 0], [3, 0], [-2, 0], [0, 1.5], [1, 1], [3, 1], [0.5, 1],
                       [2, 0.5], [2, 1], [-1, 1], [5, 1], [4, 1], [2, 2]], dtype=float)
    for polygon in (diamond, w):
        np.testing.assert_array_equal(points_in_polygon(points, polygon), oracle(points, polygon))
    assert points_in_polygon(points, w)[[5, 6, 7, 8, 9, 10, 11, 12]].tolist() == [
        True, True, True, False, True, False, False, True]


def test_self_intersecting_lassos_use_the_even_odd_rule():
    star = [(0, 10), (6, -8), (-9.5, 3), (9.5, 3), (-6, -8)]  # a pentagram drawn in one stroke
    bowtie = [(0, 0), (4, 4), (4, 0), (0, 4)]  # a figure eight: two triangles meeting at (2, 2)
    points = np.array([[0, 0], [0, 7], [7, 3.5], [-7.5, 3.5], [3, 2.5], [20, 0],
                       [1, 2], [3, 2], [2, 2], [2, 1], [2, 3]], dtype=float)
    got_star = points_in_polygon(points, star)
    got_bowtie = points_in_polygon(points, bowtie)
    assert got_star[:6].tolist() == [False, True, False, False, True, False]  # centre out, tips in
    assert got_bowtie[6:].tolist() == [True, True, True, False, False]  # both loops, the crossing
    np.testing.assert_array_equal(got_star, oracle(points, star))
    np.testing.assert_array_equal(got_bowtie, oracle(points, bowtie))


@pytest.mark.parametrize("polygon", [
    [], [(1, 1)], [(0, 0), (2, 2)], [(0, 0), (2, 2), (4, 4)], [(0, 0), (4, 0), (2, 0)],
    [(0, 1), (3, 1), (3, 1), (0, 1)], [(2, 2), (2, 2), (2, 2)],
])
def test_degenerate_polygons_hold_only_their_edges(polygon):
    grid = np.array([(x, y) for x in np.arange(-1, 5, 0.5) for y in np.arange(-1, 5, 0.5)])
    got = points_in_polygon(grid, polygon)
    np.testing.assert_array_equal(got, oracle(grid, polygon))
    if not polygon:
        assert not got.any()
    elif len({tuple(v) for v in polygon}) == 1:
        assert got.sum() == 1
    else:
        assert 0 < got.sum() < 10  # points of the segment, nothing around it


@pytest.mark.parametrize("seed", range(6))
def test_random_lassos_match_the_oracle(seed):
    rng = np.random.default_rng(seed)
    # points on a coarse grid (many exactly on edges and vertices) plus random ones
    grid = rng.integers(-4, 5, size=(150, 2)).astype(float)
    points = np.vstack([grid, rng.uniform(-5, 5, size=(250, 2))])
    k = int(rng.integers(3, 25))
    if seed % 2:  # a star-shaped, simple lasso around the origin
        angle = np.sort(rng.uniform(0, 2 * np.pi, k))
        radius = rng.uniform(1, 4.5, k)
        polygon = np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])
    else:  # a scribble: integer vertices, crossing itself, vertices on the grid points' rays
        polygon = rng.integers(-4, 5, size=(k, 2)).astype(float)
    points = np.vstack([points, polygon])  # the vertices themselves
    np.testing.assert_array_equal(points_in_polygon(points, polygon), oracle(points, polygon))


@pytest.mark.parametrize("seed", range(3))
def test_boxes_match_the_polygon_of_their_corners(seed):
    rng = np.random.default_rng(seed)
    points = np.vstack([rng.integers(-3, 4, size=(200, 2)).astype(float), rng.normal(size=(300, 2))])
    x0, x1, y0, y1 = rng.integers(-3, 4, size=4).astype(float)
    corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    np.testing.assert_array_equal(points_in_box(points, (x0, x1), (y0, y1)),
                                  points_in_polygon(points, corners))
    np.testing.assert_array_equal(points_in_box(points, (x0, x1), (y0, y1)), oracle(points, corners))


def test_bad_input_is_refused_with_the_fix():
    with pytest.raises(ValueError, match="points must have shape"):
        points_in_polygon(np.zeros((3, 3)), SQUARE)
    with pytest.raises(ValueError, match="non-finite vertex"):
        points_in_polygon(np.zeros((3, 2)), [(0, 0), (np.nan, 1), (1, 1)])
    with pytest.raises(ValueError, match="polygon must have shape"):
        points_in_polygon(np.zeros((3, 2)), [1, 2, 3])
    with pytest.raises(ValueError, match="vertices of numbers"):
        points_in_polygon(np.zeros((3, 2)), [("a", "b")])
    with pytest.raises(ValueError, match="x_range must be two numbers"):
        points_in_box(np.zeros((3, 2)), (1,), (0, 1))
    with pytest.raises(ValueError, match="y_range must be finite"):
        points_in_box(np.zeros((3, 2)), (0, 1), (0, np.inf))
    assert points_in_polygon(np.empty((0, 2)), SQUARE).shape == (0,)
