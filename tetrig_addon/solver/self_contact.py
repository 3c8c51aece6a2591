"""Self-contact of a Surface body: its particles against its own triangles and its edges against
its own edges, so a sheet that folds onto itself, torn or whole, never passes through itself.

Method: Offset Geometric Contact (Chen et al. 2025, "Offset Geometric Contact", ACM TOG 44(4)), in
this solver's substeps:

* **Contacts.** At the start of each substep, every particle within the search radius of a
  triangle that is not its own (the particle is not one of its corners) and every edge within it of
  an edge that shares no particle with it are found (``search``). Those closer than the contact
  distance at rest are not contacts (a fine sheet's neighbours); the rest become penalty rows on
  planes that ride on the other feature (``pairs``' rows, half the correction each side), two-sided:
  a particle's outside is the side it starts the substep on. An edge–edge pair acts on both ends of
  each edge, along the line between the closest points.
* **The bound that keeps it clean.** Each particle's distance b to the nearest feature it is not
  part of (over every pair touching it: as the particle, as a triangle's corner, as an edge's end;
  the search radius where none is nearer) bounds how far it may move in the substep relative to
  the body's mean motion: |Δxᵢ − Δx̄| ≤ γ·bᵢ with γ = ``BOUND_FRACTION`` < ½
  (``self_rows.Bound``). The distance between a point and a triangle, or two segments, changes by
  at most the largest difference of their corners' displacements, here < 2γ·b ≤ the distance: no
  two features that share no particle can meet within a substep, so none ever crosses another.
* **Searching again.** The bound holds for the whole way since a search, so a search serves the
  next substeps while every particle has used less than half of what it allows
  (``self_rows.every_substep``); OGC, too, searches again only where a bound is reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np
from scipy.spatial import cKDTree

from .. import colliders as collision
from ..colliders import nearby
from ..errors import TetRigInputError

# The contact distance of a Surface body against itself [m] (Blender Cloth's self distance is 0.015 m).
DEFAULT_SELF_DISTANCE = 0.01


@dataclass(frozen=True)
class SelfCollision:
    """A Surface body's self-contact.

    Attributes:
        distance: [m] > 0, the contact distance: folds rest this far apart.
        static_friction, kinetic_friction: Coulomb coefficients, 0 ≤ μ_k ≤ μ_s.
    """

    distance: float = DEFAULT_SELF_DISTANCE
    static_friction: float = collision.DEFAULT_STATIC_FRICTION
    kinetic_friction: float = collision.DEFAULT_KINETIC_FRICTION

    def __post_init__(self) -> None:
        if not (np.isfinite(self.distance) and self.distance > 0.0):
            raise TetRigInputError(f"The self-collision distance must be more than 0, not {self.distance}.")
        if not (np.isfinite(self.static_friction) and np.isfinite(self.kinetic_friction)
                and 0.0 <= self.kinetic_friction <= self.static_friction):
            raise TetRigInputError("Self-collision friction must be 0 or more, static at least sliding.")


# How far a particle may move in a substep, relative to the body's mean motion, as a fraction of
# its distance to the nearest feature it is not part of (module docstring): below ½, so two
# features' approach stays below their distance.
BOUND_FRACTION = 0.45
# A segment shorter than this squared [m²] is a point (``self_contact_kernel.TINY``).
TINY = 1e-24


@dataclass(frozen=True, eq=False)
class Nearest:
    """What a substep's search found (``search``): the pairs of features within the search radius of
    each other that are not neighbours at rest, reduced to what the substep needs.

    Attributes:
        bound: float64 [V] [m], each particle's distance to the nearest feature it is not part of,
            over the pairs it is in (as the particle, a triangle's corner, an edge's end); the search
            radius where it is in none.
        triangles: int64 [V], each particle's nearest triangle (−1: none); barycentric: float64
            [V, 3], the closest point's coordinates there.
        partners: int64 [E], each edge's nearest edge (−1: none); parameters: float64 [E, 2], the
            closest points' parameters on the edge and on its partner (a + s·(b − a)).
    """

    bound: np.ndarray
    triangles: np.ndarray
    barycentric: np.ndarray
    partners: np.ndarray
    parameters: np.ndarray


def edges_of(triangles: np.ndarray) -> np.ndarray:
    """The edges of ``triangles`` (int [T, 3]): int64 [E, 2], each once, its lower particle first,
    sorted."""
    pairs = np.sort(np.asarray(triangles, dtype=np.int64)[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    return np.unique(pairs, axis=0) if pairs.shape[0] else np.zeros((0, 2), dtype=np.int64)


def longest_edge(positions: np.ndarray, edges: np.ndarray) -> float:
    """[m] the longest of ``edges`` at ``positions`` (0 without edges)."""
    if edges.shape[0] == 0:
        return 0.0
    vector = positions[edges[:, 1]] - positions[edges[:, 0]]
    return float(np.sqrt(np.einsum("ek,ek->e", vector, vector).max()))


def search(positions: np.ndarray, rest: np.ndarray, triangles: np.ndarray, edges: np.ndarray, radius: float,
           rest_limit: float, compiled: ModuleType | None = None) -> Nearest:
    """Every particle closer than ``radius`` [m] to a triangle it is not a corner of, and every two
    edges closer than it that share no particle, at ``positions`` (float64 [V, 3] [m]; triangles
    int64 [T, 3], edges int64 [E, 2] from ``edges_of``), leaving out those nearer than
    ``rest_limit`` [m] at ``rest`` (float64 [V, 3] [m]; neighbours), as ``Nearest``. The NumPy
    reference uses SciPy's k-d tree; ``compiled`` (``self_contact_kernel``) a hashed grid, with the
    same numbers (ties go to the lower index)."""
    longest = longest_edge(positions, edges)
    if compiled is not None:
        return Nearest(*compiled.search(positions, rest, triangles, edges, radius, rest_limit, longest))
    count = positions.shape[0]
    bound = np.full(count, radius)
    vertex, triangle, bary, squared = _point_triangle_pairs(positions, triangles, radius)
    corners = triangles[triangle]
    apart = point_triangle_squared(rest, vertex, corners)[1] >= rest_limit * rest_limit
    vertex, triangle, corners = vertex[apart], triangle[apart], corners[apart]
    bary, squared = bary[apart], squared[apart]
    distance = np.sqrt(squared)
    for ends in (vertex, corners[:, 0], corners[:, 1], corners[:, 2]):
        np.minimum.at(bound, ends, distance)
    best, best_bary = np.full(count, -1, dtype=np.int64), np.zeros((count, 3))
    first = first_of_each(vertex, squared, triangle)
    best[vertex[first]], best_bary[vertex[first]] = triangle[first], bary[first]
    e, f, parameters, squared = _edge_pairs(positions, edges, radius, longest)
    apart = _segments(rest, edges[e], edges[f])[1] >= rest_limit * rest_limit
    e, f, parameters, squared = e[apart], f[apart], parameters[apart], squared[apart]
    distance = np.sqrt(squared)
    for ends in (edges[e, 0], edges[e, 1], edges[f, 0], edges[f, 1]):
        np.minimum.at(bound, ends, distance)
    partner, best_parameters = np.full(edges.shape[0], -1, dtype=np.int64), np.zeros((edges.shape[0], 2))
    own, other = np.concatenate([e, f]), np.concatenate([f, e])
    both = np.concatenate([parameters, parameters[:, ::-1]])
    first = first_of_each(own, np.concatenate([squared, squared]), other)
    partner[own[first]], best_parameters[own[first]] = other[first], both[first]
    return Nearest(bound, best, best_bary, partner, best_parameters)


def first_of_each(keys: np.ndarray, squared: np.ndarray, index: np.ndarray) -> np.ndarray:
    """For each key (int64 [n]), the row (int64 [k]) with the least ``squared`` (float64 [n]), then
    the lowest ``index`` (int64 [n]): the kernels' choice on a tie."""
    order = np.lexsort((index, squared, keys))
    _, first = np.unique(keys[order], return_index=True)
    return order[first]


