"""Compiled contacts between bodies (Numba), loaded by ``pairs`` with the solver's kernel:

* ``closest``: ``colliders.nearby.closest`` without its k-d tree. The broad phase is a grid of
  cubes over the other body's vertices, rebuilt for each frame's search (issue 21's "spatial hash
  rebuilt with conservative bounds": the reach of each point is its frame's margin), searched ring
  by ring around each point for its nearest vertices; then, as the NumPy reference, the closest
  point on their one-rings (a loop per point instead of arrays of (point, triangle) pairs) and its
  sign, with the same formulas in the same order.
* ``pair_planes``: ``pairs.PairRows.planes`` for each substep; ``blend``: the contact points.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..geometry import bounding_box


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


@njit(cache=True)
def blend(indices, weights, positions):
    """p = Σₖ wₖ xₖ of every contact point (``pairs._contact_points``, its sums in its order):
    float64 [contact_count, 3] [m]."""
    out = np.empty((indices.shape[0], 3))
    for c in range(indices.shape[0]):
        for k in range(3):
            out[c, k] = (((weights[c, 0] * positions[indices[c, 0], k] + weights[c, 1] * positions[indices[c, 1], k])
                          + weights[c, 2] * positions[indices[c, 2], k]) + weights[c, 3] * positions[indices[c, 3], k])
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


# ---- the broad phase: a grid over the surface's vertices (issue 21, item 6) ----

@njit(cache=True)
def longest_edge(vertices, triangles):
    """The longest edge [m] of ``triangles`` (int64 [T, 3]) on ``vertices`` (float64 [V, 3])
    (``nearby.surface``'s, the same formula)."""
    longest = 0.0
    for t in range(triangles.shape[0]):
        for e in range(3):
            a, b = triangles[t, e], triangles[t, (e + 1) % 3]
            d0, d1 = vertices[a, 0] - vertices[b, 0], vertices[a, 1] - vertices[b, 1]
            d2 = vertices[a, 2] - vertices[b, 2]
            length = np.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
            if length > longest:
                longest = length
    return longest


@njit(cache=True)
def nearest_vertices(points, bounds, vertices, used, cell, count):
    """The ``count`` nearest of the vertices ``used`` (int64 [u]) to each point (float64 [n, 3] [m])
    within ``bounds`` (float64 [n] [m]), nearest first, equal distances by vertex index: int64
    [n, count], −1 where fewer are within reach. A grid of cubes of side ``cell`` [m] over the
    vertices is searched ring by ring of cubes around each point's, until no vertex outside the
    rings searched can be nearer (exact, as ``cKDTree.query`` of the NumPy reference)."""
    n, m = points.shape[0], used.shape[0]
    out = np.full((n, count), -1, dtype=np.int64)
    if m == 0:
        return out
    low = np.empty(3)
    size = np.empty(3, dtype=np.int64)
    for k in range(3):
        low[k] = vertices[used[0], k]
        high = low[k]
        for j in range(m):
            low[k] = min(low[k], vertices[used[j], k])
            high = max(high, vertices[used[j], k])
        size[k] = int((high - low[k]) / cell) + 1
    cells = np.empty(m, dtype=np.int64)
    starts = np.zeros(size[0] * size[1] * size[2] + 1, dtype=np.int64)
    for j in range(m):
        v = used[j]
        c = ((int((vertices[v, 0] - low[0]) / cell) * size[1] + int((vertices[v, 1] - low[1]) / cell)) * size[2]
             + int((vertices[v, 2] - low[2]) / cell))
        cells[j] = c
        starts[c + 1] += 1
    for c in range(starts.shape[0] - 1):
        starts[c + 1] += starts[c]
    filled = starts[:-1].copy()
    members = np.empty(m, dtype=np.int64)
    for j in range(m):  # vertices in index order within each cube
        members[filled[cells[j]]] = used[j]
        filled[cells[j]] += 1
    # A coarse grid of cubes as large as the farthest bound says in 27 looks that a point has no
    # vertex within reach (most points asked about have none: far inside or beside the body).
    coarse = max(cell, bounds.max())
    coarse_size = np.empty(3, dtype=np.int64)
    for k in range(3):
        coarse_size[k] = int((size[k] * cell) / coarse) + 1
    occupied = np.zeros(coarse_size[0] * coarse_size[1] * coarse_size[2], dtype=np.bool_)
    for j in range(m):
        v = used[j]
        occupied[(int((vertices[v, 0] - low[0]) / coarse) * coarse_size[1]
                  + int((vertices[v, 1] - low[1]) / coarse)) * coarse_size[2]
                 + int((vertices[v, 2] - low[2]) / coarse)] = True
    # The points are taken by groups of one home cube, whose non-empty cubes are listed once, ring
    # by ring (two bunnies' search, 13k points: 26 -> 16 ms against listing them for each point).
    near = np.zeros(n, dtype=np.bool_)
    homes = np.empty((n, 3), dtype=np.int64)
    keys = np.empty(n, dtype=np.int64)
    pad = int(coarse / cell) + 2  # a point with a vertex within reach is home within pad cubes of the grid
    for i in range(n):
        limit = bounds[i] * bounds[i]
        h0 = int(np.floor((points[i, 0] - low[0]) / coarse))
        h1 = int(np.floor((points[i, 1] - low[1]) / coarse))
        h2 = int(np.floor((points[i, 2] - low[2]) / coarse))
        for a in range(max(h0 - 1, 0), min(h0 + 1, coarse_size[0] - 1) + 1):
            for b in range(max(h1 - 1, 0), min(h1 + 1, coarse_size[1] - 1) + 1):
                for c in range(max(h2 - 1, 0), min(h2 + 1, coarse_size[2] - 1) + 1):
                    if occupied[(a * coarse_size[1] + b) * coarse_size[2] + c] and not near[i]:
                        near[i] = _cube_gap(points, i, low, coarse, a, b, c) <= limit
        for k in range(3):
            homes[i, k] = int(np.floor((points[i, k] - low[k]) / cell))
        keys[i] = -1  # no vertex within reach: not searched
        if near[i]:
            keys[i] = (((homes[i, 0] + pad) * (size[1] + 2 * pad) + homes[i, 1] + pad) * (size[2] + 2 * pad)
                       + homes[i, 2] + pad)
    order = np.argsort(keys, kind="mergesort")
    coordinates = np.empty((m, 3))  # cube by cube, so that a cube's are read in a row
    for e in range(m):
        for k in range(3):
            coordinates[e, k] = vertices[members[e], k]
    most = int(bounds.max() / cell) + 2
    listed = np.empty((min((2 * most + 1) ** 3, size[0] * size[1] * size[2]), 4), dtype=np.int64)
    ring_end = np.empty(most + 1, dtype=np.int64)
    best_d = np.empty(count)
    best_v = np.empty(count, dtype=np.int64)
    g = 0
    while g < n:
        h = g
        while h < n and keys[order[h]] == keys[order[g]]:
            h += 1
        if keys[order[g]] < 0:
            g = h
            continue
        first = order[g]
        h0, h1, h2 = homes[first, 0], homes[first, 1], homes[first, 2]
        rings_most = 0
        for q in range(g, h):
            rings_most = max(rings_most, int(bounds[order[q]] / cell) + 1)
        listed_count = 0
        for s in range(rings_most + 1):  # the non-empty cubes of ring s (those at s cubes from home)
            for a in range(max(h0 - s, 0), min(h0 + s, size[0] - 1) + 1):
                for b in range(max(h1 - s, 0), min(h1 + s, size[1] - 1) + 1):
                    edge_ab = abs(a - h0) == s or abs(b - h1) == s
                    for c in range(max(h2 - s, 0), min(h2 + s, size[2] - 1) + 1):
                        if not edge_ab and abs(c - h2) != s:  # inside the ring
                            continue
                        key = (a * size[1] + b) * size[2] + c
                        if starts[key] != starts[key + 1]:
                            listed[listed_count, 0], listed[listed_count, 1] = key, a
                            listed[listed_count, 2], listed[listed_count, 3] = b, c
                            listed_count += 1
            ring_end[s] = listed_count
        for q in range(g, h):
            i = order[q]
            for r in range(count):
                best_d[r] = np.inf
                best_v[r] = -1
            limit = bounds[i] * bounds[i]
            rings = int(bounds[i] / cell) + 1
            e0 = 0
            for s in range(rings + 1):
                for e in range(e0, ring_end[s]):
                    # the cube's nearest point: none of its vertices can be nearer
                    gap = _cube_gap(points, i, low, cell, listed[e, 1], listed[e, 2], listed[e, 3])
                    if gap > limit or gap > best_d[count - 1]:
                        continue
                    key = listed[e, 0]
                    for f in range(starts[key], starts[key + 1]):
                        d0 = points[i, 0] - coordinates[f, 0]
                        d1 = points[i, 1] - coordinates[f, 1]
                        d2 = points[i, 2] - coordinates[f, 2]
                        sq = d0 * d0 + d1 * d1 + d2 * d2
                        if sq > limit:
                            continue
                        v = members[f]
                        last = count - 1
                        if sq > best_d[last] or (sq == best_d[last] and v > best_v[last]):
                            continue
                        r = last
                        while r > 0 and (sq < best_d[r - 1] or (sq == best_d[r - 1] and v < best_v[r - 1])):
                            best_d[r] = best_d[r - 1]
                            best_v[r] = best_v[r - 1]
                            r -= 1
                        best_d[r] = sq
                        best_v[r] = v
                e0 = ring_end[s]
                # a vertex outside rings 0..s is at least s cubes away from the point (it is in its cube)
                reach = s * cell
                if best_v[count - 1] >= 0 and best_d[count - 1] <= reach * reach:
                    break
                if reach > bounds[i]:
                    break
            for r in range(count):
                out[i, r] = best_v[r]
        g = h
    return out


@njit(inline="always")
def _cube_gap(points, i, low, cell, a, b, c):
    """The squared distance [m²] from point i to the cube (a, b, c) of the grid of side ``cell`` from
    ``low``, padded by 1e-9 of a cube (a vertex rounded into it stays in it)."""
    gap = 0.0
    for k, index in ((0, a), (1, b), (2, c)):
        side = low[k] + index * cell
        g = max(side - points[i, k] - 1e-9 * cell, points[i, k] - (side + cell) - 1e-9 * cell, 0.0)
        gap += g * g
    return gap


@njit(cache=True)
def _cross(vertices, a, b, c, out):
    """(b − a) × (c − a) into out [3] (``np.cross``'s formula)."""
    e0, e1, e2 = vertices[b, 0] - vertices[a, 0], vertices[b, 1] - vertices[a, 1], vertices[b, 2] - vertices[a, 2]
    f0, f1, f2 = vertices[c, 0] - vertices[a, 0], vertices[c, 1] - vertices[a, 1], vertices[c, 2] - vertices[a, 2]
    out[0] = e1 * f2 - e2 * f1
    out[1] = e2 * f0 - e0 * f2
    out[2] = e0 * f1 - e1 * f0


@njit(cache=True)
def signed(points, triangle, bary, squared, vertices, triangles, ring_offsets, ring_triangles, longest,
           inside_barycentric, on_surface_relative):
    """``nearby._signed`` one point at a time: (signed distance float64 [k] [m], unit outward
    normal float64 [k, 3]) of points whose closest point is ``bary`` on ``triangle``; the vertex
    normals are summed over each corner's one-ring in triangle order, as ``nearby.surface``'s."""
    k = points.shape[0]
    distance = np.empty(k)
    normal = np.empty((k, 3))
    cross = np.empty(3)
    face = np.empty(3)
    blended = np.empty(3)
    offset = np.empty(3)
    for i in range(k):
        t = triangle[i]
        _cross(vertices, triangles[t, 0], triangles[t, 1], triangles[t, 2], cross)
        length = np.sqrt(cross[0] * cross[0] + cross[1] * cross[1] + cross[2] * cross[2])
        for d in range(3):
            face[d] = cross[d] / length if length > 0.0 else 0.0
            offset[d] = points[i, d] - ((bary[i, 0] * vertices[triangles[t, 0], d]
                                         + bary[i, 1] * vertices[triangles[t, 1], d])
                                        + bary[i, 2] * vertices[triangles[t, 2], d])
            blended[d] = 0.0
        inside = bary[i, 0] > inside_barycentric and bary[i, 1] > inside_barycentric and bary[i, 2] > inside_barycentric
        if inside:
            for d in range(3):
                blended[d] = face[d]
        else:
            for j in range(3):
                v = triangles[t, j]
                s0 = s1 = s2 = 0.0
                for r in range(ring_offsets[v], ring_offsets[v + 1]):
                    u = ring_triangles[r]
                    _cross(vertices, triangles[u, 0], triangles[u, 1], triangles[u, 2], cross)
                    s0 += cross[0]
                    s1 += cross[1]
                    s2 += cross[2]
                norm = np.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
                if norm > 0.0:
                    s0, s1, s2 = s0 / norm, s1 / norm, s2 / norm
                else:
                    s0 = s1 = s2 = 0.0
                if j == 0:
                    blended[0], blended[1], blended[2] = bary[i, 0] * s0, bary[i, 0] * s1, bary[i, 0] * s2
                else:
                    blended[0] += bary[i, j] * s0
                    blended[1] += bary[i, j] * s1
                    blended[2] += bary[i, j] * s2
        along = offset[0] * blended[0] + offset[1] * blended[1] + offset[2] * blended[2]
        sign = 1.0 if along >= 0.0 else -1.0
        gap = np.sqrt(squared[i])
        distance[i] = sign * gap
        if gap <= on_surface_relative * longest:
            for d in range(3):
                normal[i, d] = face[d]
        else:
            for d in range(3):
                normal[i, d] = offset[d] / gap * sign
    return distance, normal


# The grid's cubes are at least this many times the surface's longest edge, and at least this
# fraction of the farthest reach asked for (a few rings of cubes then cover any reach).
CELL_EDGES = 2.0
CELL_REACH = 0.25
# ... and large enough that there are at most this many cubes per vertex.
CELLS_PER_VERTEX = 8.0


def closest(points: np.ndarray, reach: np.ndarray, vertices: np.ndarray, triangles: np.ndarray,
            rings: tuple[np.ndarray, np.ndarray], nearest_count: int, inside_barycentric: float,
            on_surface_relative: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``colliders.nearby.closest`` compiled, without its k-d tree: the nearest vertices come from
    a grid rebuilt for each call (``nearest_vertices``), the closest point from their one-rings
    (``closest_on_rings``), its sign and normal from the triangle (``signed``). Arguments: the
    query points float64 [n, 3] [m] and their reach float64 [n] [m]; the surface's vertices float64
    [V, 3] [m], triangles int64 [T, 3] and one-rings (``nearby.rings``); ``nearby``'s constants.
    Returns ``nearby.closest``'s (found, triangle, barycentric, distance, normal)."""
    offsets, ring_triangles = rings
    used = np.flatnonzero(offsets[1:] > offsets[:-1]).astype(np.int64)
    if points.shape[0] == 0 or used.shape[0] == 0:
        return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0),
                np.zeros((0, 3)))
    longest = longest_edge(vertices, triangles)
    bounds = reach + longest
    low, high = bounding_box(vertices)  # (of all: only the cubes' size depends on it)
    span = high - low
    cell = max(CELL_EDGES * longest, CELL_REACH * float(bounds.max()), 1e-9)
    cell = max(cell, float(np.prod(span + cell) / (CELLS_PER_VERTEX * used.shape[0])) ** (1.0 / 3.0))
    nearest = nearest_vertices(points, bounds, vertices, used, cell, nearest_count)
    triangle, bary, squared = closest_on_rings(points, reach, nearest, vertices, triangles, offsets, ring_triangles)
    found = np.flatnonzero(triangle >= 0)
    triangle, bary, squared = triangle[found], bary[found], squared[found]
    distance, normal = signed(points[found], triangle, bary, squared, vertices, triangles, offsets, ring_triangles,
                              longest, inside_barycentric, on_surface_relative)
    return found, triangle, bary, distance, normal


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
    blend(indices, weights, vertices)
    closest(np.array([[0.2, 0.2, 0.1]]), np.array([1.0]), vertices, np.array([[0, 1, 2]], dtype=np.int64),
            (np.array([0, 1, 2, 3], dtype=np.int64), np.array([0, 0, 0], dtype=np.int64)), 2, 1e-9, 1e-12)
