"""Control points that follow a deformed mesh: where the cage's rest shape is when an armature,
a lattice or shape keys pose the mesh it was bound to.

Each control point follows the vertices around it by an affine moving-least-squares fit (Schaefer,
McPhail and Warren, "Image deformation using moving least squares", SIGGRAPH 2006, the affine
deformation, here in 3-D): the affine map that best carries its ``FOLLOW_NEIGHBOURS`` nearest rest
vertices (weighted by 1/d²) to their posed positions, applied to the control point. A
neighbourhood too flat to tell one direction (vertices on a plane) would let that direction
collapse; the fit is regularized toward the neighbourhood's rotation (the polar decomposition of
its cross-covariance, as in shape matching: Müller et al., "Meshless deformations based on shape
matching", SIGGRAPH 2005), so a rigid motion of the vertices carries every control point rigidly
and the rest pose gives back the rest control points, both exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from ..errors import TetRigInputError

# Vertices each control point follows (fewer when the mesh has fewer).
FOLLOW_NEIGHBOURS = 32
# Weight of the rotation in a fit, relative to the neighbourhood's spread: small, so that a
# neighbourhood spread in all directions follows its vertices' stretch and shear.
FLAT_REGULARIZATION = 1e-3


@dataclass(frozen=True)
class Follow:
    """The precomputed part of the fit of every control point (see the module docstring).

    Attributes:
        neighbours: int64 [control_point_count, k], the vertices each control point follows.
        weights: float64 [control_point_count, k], their normalized 1/d² weights.
        rest_offsets: float64 [control_point_count, k, 3] [m], p̂ = rest vertex − weighted centre.
        reach: float64 [control_point_count, 3] [1/m], a = (S + εI)⁻¹ (control point − centre).
        eps: float64 [control_point_count] [m²], ε of each fit.
    """

    neighbours: np.ndarray
    weights: np.ndarray
    rest_offsets: np.ndarray
    reach: np.ndarray
    eps: np.ndarray

    def posed(self, vertices: np.ndarray) -> np.ndarray:
        """The control points for posed ``vertices`` float [vertex_count, 3] [m], in the same space
        as the rest vertices: float64 [control_point_count, 3] [m].

        f(v) = (v − p*)(S + εI)⁻¹(C + εR) + q*, with C = Σ wⱼ p̂ⱼᵀ q̂ⱼ and R the rotation of C.
        """
        q = np.asarray(vertices, dtype=np.float64)[self.neighbours]  # [Q, k, 3]
        centre = np.einsum("qk,qkj->qj", self.weights, q)
        q_hat = q - centre[:, None, :]
        cross = np.einsum("qk,qki,qkj->qij", self.weights, self.rest_offsets, q_hat)  # C [Q, 3, 3]
        u, _, vt = np.linalg.svd(cross)
        # the nearest rotation: flip the last singular direction where U Vᵀ would mirror
        sign = np.where(np.linalg.det(u @ vt) < 0.0, -1.0, 1.0)
        u[:, :, 2] *= sign[:, None]
        rotation = u @ vt
        fitted = np.einsum("qj,qjk->qk", self.reach, cross + self.eps[:, None, None] * rotation)
        return fitted + centre


def follow(rest_vertices: np.ndarray, control_points: np.ndarray) -> Follow:
    """The affine moving-least-squares fit of every control point to its nearest vertices.

    Args:
        rest_vertices: float [vertex_count, 3] [m], the vertices the cage was bound to (≥ 4).
        control_points: float [control_point_count, 3] [m], the cage at rest, same space.

    Returns:
        A ``Follow``; ``follow(...).posed(rest_vertices)`` is ``control_points`` to rounding.

    Raises:
        TetRigInputError: fewer than 4 vertices.
    """
    p = np.asarray(rest_vertices, dtype=np.float64)
    v = np.asarray(control_points, dtype=np.float64)
    if p.shape[0] < 4:
        raise TetRigInputError("A posed mesh needs at least 4 vertices to carry its cage.")
    k = min(FOLLOW_NEIGHBOURS, p.shape[0])
    distance, neighbours = cKDTree(p).query(v, k=k)
    neighbours = neighbours.reshape(v.shape[0], k)
    distance = distance.reshape(v.shape[0], k)
    scale = max(float(np.ptp(p, axis=0).max()), 1e-12)
    # 1/d² weights, floored so that a control point on a vertex does not divide by zero
    w = 1.0 / np.maximum(distance, 1e-6 * scale) ** 2
    w /= w.sum(1, keepdims=True)
    centre = np.einsum("qk,qkj->qj", w, p[neighbours])  # p* [Q, 3]
    hat = p[neighbours] - centre[:, None, :]  # p̂ [Q, k, 3]
    spread = np.einsum("qk,qki,qkj->qij", w, hat, hat)  # S = Σ w p̂ᵀp̂ [Q, 3, 3]
    eps = FLAT_REGULARIZATION * np.trace(spread, axis1=1, axis2=2) / 3.0 + 1e-12 * scale ** 2
    regularized = spread + eps[:, None, None] * np.eye(3)
    reach = np.linalg.solve(regularized, (v - centre)[:, :, None])[:, :, 0]
    return Follow(neighbours=neighbours, weights=w, rest_offsets=hat, reach=reach, eps=eps)
