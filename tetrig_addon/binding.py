"""Binding: each mesh vertex → its containing tet and 4 barycentric weights (seed 000).

The deformed vertex is the seed's vertex-shader blend, x = Σₖ wₖ · q[iₖ] (``blend``). Barycentric
coordinates are affine, so the blend reproduces the rest vertex exactly (up to rounding) even for a
vertex that lies in no tet and is bound to its nearest tet with slightly negative weights.

Source: seed article 000; Müller, "Ten Minute Physics" tutorial 12 (skinning by tet + barycentrics).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import Delaunay, QhullError, cKDTree

from .errors import TetRigInputError

# A vertex counts as inside a tet when its smallest barycentric weight is at least this (−ε lets
# points on shared faces and on the hull surface count as inside despite rounding).
INSIDE_TOLERANCE = -1e-9
# Candidate tets examined per vertex: those whose centroids are nearest. Containment in a tet is
# decided exactly; the candidate list only has to contain the right tet, which it does for any
# vertex closer to its tet's centroid than to the centroids of this many other tets.
CANDIDATE_TETS = 16
# Vertices found in no candidate are tested against this many more before taking the best one.
FALLBACK_CANDIDATE_TETS = 64


@dataclass(frozen=True)
class Binding:
    """Per-vertex binding to a cage.

    Attributes:
        tet_index: int32 [vertex_count], the tet each vertex is bound to.
        control_point_indices: int32 [vertex_count, 4], = tets[tet_index] (the seed's
            ``vertex_bones``).
        weights: float64 [vertex_count, 4], barycentric weights, each row sums to 1 (the seed's
            ``weights``).
        outside_count: vertices in no tet, bound to the nearest tet (weights slightly outside [0, 1]).
    """

    tet_index: np.ndarray
    control_point_indices: np.ndarray
    weights: np.ndarray
    outside_count: int = 0

    @property
    def vertex_count(self) -> int:
        return int(self.tet_index.shape[0])


def barycentric_transforms(control_points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Per-tet inverse edge matrices for barycentric coordinates.

    Args:
        control_points: float [control_point_count, 3] [m].
        tets: int [tet_count, 4], non-degenerate.

    Returns:
        float64 [tet_count, 3, 3] [1/m]: for a point p, λ₁₂₃ = T @ (p − q₀), λ₀ = 1 − Σλ₁₂₃.
    """
    p = np.asarray(control_points, dtype=np.float64)[tets]
    edges = np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2)
    return np.linalg.inv(edges)


