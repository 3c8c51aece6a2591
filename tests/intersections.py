"""Triangle–triangle intersections of a surface with itself, for the self-contact tests and the
benchmark (issue 21: "zero triangle–triangle intersections at every frame, exact test, neighbours
excluded"): which triangles that share no vertex meet.

Two triangles meet when an edge of one passes through the other (opposite signs of the orientation
determinants, Möller 1997, "A fast triangle-triangle intersection test"), or when they touch: the
least distance between an edge of one and an edge of the other, or between a corner of one and the
other (Ericson 2005, §5.1.5 and §5.1.9), is at most ``TOUCH`` (which also covers two coplanar
triangles that overlap: their edges cross, or one holds the other's corner). The broad phase is
SciPy's k-d tree over the triangles' centres, then their boxes.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import cKDTree

from tetrig_addon.colliders import nearby
from tetrig_addon.solver import self_contact

# [m] closer than this, two triangles touch.
TOUCH = 1e-9


def intersecting_pairs(positions: np.ndarray, triangles: np.ndarray, sources: np.ndarray | None = None) -> np.ndarray:
    """Every two triangles (``triangles`` int [T, 3] on ``positions`` float64 [V, 3] [m]) that share
    no vertex and meet (module docstring): int64 [k, 2], i < j, sorted. ``sources`` (int [V]): the
    vertex each one copies (a torn mesh's ``SplitMesh.source_vertices``): triangles with copies of
    one vertex are neighbours too."""
    positions = np.asarray(positions, dtype=np.float64)
    triangles = np.asarray(triangles, dtype=np.int64)
    if triangles.shape[0] < 2:
        return np.zeros((0, 2), dtype=np.int64)
    corners = positions[triangles]
    centre = corners.mean(axis=1)
    spread = np.sqrt(((corners - centre[:, None]) ** 2).sum(axis=2)).max(axis=1)
    pairs = cKDTree(centre).query_pairs(2.0 * float(spread.max()) + TOUCH, output_type="ndarray").astype(np.int64)
    pairs = np.sort(pairs, axis=1)
    ids = triangles if sources is None else np.asarray(sources, dtype=np.int64)[triangles]
    t, u = ids[pairs[:, 0]], ids[pairs[:, 1]]
    shared = (t[:, :, None] == u[:, None, :]).any(axis=(1, 2))
    low, high = corners.min(axis=1) - TOUCH, corners.max(axis=1) + TOUCH
    boxes = np.all((low[pairs[:, 0]] <= high[pairs[:, 1]]) & (low[pairs[:, 1]] <= high[pairs[:, 0]]), axis=1)
    pairs = pairs[~shared & boxes]
    meet = _meet(positions, triangles[pairs[:, 0]], triangles[pairs[:, 1]])
    found = pairs[meet]
    return found[np.lexsort((found[:, 1], found[:, 0]))]


def count_intersections(positions: np.ndarray, triangles: np.ndarray, sources: np.ndarray | None = None) -> int:
    """How many two triangles that share no vertex meet (``intersecting_pairs``)."""
    return int(intersecting_pairs(positions, triangles, sources).shape[0])


def _meet(positions: np.ndarray, t: np.ndarray, u: np.ndarray) -> np.ndarray:
    """bool [n]: whether triangle t[i] (int64 [n, 3]) meets u[i]."""
    meet = np.zeros(t.shape[0], dtype=bool)
    for one, other in ((t, u), (u, t)):
        a, b, c = (positions[other[:, k]] for k in range(3))
        for i, j in ((0, 1), (1, 2), (2, 0)):
            p, q = positions[one[:, i]], positions[one[:, j]]
            meet |= _crosses(p, q, a, b, c)
        for k in range(3):  # a corner of one on the other
            p = positions[one[:, k]]
            bary = nearby._closest_barycentric(p, a, b, c)
            closest = bary[:, 0, None] * a + bary[:, 1, None] * b + bary[:, 2, None] * c
            meet |= np.einsum("nk,nk->n", p - closest, p - closest) <= TOUCH * TOUCH
    for i, j in ((0, 1), (1, 2), (2, 0)):  # an edge of one on an edge of the other
        for k, m in ((0, 1), (1, 2), (2, 0)):
            p, q = positions[t[:, i]], positions[t[:, j]]
            r, s = positions[u[:, k]], positions[u[:, m]]
            st = self_contact.segment_parameters(p, q, r, s)
            x = p + st[:, 0, None] * (q - p)
            y = r + st[:, 1, None] * (s - r)
            meet |= np.einsum("nk,nk->n", x - y, x - y) <= TOUCH * TOUCH
    return meet


def _crosses(p: np.ndarray, q: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """bool [n]: segment pq passes through triangle abc, its ends more than ``TOUCH`` on either side
    of its plane and the line strictly inside its edges (touching is the distances' part; so a
    flat sheet's rounding is no crossing)."""
    normal = np.cross(b - a, c - a)
    band = TOUCH * np.sqrt(np.einsum("nk,nk->n", normal, normal))  # |orientation| of a point TOUCH off the plane
    s0, s1 = np.einsum("nk,nk->n", normal, p - a), np.einsum("nk,nk->n", normal, q - a)
    o1, o2, o3 = _orient(p, q, a, b), _orient(p, q, b, c), _orient(p, q, c, a)
    inside = ((o1 > 0) & (o2 > 0) & (o3 > 0)) | ((o1 < 0) & (o2 < 0) & (o3 < 0))
    return (((s0 > band) & (s1 < -band)) | ((s0 < -band) & (s1 > band))) & inside


def _orient(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
    """(b − a) × (c − a) · (d − a) per row: its sign says on which side of plane abc d lies."""
    return np.einsum("nk,nk->n", np.cross(b - a, c - a), d - a)
