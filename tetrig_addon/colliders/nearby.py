"""The closest point of a deforming surface to points near it, for contacts between bodies.

``Surface`` is one body's triangles where its vertices are this frame. Unlike a ``Collider``
(exact, built for a collision object and its k-d trees over triangles, 20 ms for 10k triangles),
it is made in a few milliseconds for a mesh of tens of thousands of vertices, every frame:

* Candidates: a k-d tree over the surface's vertices (SciPy's ``cKDTree``) gives each query point
  its ``NEAREST_VERTICES`` nearest vertices within the reach (plus the longest edge); the closest
  point is sought on the triangles around them (their one-rings). On a mesh of even triangles the
  nearest point lies on a triangle around the nearest vertex (a vertex's Voronoi cell on the
  surface is covered by its one-ring); a long sliver can hide a closer point of a triangle around
  neither, which then goes unseen: a contact takes a nearby plane of the same surface.
* Closest point on a triangle: Ericson 2005, *Real-Time Collision Detection*, §5.1.5, by Voronoi
  regions, vectorized over (point, triangle) pairs.
* Sign: by the face normal where the closest point is inside a triangle, else by the surface's
  vertex normals blended at the closest point (area-weighted normals): outside when
  (p − closest) · n ≥ 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

# Nearest vertices whose one-rings are searched for each query point.
NEAREST_VERTICES = 2
# ... chosen among this many from the k-d tree, so that equal distances are broken by vertex index.
QUERY_VERTICES = 6
# A closest point whose barycentric coordinates are all above this is inside its triangle (the face
# normal signs it); below, it is on an edge or a corner (the blended vertex normals do).
INSIDE_BARYCENTRIC = 1e-9
# A point closer to the surface than this fraction of its longest edge is on it: its direction is
# round-off, so the face normal is used.
ON_SURFACE_RELATIVE = 1e-12


@dataclass(frozen=True, eq=False)  # eq=False: arrays have no single truth value
class Surface:
    """A triangle surface where its vertices are now, ready for ``closest`` queries.

    Attributes:
        vertices: float64 [vertex_count, 3] [m].
        triangles: int64 [triangle_count, 3], counterclockwise seen from outside.
        face_normals: float64 [triangle_count, 3], unit (0 for a triangle without area).
        vertex_normals: float64 [vertex_count, 3], unit area-weighted sums (0 where none).
        ring_offsets: int64 [vertex_count + 1]; vertex v's triangles are
            ring_triangles[ring_offsets[v]:ring_offsets[v + 1]].
        ring_triangles: int64 [3 · triangle_count].
        tree: cKDTree over the vertices that triangles use.
        tree_vertices: int64 [k], the vertex of each point of the tree.
        longest_edge: [m].
    """

    vertices: np.ndarray
    triangles: np.ndarray
    face_normals: np.ndarray
    vertex_normals: np.ndarray
    ring_offsets: np.ndarray
    ring_triangles: np.ndarray
    tree: cKDTree
    tree_vertices: np.ndarray
    longest_edge: float


def rings(triangles: np.ndarray, vertex_count: int) -> tuple[np.ndarray, np.ndarray]:
    """Every vertex's triangles (its one-ring): (offsets int64 [vertex_count + 1], triangles int64
    [3 · triangle_count]); vertex v's are triangles[offsets[v]:offsets[v + 1]], in order."""
    flat = np.asarray(triangles, dtype=np.int64).ravel()
    order = np.argsort(flat, kind="stable")
    offsets = np.zeros(vertex_count + 1, dtype=np.int64)
    np.cumsum(np.bincount(flat, minlength=vertex_count), out=offsets[1:])
    return offsets, (order // 3).astype(np.int64)


def surface(vertices: np.ndarray, triangles: np.ndarray,
            one_rings: tuple[np.ndarray, np.ndarray] | None = None) -> Surface:
    """The ``Surface`` of ``triangles`` (int [T, 3], T ≥ 1, outward) on ``vertices`` (float64 [V, 3]
    [m], finite); ``one_rings``: their ``rings`` if known (they do not change as the body moves)."""
    verts = np.asarray(vertices, dtype=np.float64)
    tris = np.asarray(triangles, dtype=np.int64)
    corners = verts[tris]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    length = np.linalg.norm(cross, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        face = np.where(length[:, None] > 0.0, cross / length[:, None], 0.0)
    summed = np.stack([np.bincount(tris.ravel(), np.repeat(cross[:, k], 3), minlength=len(verts))
                       for k in range(3)], axis=1)
    norm = np.linalg.norm(summed, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        vertex_normals = np.where(norm[:, None] > 0.0, summed / norm[:, None], 0.0)
    offsets, ring_triangles = rings(tris, len(verts)) if one_rings is None else one_rings
    used = np.flatnonzero(offsets[1:] > offsets[:-1])
    edges = np.linalg.norm(corners - corners[:, [1, 2, 0]], axis=2)
    return Surface(verts, tris, face, vertex_normals, offsets, ring_triangles,
                   cKDTree(verts[used]), used, float(edges.max(initial=0.0)))


def closest(surface: Surface, points: np.ndarray, reach: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The closest point of ``surface`` to each of ``points`` (float64 [n, 3] [m]) within ``reach``
    (float64 [n] [m]) of it. ``solver.pairs_kernel.closest`` is the same search compiled (a grid in
    place of the k-d tree): both take each point's ``NEAREST_VERTICES`` nearest vertices within
    reach plus the longest edge, nearest first and equal squared distances by vertex index.

    Returns:
        (found, triangle, barycentric, distance, normal) for the points with a surface point within
        reach: their indices int64 [k]; the triangle int64 [k]; the closest point's barycentric
        coordinates on it float64 [k, 3]; signed distance float64 [k] [m] (> 0 outside); the unit
        outward direction float64 [k, 3] (along p − closest, or the face normal on the surface).
    """
    pts = np.asarray(points, dtype=np.float64)
    reach = np.asarray(reach, dtype=np.float64)
    if pts.shape[0] == 0:
        return (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0),
                np.zeros((0, 3)))
    vertex = _nearest_vertices(surface, pts, reach + surface.longest_edge)
    found, triangle, bary, squared = _search_rings(surface, pts, reach, vertex)
    return (found, triangle, bary) + _signed(surface, pts[found], triangle, bary, squared)


def _nearest_vertices(surface: Surface, pts: np.ndarray, bounds: np.ndarray) -> np.ndarray:
    """Each point's ``NEAREST_VERTICES`` nearest vertices within its bound (float64 [n] [m]),
    nearest first and equal squared distances (summed as the compiled grid sums them) by vertex
    index: int64 [n, NEAREST_VERTICES], −1 where fewer are within reach. The k-d tree is asked for
    ``QUERY_VERTICES``, so that ties at the last place are broken as the compiled grid breaks them."""
    k = min(QUERY_VERTICES, surface.tree_vertices.shape[0])
    _, nearest = surface.tree.query(pts, k=k, distance_upper_bound=float(np.max(bounds)))
    nearest = nearest.reshape(len(pts), k)
    missing = nearest >= surface.tree_vertices.shape[0]
    vertex = surface.tree_vertices[np.where(missing, 0, nearest)]
    offset = pts[:, None, :] - surface.vertices[vertex]
    squared = offset[..., 0] * offset[..., 0] + offset[..., 1] * offset[..., 1] + offset[..., 2] * offset[..., 2]
    squared = np.where(missing | (squared > (bounds * bounds)[:, None]), np.inf, squared)
    vertex = np.where(np.isinf(squared), -1, vertex)
    order = np.lexsort((vertex, squared), axis=1)[:, :NEAREST_VERTICES]
    chosen = np.take_along_axis(vertex, order, axis=1)
    if chosen.shape[1] < NEAREST_VERTICES:
        chosen = np.hstack([chosen, np.full((len(pts), NEAREST_VERTICES - chosen.shape[1]), -1, dtype=np.int64)])
    return chosen.astype(np.int64)


def _search_rings(surface: Surface, pts: np.ndarray, reach: np.ndarray,
                  vertex: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``closest``'s search as arrays of (point, triangle) pairs: (found, triangle, barycentric,
    squared distance [m²]) of the points with a triangle within reach."""
    rows, which = np.nonzero(vertex >= 0)
    if rows.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0)
    ring = vertex[rows, which]
    starts, ends = surface.ring_offsets[ring], surface.ring_offsets[ring + 1]
    counts = ends - starts
    pair_point = np.repeat(rows, counts)
    within = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    pair_triangle = surface.ring_triangles[np.repeat(starts, counts) + within]
    corners = surface.vertices[surface.triangles[pair_triangle]]
    bary = _closest_barycentric(pts[pair_point], corners[:, 0], corners[:, 1], corners[:, 2])
    offset = pts[pair_point] - _blend(bary, corners)
    squared = offset[:, 0] * offset[:, 0] + offset[:, 1] * offset[:, 1] + offset[:, 2] * offset[:, 2]
    order = np.lexsort((squared, pair_point))  # per point, its nearest pair (the first of equals)
    first = np.ones(order.shape[0], dtype=bool)
    first[1:] = pair_point[order][1:] != pair_point[order][:-1]
    best = order[first]
    best = best[squared[best] < reach[pair_point[best]] ** 2]
    return pair_point[best], pair_triangle[best], bary[best], squared[best]


def _blend(bary: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Σ βᵢ·cornerᵢ (float64 [m, 3]), summed in the compiled kernel's order."""
    return (bary[:, 0, None] * corners[:, 0] + bary[:, 1, None] * corners[:, 1]) + bary[:, 2, None] * corners[:, 2]


def _signed(surface: Surface, pts: np.ndarray, triangle: np.ndarray, bary: np.ndarray,
            squared: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(signed distance [m], unit outward normal) of points whose closest point is ``bary`` on
    ``triangle`` (module docstring: the sign)."""
    corners = surface.vertices[surface.triangles[triangle]]
    offset = pts - _blend(bary, corners)
    length = np.sqrt(squared)
    inside = np.all(bary > INSIDE_BARYCENTRIC, axis=1)
    blended = _blend(bary, surface.vertex_normals[surface.triangles[triangle]])
    direction = np.where(inside[:, None], surface.face_normals[triangle], blended)
    sign = np.where(np.einsum("pk,pk->p", offset, direction) >= 0.0, 1.0, -1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = offset / length[:, None] * sign[:, None]
    on_surface = length <= ON_SURFACE_RELATIVE * surface.longest_edge
    return sign * length, np.where(on_surface[:, None], surface.face_normals[triangle], unit)


def _closest_barycentric(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Barycentric coordinates (float64 [m, 3]) of the closest point of each triangle (a, b, c) to
    each p (float64 [m, 3] each): Ericson 2005, §5.1.5, its Voronoi-region tests applied in
    reverse order so that the first one that holds wins."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = np.einsum("mk,mk->m", ab, ap), np.einsum("mk,mk->m", ac, ap)
    bp, cp = p - b, p - c
    d3, d4 = np.einsum("mk,mk->m", ab, bp), np.einsum("mk,mk->m", ac, bp)
    d5, d6 = np.einsum("mk,mk->m", ab, cp), np.einsum("mk,mk->m", ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(invalid="ignore", divide="ignore"):
        total = va + vb + vc
        v, w = vb / total, vc / total  # the face
        out = np.stack([1.0 - v - w, v, w], axis=1)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        t_ac = d2 / (d2 - d6)
        t_ab = d1 / (d1 - d3)
    cases = [
        ((va <= 0.0) & (d4 - d3 >= 0.0) & (d5 - d6 >= 0.0), lambda: np.stack([0.0 * t_bc, 1.0 - t_bc, t_bc], 1)),
        ((vb <= 0.0) & (d2 >= 0.0) & (d6 <= 0.0), lambda: np.stack([1.0 - t_ac, 0.0 * t_ac, t_ac], 1)),
        ((d6 >= 0.0) & (d5 <= d6), lambda: np.tile([0.0, 0.0, 1.0], (len(p), 1))),
        ((vc <= 0.0) & (d1 >= 0.0) & (d3 <= 0.0), lambda: np.stack([1.0 - t_ab, t_ab, 0.0 * t_ab], 1)),
        ((d3 >= 0.0) & (d4 <= d3), lambda: np.tile([0.0, 1.0, 0.0], (len(p), 1))),
        ((d1 <= 0.0) & (d2 <= 0.0), lambda: np.tile([1.0, 0.0, 0.0], (len(p), 1))),
    ]
    for holds, coordinates in cases:  # Ericson's order reversed: the last to hold (his first) wins
        out = np.where(holds[:, None], coordinates(), out)
    out = np.where(np.isfinite(out), out, np.array([1.0, 0.0, 0.0]))  # a triangle without area: its corner A
    return np.clip(out, 0.0, 1.0)
