"""Compiled search of a Surface body's self-contact (Numba), loaded with the solver's kernel
(``self_contact``): the pairs of features within a radius of each other, found on a hashed grid of
cubes over the particles rebuilt for every call, with the NumPy reference's formulas
(``self_contact.search``, whose results it gives exactly, in the same order once sorted).

* ``point_triangle``: every (particle, triangle) that is not one of its corners, closer than the
  radius: a triangle's box grown by the radius holds every such particle; the cubes it covers are
  looked up in the hash table, and each particle in them tested (Ericson 2005, §5.1.5).
* ``edge_edge``: every two edges that share no particle, closer than the radius, on a hashed grid
  of the edges' middles: an edge's box grown by the radius and half the longest edge holds the
  middle of every such edge; each pair is found once, from its lower edge (Ericson 2005, §5.1.9).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .pairs_kernel import closest_barycentric

# Odd multipliers of the cubes' hash (Teschner et al. 2003, "Optimized Spatial Hashing for
# Collision Detection of Deformable Objects").
_HASH_I, _HASH_J, _HASH_K = 73856093, 19349663, 83492791
# A segment shorter than this squared [m²] is a point (``self_contact.TINY``).
TINY = 1e-24


@njit(cache=True)
def _hash(i, j, k, mask):
    return ((i * _HASH_I) ^ (j * _HASH_J) ^ (k * _HASH_K)) & mask


@njit(cache=True)
def grid(positions, cell):
    """The hashed grid: (each particle's cube int64 [V, 3], the table's starts int64 [H + 1], the
    particles sorted by bucket int64 [V], the lowest corner float64 [3], the mask H − 1)."""
    count = positions.shape[0]
    size = 1
    while size < 2 * count:
        size *= 2
    low = np.empty(3)
    for d in range(3):
        low[d] = positions[:, d].min() if count else 0.0
    cubes = np.empty((count, 3), dtype=np.int64)
    bucket = np.empty(count, dtype=np.int64)
    starts = np.zeros(size + 1, dtype=np.int64)
    for v in range(count):
        for d in range(3):
            cubes[v, d] = int(np.floor((positions[v, d] - low[d]) / cell))
        bucket[v] = _hash(cubes[v, 0], cubes[v, 1], cubes[v, 2], size - 1)
        starts[bucket[v] + 1] += 1
    for h in range(size):
        starts[h + 1] += starts[h]
    order = np.empty(count, dtype=np.int64)
    filled = starts[:-1].copy()
    for v in range(count):
        order[filled[bucket[v]]] = v
        filled[bucket[v]] += 1
    return cubes, starts, order, low, size - 1


@njit(inline="always")
def _inside_box(positions, v, a, b, c, radius):
    """Whether particle v is in the box of triangle (a, b, c) grown by ``radius``."""
    for k in range(3):
        x = positions[v, k]
        if x < min(positions[a, k], positions[b, k], positions[c, k]) - radius:
            return False
        if x > max(positions[a, k], positions[b, k], positions[c, k]) + radius:
            return False
    return True


@njit(cache=True)
def point_triangle(positions, rest, triangles, radius, rest_limit, cell, bound, best, best_bary, best_squared):
    """The (particle, triangle) pairs within ``radius`` [m] (module docstring) that are not nearer
    than ``rest_limit`` [m] at ``rest`` (float64 [V, 3]): each lowers ``bound`` (float64 [V], at
    its particle and its triangle's corners) to its distance, and each particle keeps its nearest
    triangle (``best`` int64 [V], ``best_bary`` float64 [V, 3], ``best_squared`` float64 [V]; on a
    tie the lower triangle)."""
    cubes, starts, order, low, mask = grid(positions, cell)
    for t in range(triangles.shape[0]):
        a, b, c = triangles[t, 0], triangles[t, 1], triangles[t, 2]
        lo = np.empty(3, dtype=np.int64)
        hi = np.empty(3, dtype=np.int64)
        for d in range(3):
            smallest = min(positions[a, d], positions[b, d], positions[c, d]) - radius
            largest = max(positions[a, d], positions[b, d], positions[c, d]) + radius
            lo[d] = int(np.floor((smallest - low[d]) / cell))
            hi[d] = int(np.floor((largest - low[d]) / cell))
        for i in range(lo[0], hi[0] + 1):
            for j in range(lo[1], hi[1] + 1):
                for k in range(lo[2], hi[2] + 1):
                    h = _hash(i, j, k, mask)
                    for s in range(starts[h], starts[h + 1]):
                        v = order[s]
                        if cubes[v, 0] != i or cubes[v, 1] != j or cubes[v, 2] != k:
                            continue  # another cube in the same bucket
                        if v == a or v == b or v == c or not _inside_box(positions, v, a, b, c, radius):
                            continue
                        u0, u1, u2, squared = _point_triangle(positions, v, a, b, c)
                        if not squared < radius * radius:
                            continue
                        if _point_triangle(rest, v, a, b, c)[3] < rest_limit * rest_limit:
                            continue  # neighbours at rest
                        distance = np.sqrt(squared)
                        bound[v] = min(bound[v], distance)
                        bound[a] = min(bound[a], distance)
                        bound[b] = min(bound[b], distance)
                        bound[c] = min(bound[c], distance)
                        if squared < best_squared[v] or (squared == best_squared[v] and t < best[v]):
                            best[v], best_squared[v] = t, squared
                            best_bary[v, 0], best_bary[v, 1], best_bary[v, 2] = u0, u1, u2


@njit(inline="always")
def _point_triangle(positions, v, a, b, c):
    """(barycentric coordinates of the closest point of triangle (a, b, c) to particle v, squared
    distance), summed in the reference's order."""
    u0, u1, u2 = closest_barycentric(
        positions[v, 0], positions[v, 1], positions[v, 2], positions[a, 0], positions[a, 1], positions[a, 2],
        positions[b, 0], positions[b, 1], positions[b, 2], positions[c, 0], positions[c, 1], positions[c, 2])
    squared = 0.0
    for d in range(3):
        q = u0 * positions[a, d] + u1 * positions[b, d] + u2 * positions[c, d]
        squared += (positions[v, d] - q) * (positions[v, d] - q)
    return u0, u1, u2, squared


@njit(cache=True)
def segment_parameters(p0, p1, p2, q0, q1, q2, r0, r1, r2, s0, s1, s2):
    """(s, t) of the closest points p + s·(q − p) and r + t·(s − r) of two segments: Ericson 2005,
    §5.1.9 (``self_contact._segment_parameters``, one pair, the same branches)."""
    d10, d11, d12 = q0 - p0, q1 - p1, q2 - p2
    d20, d21, d22 = s0 - r0, s1 - r1, s2 - r2
    w0, w1, w2 = p0 - r0, p1 - r1, p2 - r2
    a = d10 * d10 + d11 * d11 + d12 * d12
    e = d20 * d20 + d21 * d21 + d22 * d22
    f = d20 * w0 + d21 * w1 + d22 * w2
    c = d10 * w0 + d11 * w1 + d12 * w2
    b = d10 * d20 + d11 * d21 + d12 * d22
    if a <= TINY and e <= TINY:
        return 0.0, 0.0
    if a <= TINY:
        return 0.0, min(max(f / e, 0.0), 1.0)
    if e <= TINY:
        return min(max(-c / a, 0.0), 1.0), 0.0
    denominator = a * e - b * b
    s = 0.0
    if denominator > 0.0:
        s = min(max((b * f - c * e) / denominator, 0.0), 1.0)
    t = (b * s + f) / e
    if t < 0.0:
        t = 0.0
        s = min(max(-c / a, 0.0), 1.0)
    elif t > 1.0:
        t = 1.0
        s = min(max((b - c) / a, 0.0), 1.0)
    return s, t


@njit(inline="always")
def _boxes_meet(positions, a, b, c, d, radius):
    """Whether the box of segment (a, b) grown by ``radius`` meets the box of segment (c, d)."""
    for k in range(3):
        if min(positions[a, k], positions[b, k]) - radius > max(positions[c, k], positions[d, k]):
            return False
        if min(positions[c, k], positions[d, k]) > max(positions[a, k], positions[b, k]) + radius:
            return False
    return True


@njit(cache=True, parallel=True)
def edge_edge(positions, rest, edges, radius, rest_limit, longest, cell, edge_bound, best, best_parameters):
    """The pairs of edges within ``radius`` [m] sharing no particle (module docstring) and not
    nearer than ``rest_limit`` [m] at ``rest``: each edge keeps the distance of its nearest
    (``edge_bound`` float64 [E], lowered) and which it is (``best`` int64 [E], ``best_parameters``
    float64 [E, 2], (its own parameter, the other's); on a tie the lower). Each edge looks for its
    own, in parallel (a pair is measured from its lower edge either way, so both see one number)."""
    count = edges.shape[0]
    middles = np.empty((count, 3))
    for e in range(count):
        for d in range(3):
            middles[e, d] = 0.5 * (positions[edges[e, 0], d] + positions[edges[e, 1], d])
    cubes, starts, order, low, mask = grid(middles, cell)
    grow = radius + 0.5 * longest  # an edge within the radius has its middle within this of the box
    for e in prange(count):
        a, b = edges[e, 0], edges[e, 1]
        lo = np.empty(3, dtype=np.int64)
        hi = np.empty(3, dtype=np.int64)
        for d in range(3):
            lo[d] = int(np.floor((min(positions[a, d], positions[b, d]) - grow - low[d]) / cell))
            hi[d] = int(np.floor((max(positions[a, d], positions[b, d]) + grow - low[d]) / cell))
        nearest = np.inf
        for i in range(lo[0], hi[0] + 1):
            for j in range(lo[1], hi[1] + 1):
                for k in range(lo[2], hi[2] + 1):
                    h = _hash(i, j, k, mask)
                    for s in range(starts[h], starts[h + 1]):
                        f = order[s]
                        if f == e or cubes[f, 0] != i or cubes[f, 1] != j or cubes[f, 2] != k:
                            continue  # another cube in the same bucket
                        c, dd = edges[f, 0], edges[f, 1]
                        if c == a or c == b or dd == a or dd == b or not _boxes_meet(positions, a, b, c, dd, radius):
                            continue
                        if e < f:
                            ps, pt, squared = _segments(positions, a, b, c, dd)
                        else:
                            pt, ps, squared = _segments(positions, c, dd, a, b)
                        if not squared < radius * radius:
                            continue
                        if (_segments(rest, a, b, c, dd)[2] if e < f else _segments(rest, c, dd, a, b)[2]) \
                                < rest_limit * rest_limit:
                            continue  # neighbours at rest
                        if squared < nearest or (squared == nearest and f < best[e]):
                            nearest, best[e] = squared, f
                            best_parameters[e, 0], best_parameters[e, 1] = ps, pt
        if nearest < np.inf:
            edge_bound[e] = min(edge_bound[e], np.sqrt(nearest))


@njit(inline="always")
def _segments(positions, a, b, c, d):
    """(s, t, squared distance) of the closest points of segments (a, b) and (c, d)."""
    ps, pt = segment_parameters(
        positions[a, 0], positions[a, 1], positions[a, 2], positions[b, 0], positions[b, 1], positions[b, 2],
        positions[c, 0], positions[c, 1], positions[c, 2], positions[d, 0], positions[d, 1], positions[d, 2])
    squared = 0.0
    for k in range(3):
        x = positions[a, k] + ps * (positions[b, k] - positions[a, k])
        y = positions[c, k] + pt * (positions[d, k] - positions[c, k])
        squared += (x - y) * (x - y)
    return ps, pt, squared


# The grids' cubes, in (search radius + longest edge): measured on a 40 x 40 cloth with 2 mm of noise
# (radius 1.63 cm, edges 2.5 cm): the edge pairs 9.5 ms at 0.75, 8.6 ms at 0.6, 10 ms at 0.4 and
# 27 ms at 0.9 and 1; the particle-triangle pairs 2.5 ms at 1, 2.3 ms at 0.75, 3.4 ms at 0.35.
CELL_TRIANGLES = 0.75
CELL_EDGES = 0.6


def search(positions: np.ndarray, rest: np.ndarray, triangles: np.ndarray, edges: np.ndarray, radius: float,
           rest_limit: float, longest: float) -> tuple[np.ndarray, ...]:
    """``self_contact.search`` compiled: its ``Nearest``'s fields in order. ``longest``: the
    longest edge [m] now."""
    cell = max(radius + longest, 1e-9)
    count = positions.shape[0]
    bound = np.full(count, radius)
    best, bary, squared = np.full(count, -1, dtype=np.int64), np.zeros((count, 3)), np.full(count, np.inf)
    point_triangle(positions, rest, triangles, radius, rest_limit, CELL_TRIANGLES * cell, bound, best, bary, squared)
    partner, parameters = np.full(edges.shape[0], -1, dtype=np.int64), np.zeros((edges.shape[0], 2))
    edge_bound = np.full(edges.shape[0], radius)
    edge_edge(positions, rest, edges, radius, rest_limit, longest, CELL_EDGES * cell, edge_bound, partner, parameters)
    _lower(bound, edges, edge_bound)
    return bound, best, bary, partner, parameters


@njit(cache=True)
def _lower(bound, edges, edge_bound):
    """Each particle's bound lowered to the nearest edge's distance of every edge at it."""
    for e in range(edges.shape[0]):
        for k in range(2):
            bound[edges[e, k]] = min(bound[edges[e, k]], edge_bound[e])


def warm_up() -> None:
    """Compile (or read from Numba's cache) on two triangles."""
    positions = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.2, 0.2, 0.01], [1.2, 0.2, 0.01],
                          [0.2, 1.2, 0.01]])
    triangles = np.array([[0, 1, 2], [3, 4, 5]], dtype=np.int64)
    edges = np.array([[0, 1], [0, 2], [1, 2], [3, 4], [3, 5], [4, 5]], dtype=np.int64)
    search(positions, positions, triangles, edges, 0.05, 0.01, 1.5)
