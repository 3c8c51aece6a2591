"""Compiled closest points for contacts between bodies (Numba): ``colliders.nearby.closest``'s
search over the one-rings of each point's nearest vertices, a loop per point instead of arrays of
(point, triangle) pairs, with the same formulas in the same order, so it finds the same triangles
and coordinates (``pairs`` loads it with the solver's kernel)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def closest_on_rings(points, reach, nearest, vertices, triangles, ring_offsets, ring_triangles):
    """For each point i (float64 [n, 3]), among the triangles around its nearest vertices
    (int64 [n, k], −1 for none), the one whose closest point is nearest: (triangle int64 [n] (−1
    where none is within ``reach[i]``), barycentric float64 [n, 3], squared distance float64 [n])."""
    n = points.shape[0]
    found = np.full(n, -1, dtype=np.int64)
    bary = np.zeros((n, 3))
    squared = np.full(n, np.inf)
    for i in range(n):
        p0, p1, p2 = points[i, 0], points[i, 1], points[i, 2]
        best = np.inf
        for j in range(nearest.shape[1]):
            v = nearest[i, j]
            if v < 0:
                continue
            for r in range(ring_offsets[v], ring_offsets[v + 1]):
                t = ring_triangles[r]
                a, b, c = triangles[t, 0], triangles[t, 1], triangles[t, 2]
                u0, u1, u2 = closest_barycentric(p0, p1, p2, vertices[a, 0], vertices[a, 1], vertices[a, 2],
                                                 vertices[b, 0], vertices[b, 1], vertices[b, 2],
                                                 vertices[c, 0], vertices[c, 1], vertices[c, 2])
                sq = 0.0
                for k in range(3):
                    q = u0 * vertices[a, k] + u1 * vertices[b, k] + u2 * vertices[c, k]
                    sq += (points[i, k] - q) * (points[i, k] - q)
                if sq < best:
                    best = sq
                    found[i] = t
                    bary[i, 0], bary[i, 1], bary[i, 2] = u0, u1, u2
        if found[i] >= 0 and not best < reach[i] * reach[i]:
            found[i] = -1
        squared[i] = best
    return found, bary, squared


@njit(cache=True)
def pair_planes(own_indices, own_weights, own_positions, rows, other_indices, other_weights, other_positions,
                corners, barycentric, normals, receding, thickness):
    """``pairs.PairRows.planes`` in one loop, with its formulas in its order: the plane point
    float64 [r, 3] [m] of each candidate row for one substep (``receding``: float64 [r] [m], how far
    inside the contact distance each row's plane still starts)."""
    count = rows.shape[0]
    out = np.empty((count, 3))
    closest = np.empty(3)
    own = np.empty(3)
    for i in range(count):
        for k in range(3):
            closest[k] = 0.0
        for j in range(3):
            q = corners[i, j]
            beta = barycentric[i, j]
            for k in range(3):
                point = (((other_weights[q, 0] * other_positions[other_indices[q, 0], k]
                           + other_weights[q, 1] * other_positions[other_indices[q, 1], k])
                          + other_weights[q, 2] * other_positions[other_indices[q, 2], k])
                         + other_weights[q, 3] * other_positions[other_indices[q, 3], k])
                closest[k] = beta * point if j == 0 else closest[k] + beta * point
        c = rows[i]
        for k in range(3):
            own[k] = (((own_weights[c, 0] * own_positions[own_indices[c, 0], k]
                        + own_weights[c, 1] * own_positions[own_indices[c, 1], k])
                       + own_weights[c, 2] * own_positions[own_indices[c, 2], k])
                      + own_weights[c, 3] * own_positions[own_indices[c, 3], k])
        height = ((own[0] - closest[0]) * normals[i, 0] + (own[1] - closest[1]) * normals[i, 1]
                  + (own[2] - closest[2]) * normals[i, 2])
        offset = thickness - receding[i]
        offset = min(offset, 0.5 * (offset + height))
        for k in range(3):
            out[i, k] = closest[k] + offset * normals[i, k]
    return out


@njit(inline="always")
def closest_barycentric(p0, p1, p2, a0, a1, a2, b0, b1, b2, c0, c1, c2):
    """Barycentric coordinates of the closest point of triangle (a, b, c) to p: Ericson 2005,
    *Real-Time Collision Detection*, §5.1.5 (``nearby._closest_barycentric``, one pair)."""
    ab0, ab1, ab2 = b0 - a0, b1 - a1, b2 - a2
    ac0, ac1, ac2 = c0 - a0, c1 - a1, c2 - a2
    d1 = ab0 * (p0 - a0) + ab1 * (p1 - a1) + ab2 * (p2 - a2)
    d2 = ac0 * (p0 - a0) + ac1 * (p1 - a1) + ac2 * (p2 - a2)
    if d1 <= 0.0 and d2 <= 0.0:
        return 1.0, 0.0, 0.0
    d3 = ab0 * (p0 - b0) + ab1 * (p1 - b1) + ab2 * (p2 - b2)
    d4 = ac0 * (p0 - b0) + ac1 * (p1 - b1) + ac2 * (p2 - b2)
    if d3 >= 0.0 and d4 <= d3:
        return 0.0, 1.0, 0.0
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        t = d1 / (d1 - d3)
        return _unit(1.0 - t), _unit(t), 0.0
    d5 = ab0 * (p0 - c0) + ab1 * (p1 - c1) + ab2 * (p2 - c2)
    d6 = ac0 * (p0 - c0) + ac1 * (p1 - c1) + ac2 * (p2 - c2)
    if d6 >= 0.0 and d5 <= d6:
        return 0.0, 0.0, 1.0
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        t = d2 / (d2 - d6)
        return _unit(1.0 - t), 0.0, _unit(t)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        t = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return 0.0, _unit(1.0 - t), _unit(t)
    total = va + vb + vc
    v, w = vb / total, vc / total
    if not (np.isfinite(v) and np.isfinite(w)):
        return 1.0, 0.0, 0.0
    return _unit(1.0 - v - w), _unit(v), _unit(w)


@njit(inline="always")
def _unit(x):
    """x clamped to [0, 1] (``np.clip`` of the NumPy version)."""
    return min(max(x, 0.0), 1.0)


def warm_up() -> None:
    """Compile (or read from Numba's cache) on one point and one triangle."""
    vertices = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    closest_on_rings(np.array([[0.2, 0.2, 0.1]]), np.array([1.0]), np.zeros((1, 2), dtype=np.int64),
                     vertices, np.array([[0, 1, 2]], dtype=np.int64), np.array([0, 1, 2, 3], dtype=np.int64),
                     np.array([0, 0, 0], dtype=np.int64))
    indices, weights = np.zeros((3, 4), dtype=np.int32), np.tile([1.0, 0.0, 0.0, 0.0], (3, 1))
    pair_planes(indices, weights, vertices, np.zeros(1, dtype=np.int64), indices, weights, vertices,
                np.array([[0, 1, 2]], dtype=np.int64), np.full((1, 3), 1.0 / 3.0), np.array([[0.0, 0.0, 1.0]]),
                np.zeros(1), 0.01)

