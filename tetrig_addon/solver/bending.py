"""Dihedral bending of surface bodies: E = ½·k·(θ − θ₀)² on every hinge (two triangles sharing an
edge), θ the signed angle between their normals.

A hinge (a, b, c, d) has the shared edge a → b, triangle (a, b, c) with normal n₁ = e × (c − a) and
triangle (b, a, d) with normal n₂ = (d − a) × e, e = b − a; θ = atan2((n₁ × n₂)·ê, n₁·n₂), zero when
flat. Its gradient (Bridson, Marino, Fedkiw 2003, "Simulation of Clothing with Folds and
Wrinkles", §4): ∂θ/∂c = −|e|·n₁/|n₁|², ∂θ/∂d = −|e|·n₂/|n₂|², and for the edge's ends, by the lever
rule of the wings' projections t_c = (c − a)·e/|e|², t_d = (d − a)·e/|e|² on the edge,
∂θ/∂a = −(1 − t_c)·∂θ/∂c − (1 − t_d)·∂θ/∂d, ∂θ/∂b = −t_c·∂θ/∂c − t_d·∂θ/∂d. Each corner's Hessian
block is the Gauss-Newton k·g gᵀ (positive semi-definite, as block descent needs; Chen et al. 2024).

k = bending·|ē|²/(Ā₁ + Ā₂) (rest edge length and triangle areas): on a regular triangle mesh bent
to a cylinder of curvature κ, Σ |ē|²/(Ā₁+Ā₂)·θ² = ∫κ² dA (measured within 4 % on right and
equilateral triangles; Grinspun et al. 2003, "Discrete Shells", use 3|ē|²/(Ā₁+Ā₂) for the same
sum up to their constant), so ``bending`` is the flexural rigidity [N·m].

The functions are written once for both backends (arrays in NumPy, scalars in the compiled kernel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy import arctan2, floor, maximum, sqrt  # elementwise: the kernel swaps them for math's scalar ones (``kernel._scalar``)

from .edges import conditioning, inverse_mass_sum
from .model import Model, TINY
from .settings import SurfaceMaterial


@dataclass(frozen=True)
class BendingPlan:
    """The hinges of one step.

    Attributes:
        active: whether there are hinges with a stiffness.
        stiffness: float64 [hinge_count] [N·m], k of each hinge.
    """

    active: bool
    stiffness: np.ndarray


def plan(model: Model, surface: SurfaceMaterial | None, sim_dt: float) -> BendingPlan:
    """The hinges' stiffness for the material (none without a surface material or hinges) and the
    substep ``sim_dt`` [s]: k = bending·weight, softened on degenerate hinges (sliver triangles,
    whose gradients grow as 1/height) by ``edges.conditioning``, with ω² = k·Σⱼ|∂θ/∂xⱼ|²/mⱼ over the
    corners at rest (``edges.inverse_mass_sum``: the Gauss-Newton Hessian against their inertia)."""
    if surface is None or model.hinges.shape[0] == 0 or surface.bending <= 0.0:
        return BendingPlan(False, np.zeros(model.hinges.shape[0]))
    k = surface.bending * model.hinge_weights
    p = model.rest_positions[model.hinges]
    grads = np.stack(angle_gradients(*(p[:, j, a] for j in range(4) for a in range(3)))[1:], axis=1)
    squares = np.einsum("hkc,hkc->hk", grads.reshape(-1, 4, 3), grads.reshape(-1, 4, 3))
    ratios = k * inverse_mass_sum(model, model.hinges, squares)
    return BendingPlan(True, k * conditioning(ratios, np.ones(k.shape[0], dtype=bool), sim_dt))


def angle_gradients(a0, a1, a2, b0, b1, b2, c0, c1, c2, d0, d1, d2):
    """The dihedral angle θ [rad] of hinge (a, b, c, d) and its gradient at each corner [1/m].

    Returns (θ, ∂θ/∂a (3 values), ∂θ/∂b, ∂θ/∂c, ∂θ/∂d): 13 values.
    """
    e0, e1, e2 = b0 - a0, b1 - a1, b2 - a2
    p0, p1, p2 = c0 - a0, c1 - a1, c2 - a2
    q0, q1, q2 = d0 - a0, d1 - a1, d2 - a2
    m0, m1, m2 = e1 * p2 - e2 * p1, e2 * p0 - e0 * p2, e0 * p1 - e1 * p0  # n₁ = e × (c − a)
    n0, n1, n2 = q1 * e2 - q2 * e1, q2 * e0 - q0 * e2, q0 * e1 - q1 * e0  # n₂ = (d − a) × e
    ee = e0 * e0 + e1 * e1 + e2 * e2
    length = sqrt(ee)
    inv_length = 1.0 / maximum(length, TINY)
    cross0, cross1, cross2 = m1 * n2 - m2 * n1, m2 * n0 - m0 * n2, m0 * n1 - m1 * n0
    theta = arctan2((cross0 * e0 + cross1 * e1 + cross2 * e2) * inv_length, m0 * n0 + m1 * n1 + m2 * n2)
    sc = -length / maximum(m0 * m0 + m1 * m1 + m2 * m2, TINY)
    sd = -length / maximum(n0 * n0 + n1 * n1 + n2 * n2, TINY)
    gc0, gc1, gc2 = sc * m0, sc * m1, sc * m2
    gd0, gd1, gd2 = sd * n0, sd * n1, sd * n2
    inv_ee = 1.0 / maximum(ee, TINY)
    tc = (p0 * e0 + p1 * e1 + p2 * e2) * inv_ee
    td = (q0 * e0 + q1 * e1 + q2 * e2) * inv_ee
    return (theta,
            (tc - 1.0) * gc0 + (td - 1.0) * gd0, (tc - 1.0) * gc1 + (td - 1.0) * gd1,
            (tc - 1.0) * gc2 + (td - 1.0) * gd2,
            -tc * gc0 - td * gd0, -tc * gc1 - td * gd1, -tc * gc2 - td * gd2,
            gc0, gc1, gc2, gd0, gd1, gd2)


def angle_change(theta, rest):
    """θ − θ₀ wrapped to [−π, π) [rad]: a hinge folded through ±π is the nearest way round."""
    delta = theta - rest
    return delta - 2.0 * np.pi * floor((delta + np.pi) / (2.0 * np.pi))


def force(delta, k, g0, g1, g2):
    """Force −k·(θ − θ₀)·g on a corner with gradient g = ∂θ/∂x and its Gauss-Newton Hessian block
    k·g gᵀ, from ``delta`` = θ − θ₀ (``angle_change``). Returns (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁,
    H₁₂, H₂₂) [N, N/m]."""
    s = -k * delta
    return (s * g0, s * g1, s * g2, k * g0 * g0, k * g0 * g1, k * g0 * g2, k * g1 * g1, k * g1 * g2,
            k * g2 * g2)