def _point_triangle_pairs(positions: np.ndarray, triangles: np.ndarray,
                          radius: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(particle, triangle int64 [n], barycentric float64 [n, 3], squared distance float64 [n]) of
    every particle within ``radius`` of a triangle it is not a corner of (SciPy's k-d tree)."""
    if triangles.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros(0)
    corners = positions[triangles]
    centroid = corners.mean(axis=1)
    spread = np.sqrt(((corners - centroid[:, None]) ** 2).sum(axis=2)).max(axis=1)
    lists = cKDTree(positions).query_ball_point(centroid, spread + radius)
    sizes = np.array([len(found) for found in lists], dtype=np.int64)
    vertex = np.concatenate([np.asarray(found, dtype=np.int64) for found in lists])
    triangle = np.repeat(np.arange(len(triangles), dtype=np.int64), sizes)
    own = np.any(triangles[triangle] == vertex[:, None], axis=1)
    vertex, triangle = vertex[~own], triangle[~own]
    bary, squared = point_triangle_squared(positions, vertex, triangles[triangle])
    keep = squared < radius * radius
    return vertex[keep], triangle[keep], bary[keep], squared[keep]


def point_triangle_squared(positions: np.ndarray, vertex: np.ndarray,
                           corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(barycentric float64 [n, 3], squared distance float64 [n] [m²]) of each particle's (int64
    [n]) closest point on its triangle (corners int64 [n, 3]) at ``positions`` (float64 [V, 3]
    [m]), in the kernel's order (Ericson 2005, §5.1.5)."""
    a, b, c = positions[corners[:, 0]], positions[corners[:, 1]], positions[corners[:, 2]]
    bary = nearby._closest_barycentric(positions[vertex], a, b, c)
    return bary, _squared(positions[vertex], bary[:, 0, None] * a + bary[:, 1, None] * b + bary[:, 2, None] * c)


def _edge_pairs(positions: np.ndarray, edges: np.ndarray, radius: float,
                longest: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(edge, edge int64 [m] (the first the lower), parameters float64 [m, 2], squared distance
    float64 [m]) of every two edges within ``radius`` that share no particle (SciPy's k-d tree)."""
    middle = 0.5 * (positions[edges[:, 0]] + positions[edges[:, 1]])
    pairs = np.sort(cKDTree(middle).query_pairs(radius + longest, output_type="ndarray").astype(np.int64), axis=1)
    e, f = edges[pairs[:, 0]], edges[pairs[:, 1]]
    apart = (e[:, 0] != f[:, 0]) & (e[:, 0] != f[:, 1]) & (e[:, 1] != f[:, 0]) & (e[:, 1] != f[:, 1])
    pairs = pairs[apart]
    parameters, squared = _segments(positions, edges[pairs[:, 0]], edges[pairs[:, 1]])
    keep = squared < radius * radius
    return pairs[keep, 0], pairs[keep, 1], parameters[keep], squared[keep]


def _segments(positions: np.ndarray, e: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(parameters float64 [m, 2], squared distance float64 [m]) of each two segments' closest
    points (edges int64 [m, 2] each), in the kernel's order."""
    parameters = segment_parameters(positions[e[:, 0]], positions[e[:, 1]], positions[f[:, 0]], positions[f[:, 1]])
    closest_e, closest_f = _on_segment(positions, e, parameters[:, 0]), _on_segment(positions, f, parameters[:, 1])
    return parameters, _squared(closest_e, closest_f)


def _squared(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """|p − q|² per row, summed in the kernel's order."""
    d = p - q
    return (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2]


def _on_segment(positions: np.ndarray, edges: np.ndarray, s: np.ndarray) -> np.ndarray:
    """a + s·(b − a) for each edge (a, b)."""
    a, b = positions[edges[:, 0]], positions[edges[:, 1]]
    return a + s[:, None] * (b - a)


def segment_parameters(p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """(s, t) float64 [m, 2] of the closest points p + s·(q − p), r + t·(s − r) of each two
    segments (float64 [m, 3] each): Ericson 2005, *Real-Time Collision Detection*, §5.1.9, its
    branches as ``self_contact_kernel.segment_parameters``'."""
    d1, d2, w = q - p, s - r, p - r
    a, e = _dot(d1, d1), _dot(d2, d2)
    f, c, b = _dot(d2, w), _dot(d1, w), _dot(d1, d2)
    with np.errstate(invalid="ignore", divide="ignore"):
        denominator = a * e - b * b
        first = np.where(denominator > 0.0, np.clip((b * f - c * e) / denominator, 0.0, 1.0), 0.0)
        second = (b * first + f) / e
        low, high = second < 0.0, second > 1.0
        first = np.where(low, np.clip(-c / a, 0.0, 1.0), np.where(high, np.clip((b - c) / a, 0.0, 1.0), first))
        second = np.where(low, 0.0, np.where(high, 1.0, second))
        # degenerate segments, in the kernel's order of tests (the last assignment wins)
        point_e = e <= TINY
        first = np.where(point_e, np.clip(-c / a, 0.0, 1.0), first)
        second = np.where(point_e, 0.0, second)
        point_a = a <= TINY
        first = np.where(point_a, 0.0, first)
        second = np.where(point_a, np.clip(f / e, 0.0, 1.0), second)
        both = point_a & point_e
        first, second = np.where(both, 0.0, first), np.where(both, 0.0, second)
    return np.stack([first, second], axis=1)


def _dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x·y per row, summed in the kernel's order."""
    return (x[:, 0] * y[:, 0] + x[:, 1] * y[:, 1]) + x[:, 2] * y[:, 2]
