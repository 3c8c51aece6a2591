"""Compiled search of a cage soft body's self-contact (Numba), loaded with the solver's kernel
(``cage_self``), with the NumPy reference's formulas and results (``cage_self.search``):

* ``cluster_pairs``: the two clusters of the surface whose bounding spheres now come within the
  radius and whose rest spheres reach the rest limit apart, on a hashed grid of cubes over the
  spheres' centres (Teschner et al. 2003) instead of the reference's k-d tree;
* ``nearest_triangles``: each vertex's nearest triangle among those of the clusters paired with
  its own (a loop per pair instead of arrays of (vertex, triangle) pairs; Ericson 2005, §5.1.5).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .self_contact_kernel import _hash, _inside_box, _point_triangle, grid


@njit(cache=True)
def cluster_pairs(centres, radii, rest_centres, rest_radii, radius, rest_limit):
    """(c, d) int64 [m, 2] with c < d, sorted: every two clusters whose spheres (``centres``
    float64 [C, 3] [m], ``radii`` float64 [C]) are closer than ``radius`` and whose rest spheres
    (``rest_centres``, ``rest_radii``) have points ``rest_limit`` apart or more."""
    count = centres.shape[0]
    largest = radii.max() if count else 0.0
    cell = max(radius + 2.0 * largest, 1e-9)
    cubes, starts, order, low, mask = grid(centres, cell)
    found = np.empty((16, 2), dtype=np.int64)
    size = 0
    for c in range(count):
        for i in range(cubes[c, 0] - 1, cubes[c, 0] + 2):
            for j in range(cubes[c, 1] - 1, cubes[c, 1] + 2):
                for k in range(cubes[c, 2] - 1, cubes[c, 2] + 2):
                    h = _hash(i, j, k, mask)
                    for s in range(starts[h], starts[h + 1]):
                        d = order[s]
                        if d <= c or cubes[d, 0] != i or cubes[d, 1] != j or cubes[d, 2] != k:
                            continue
                        if not _squared(centres, c, d) < (radius + radii[c] + radii[d]) ** 2:
                            continue  # the spheres are farther apart than the radius now
                        within = rest_limit - rest_radii[c] - rest_radii[d]
                        if within > 0.0 and _squared(rest_centres, c, d) < within * within:
                            continue  # every two points of theirs are neighbours at rest
                        if size == found.shape[0]:
                            grown = np.empty((2 * size, 2), dtype=np.int64)
                            grown[:size] = found
                            found = grown
                        found[size, 0], found[size, 1] = c, d
                        size += 1
    out = found[:size]
    keys = out[:, 0] * count + out[:, 1]
    return out[np.argsort(keys)]


@njit(inline="always")
def _squared(points, c, d):
    """|points[c] − points[d]|², summed in the reference's order."""
    return ((points[c, 0] - points[d, 0]) * (points[c, 0] - points[d, 0])
            + (points[c, 1] - points[d, 1]) * (points[c, 1] - points[d, 1])) + (
        (points[c, 2] - points[d, 2]) * (points[c, 2] - points[d, 2]))


@njit(cache=True)
def nearest_triangles(positions, rest, controls, triangles, pairs, centres, radii, vertex_offsets, vertices,
                      triangle_offsets, cluster_triangles, radius, rest_limit, best, best_bary, best_squared):
    """For the clusters' ``pairs`` (int64 [m, 2]), each vertex of one against each triangle of the
    other (``centres``, ``radii``: the clusters' spheres, which skip a vertex farther from the other
    cluster), both ways: a triangle closer than ``radius`` [m] at ``positions``, ``rest_limit`` [m]
    or farther at ``rest``, and with no control point in common with the vertex (``controls``:
    int64 [V, 4], each vertex's) becomes the vertex's (``best`` int64 [V], ``best_bary`` float64
    [V, 3], ``best_squared`` float64 [V]) where it is nearer, or as near and lower."""
    for m in range(pairs.shape[0]):
        for side in range(2):
            own, other = pairs[m, side], pairs[m, 1 - side]
            for s in range(vertex_offsets[own], vertex_offsets[own + 1]):
                v = vertices[s]
                reach = radius + radii[other]
                if not _squared_to(positions, v, centres, other) < reach * reach:
                    continue  # farther from the other cluster's sphere than the radius
                for r in range(triangle_offsets[other], triangle_offsets[other + 1]):
                    t = cluster_triangles[r]
                    a, b, c = triangles[t, 0], triangles[t, 1], triangles[t, 2]
                    if v == a or v == b or v == c or not _inside_box(positions, v, a, b, c, radius):
                        continue
                    u0, u1, u2, squared = _point_triangle(positions, v, a, b, c)
                    if not squared < radius * radius:
                        continue
                    if squared > best_squared[v] or (squared == best_squared[v] and t > best[v]):
                        continue
                    if _point_triangle(rest, v, a, b, c)[3] < rest_limit * rest_limit:
                        continue  # neighbours at rest
                    if _shares_control(controls, v, a, b, c):
                        continue  # moved by the same control point: a push would move both
                    best[v], best_squared[v] = t, squared
                    best_bary[v, 0], best_bary[v, 1], best_bary[v, 2] = u0, u1, u2


@njit(inline="always")
def _squared_to(positions, v, centres, c):
    """|positions[v] − centres[c]|²."""
    squared = 0.0
    for a in range(3):
        squared += (positions[v, a] - centres[c, a]) * (positions[v, a] - centres[c, a])
    return squared


@njit(inline="always")
def _shares_control(controls, v, a, b, c):
    """Whether vertex v has a control point in common with a corner a, b or c."""
    for i in range(controls.shape[1]):
        q = controls[v, i]
        for j in range(controls.shape[1]):
            if controls[a, j] == q or controls[b, j] == q or controls[c, j] == q:
                return True
    return False


def warm_up() -> None:
    """Compile (or read from Numba's cache) on two triangles in two clusters."""
    positions = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, 0.2, 0.01], [1.2, 0.2, 0.01],
                          [0.2, 1.2, 0.01]])
    triangles = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.int64)
    centres = np.array([[0.3, 0.3, 0.0], [0.5, 0.5, 0.01]])
    radii = np.array([0.8, 0.8])
    pairs = cluster_pairs(centres, radii, centres + 5.0 * np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), radii,
                          0.05, 1.0)
    offsets = np.array([0, 3, 6], dtype=np.int64)
    best, bary, squared = np.full(6, -1, dtype=np.int64), np.zeros((6, 3)), np.full(6, np.inf)
    controls = np.arange(24, dtype=np.int64).reshape(6, 4)
    nearest_triangles(positions, positions + 5.0, controls, triangles, pairs, centres, radii, offsets, np.arange(6, dtype=np.int64),
                      np.array([0, 1, 2], dtype=np.int64), np.arange(2, dtype=np.int64), 0.05, 0.01, best, bary,
                      squared)