def _weights(points: np.ndarray, origin: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """Barycentric weights of points [..., 3] in tets given by origin [..., 3] and T [..., 3, 3]."""
    lam = np.einsum("...ij,...j->...i", transform, points - origin)
    return np.concatenate([1.0 - lam.sum(-1, keepdims=True), lam], axis=-1)


def _delaunay_candidates(verts: np.ndarray, cps: np.ndarray, tets: np.ndarray,
                         fallback: np.ndarray) -> np.ndarray:
    """For each vertex, our tet equal to the Delaunay simplex of the control points containing it,
    or ``fallback`` where there is none (outside, a dropped sliver, or a non-Delaunay cage)."""
    try:
        tri = Delaunay(cps)
    except QhullError:
        return fallback
    q = np.int64(cps.shape[0])

    def keys(t: np.ndarray) -> np.ndarray:
        t = np.sort(t.astype(np.int64), axis=1)
        return ((t[:, 0] * q + t[:, 1]) * q + t[:, 2]) * q + t[:, 3]

    own = keys(tets)
    order = np.argsort(own)
    simplex = tri.find_simplex(verts)
    found = simplex >= 0
    key = keys(tri.simplices[np.where(found, simplex, 0)])
    pos = np.clip(np.searchsorted(own[order], key), 0, own.size - 1)
    match = found & (own[order][pos] == key)
    return np.where(match, order[pos], fallback)


def bind(vertices: np.ndarray, control_points: np.ndarray, tets: np.ndarray) -> Binding:
    """Bind every vertex to a tet of the cage.

    Args:
        vertices: float [vertex_count, 3] [m], rest positions, same space as the control points.
        control_points: float [control_point_count, 3] [m].
        tets: int [tet_count, 4], positively oriented, non-degenerate.

    Returns:
        A ``Binding`` for every vertex (none left unbound).

    Raises:
        TetRigInputError: vertices with non-finite coordinates, or a cage without tets.
    """
    verts = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    tets = np.asarray(tets)
    if tets.shape[0] == 0:
        raise TetRigInputError("The cage has no tets.")
    if not np.all(np.isfinite(verts)):
        raise TetRigInputError("The mesh has vertices with NaN or infinite coordinates.")
    cps = np.asarray(control_points, dtype=np.float64)
    transform = barycentric_transforms(cps, tets)
    origin = cps[tets[:, 0]]
    centroids = cps[tets].mean(1)
    tree = cKDTree(centroids)

    k = min(CANDIDATE_TETS, tets.shape[0])
    _, cand = tree.query(verts, k=k)
    cand = cand.reshape(verts.shape[0], k)
    # Large tets (near the hull) can have their centroid farther away than k smaller ones; the
    # Delaunay tet containing the vertex, when it is one of ours, is added as a candidate.
    cand = np.concatenate([cand, _delaunay_candidates(verts, cps, tets, cand[:, 0])[:, None]], axis=1)
    w = _weights(verts[:, None, :], origin[cand], transform[cand])  # [n, k + 1, 4]
    score = w.min(-1)  # > tolerance ⇔ inside; otherwise how far outside
    best = np.argmax(score, axis=1)
    rows = np.arange(verts.shape[0])
    tet_index = cand[rows, best]
    weights = w[rows, best]
    inside = score[rows, best] >= INSIDE_TOLERANCE

    missing = np.flatnonzero(~inside)
    if missing.size:
        k2 = min(FALLBACK_CANDIDATE_TETS, tets.shape[0])
        _, cand2 = tree.query(verts[missing], k=k2)
        cand2 = cand2.reshape(missing.size, k2)
        w2 = _weights(verts[missing, None, :], origin[cand2], transform[cand2])
        score2 = w2.min(-1)
        best2 = np.argmax(score2, axis=1)
        r2 = np.arange(missing.size)
        tet_index[missing] = cand2[r2, best2]
        weights[missing] = w2[r2, best2]
        inside[missing] = score2[r2, best2] >= INSIDE_TOLERANCE

    return Binding(
        tet_index=tet_index.astype(np.int32),
        control_point_indices=tets[tet_index].astype(np.int32),
        weights=weights,
        outside_count=int(np.count_nonzero(~inside)),
    )


def blend(control_points: np.ndarray, indices: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The seed's vertex-shader blend: x_v = Σₖ w_vk · q[i_vk].

    Args:
        control_points: float [control_point_count, 3] [m], current control-point positions.
        indices: int [vertex_count, 4].
        weights: float [vertex_count, 4].

    Returns:
        float64 [vertex_count, 3] [m].
    """
    q = np.asarray(control_points, dtype=np.float64)
    return np.einsum("vk,vkj->vj", weights, q[indices])


def pinned_control_points(indices: np.ndarray, weights: np.ndarray, vertex_pinned: np.ndarray,
                          control_point_count: int) -> np.ndarray:
    """Control points to pin so that every pinned vertex stays exactly where it is.

    A vertex is a blend of its 4 control points, so it holds still only if all of them do: every
    control point that a pinned vertex uses (with a non-zero weight) is pinned.

    Args:
        indices: int [vertex_count, 4].
        weights: float [vertex_count, 4].
        vertex_pinned: bool [vertex_count].
        control_point_count: Q.

    Returns:
        bool [control_point_count].
    """
    used = (np.asarray(weights) != 0.0) & np.asarray(vertex_pinned, dtype=bool)[:, None]
    pinned = np.zeros(control_point_count, dtype=bool)
    pinned[np.asarray(indices)[used]] = True
    return pinned
