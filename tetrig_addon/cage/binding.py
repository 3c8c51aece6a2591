"""Binding: each mesh vertex → its containing tet and 4 barycentric weights (seed 000).

The deformed vertex is the seed's vertex-shader blend, x = Σₖ wₖ · q[iₖ] (``blend``). Barycentric
coordinates are affine, so the blend reproduces the rest vertex exactly (up to rounding) even for a
vertex that lies in no tet and is bound to its nearest tet with slightly negative weights.

Source: seed article 000; Müller, "Ten Minute Physics" tutorial 12 (skinning by tet + barycentrics).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.spatial import cKDTree

from ..errors import TetRigInputError
from .locate import INSIDE_TOLERANCE, TetSearch

# Vertices in no tet are bound to the best of this many tets with the nearest centroids.
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


def _weights(points: np.ndarray, origin: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """Barycentric weights of points [..., 3] in tets given by origin [..., 3] and T [..., 3, 3]."""
    lam = np.einsum("...ij,...j->...i", transform, points - origin)
    return np.concatenate([1.0 - lam.sum(-1, keepdims=True), lam], axis=-1)


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
    search = TetSearch(cps, tets)
    transform, origin = search.transform, search.origin

    tet_index, weights, score = search.locate(verts)
    inside = score >= INSIDE_TOLERANCE

    missing = np.flatnonzero(~inside)
    if missing.size:
        # In no tet (a gap left by a dropped sliver): the best of the tets with the nearest
        # centroids, i.e. the one needing the least extrapolation.
        tree = cKDTree(cps[tets].mean(1))
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


def control_point_goal_weights(indices: np.ndarray, weights: np.ndarray, vertex_goal: np.ndarray,
                               control_point_count: int) -> np.ndarray:
    """Goal weights of the control points from per-vertex goal weights.

    A control point takes the average goal weight of the vertices it carries, weighted by their
    barycentric weights (positive ones only); every control point a vertex of goal weight 1 uses
    gets 1, so that vertex follows its goal exactly (as ``pinned_control_points``). Control points
    no vertex uses keep 0.

    Args:
        indices: int [vertex_count, 4]; weights: float [vertex_count, 4].
        vertex_goal: float [vertex_count] in [0, 1].
        control_point_count: Q.

    Returns:
        float64 [control_point_count] in [0, 1].
    """
    idx = np.asarray(indices).ravel()
    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None).ravel()
    goal = np.repeat(np.clip(np.asarray(vertex_goal, dtype=np.float64), 0.0, 1.0), 4)
    total = np.bincount(idx, weights=w, minlength=control_point_count)
    out = np.bincount(idx, weights=w * goal, minlength=control_point_count) / np.where(total > 0, total, 1.0)
    exact = pinned_control_points(indices, weights, np.asarray(vertex_goal) >= 1.0, control_point_count)
    return np.where(exact, 1.0, out)



def blend_matrix(indices: np.ndarray, weights: np.ndarray, control_point_count: int) -> csr_matrix:
    """The blend as a sparse matrix B [vertex_count, control_point_count] with B @ q = blend(q).

    Built once per binding; a sparse product is several times faster than gathering
    q[indices] every frame (measured in benchmarks/).

    Args:
        indices: int [vertex_count, 4].
        weights: float [vertex_count, 4] (stored as float64).
        control_point_count: Q.

    Returns:
        scipy.sparse.csr_matrix, float64, 4 entries per row (duplicate indices are summed).
    """
    n = indices.shape[0]
    return csr_matrix((np.asarray(weights, dtype=np.float64).ravel(),
                       np.asarray(indices, dtype=np.int64).ravel(), np.arange(0, 4 * n + 1, 4)),
                      shape=(n, control_point_count))
