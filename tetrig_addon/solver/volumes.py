"""Tet volume energy: E = ½·k·(6V − 6V₀)² on every tet (springs and PBD modes).

k = K_v/(36·V₀) with the volume modulus K_v of ``settings.spring_moduli``, so a tet stores
½·K_v·(V − V₀)²/V₀. Unlike edge springs it pushes an inverted tet back to positive volume (seed
problem 3). 6V is linear in each corner: for corner j with opposite face (a, b, c) (``model.TET_FACES``)
∂(6V)/∂xⱼ = g = (x_b − x_a) × (x_c − x_a) and 6V = g·(xⱼ − x_a), so the corner's Hessian block
k·g gᵀ is exact (Müller, Ten Minute Physics 10, for the gradient).

``force`` is written once for both backends (arrays in NumPy, scalars in the compiled kernel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Model
from .settings import MODE_CONTINUUM, SimSettings, spring_moduli


@dataclass(frozen=True)
class VolumePlan:
    """The tet volume energies of one step.

    Attributes:
        active: whether they are solved (springs and PBD modes with ``use_volume``).
        stiffness: float64 [tet_count] [N/m⁵], k = K_v/(36·V₀).
        six_rest_volumes: float64 [tet_count] [m³], 6·V₀.
    """

    active: bool
    stiffness: np.ndarray
    six_rest_volumes: np.ndarray


def plan(model: Model, settings: SimSettings) -> VolumePlan:
    """The volume energies for the settings (none for the continuum model, which has its own)."""
    active = settings.use_volume and settings.mode != MODE_CONTINUUM and model.tet_count > 0
    modulus = spring_moduli(settings)[1] if active else 0.0
    return VolumePlan(active, modulus / (36.0 * model.rest_volumes), 6.0 * model.rest_volumes)


def force(a0, a1, a2, b0, b1, b2, c0, c1, c2, j0, j1, j2, six_rest, k):
    """Force on corner j of a tet and its Hessian block, from its position j and the opposite face
    (a, b, c) [m]. Returns (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂): f = −k·C·g, H = k·g gᵀ,
    C = 6V − 6V₀."""
    e0, e1, e2 = b0 - a0, b1 - a1, b2 - a2
    q0, q1, q2 = c0 - a0, c1 - a1, c2 - a2
    g0 = e1 * q2 - e2 * q1
    g1 = e2 * q0 - e0 * q2
    g2 = e0 * q1 - e1 * q0
    s = -k * (g0 * (j0 - a0) + g1 * (j1 - a1) + g2 * (j2 - a2) - six_rest)
    return (s * g0, s * g1, s * g2,
            k * g0 * g0, k * g0 * g1, k * g0 * g2, k * g1 * g1, k * g1 * g2, k * g2 * g2)


def tet_force(x0, x1, x2, x3, y0, y1, y2, y3, z0, z1, z2, z3, m0, m1, m2, m3, six_rest, k):
    """Force and Hessian of a tet's volume energy on a uniform translation of the corners with
    mask mⱼ = 1 (free) or 0: −k·C·G and k·G Gᵀ with G = Σⱼ mⱼ·∂(6V)/∂xⱼ, from the corners' x, y, z.
    Returns (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂)."""
    e10, e11, e12 = x1 - x0, y1 - y0, z1 - z0
    e20, e21, e22 = x2 - x0, y2 - y0, z2 - z0
    e30, e31, e32 = x3 - x0, y3 - y0, z3 - z0
    g10, g11, g12 = e21 * e32 - e22 * e31, e22 * e30 - e20 * e32, e20 * e31 - e21 * e30  # e2 × e3
    g20, g21, g22 = e31 * e12 - e32 * e11, e32 * e10 - e30 * e12, e30 * e11 - e31 * e10  # e3 × e1
    g30, g31, g32 = e11 * e22 - e12 * e21, e12 * e20 - e10 * e22, e10 * e21 - e11 * e20  # e1 × e2
    c = e10 * g10 + e11 * g11 + e12 * g12 - six_rest
    # corner 0's gradient is −(g1 + g2 + g3)
    a0 = (m1 - m0) * g10 + (m2 - m0) * g20 + (m3 - m0) * g30
    a1 = (m1 - m0) * g11 + (m2 - m0) * g21 + (m3 - m0) * g31
    a2 = (m1 - m0) * g12 + (m2 - m0) * g22 + (m3 - m0) * g32
    s = -k * c
    return (s * a0, s * a1, s * a2,
            k * a0 * a0, k * a0 * a1, k * a0 * a2, k * a1 * a1, k * a1 * a2, k * a2 * a2)


def corner_gradients(x0, x1, x2, x3, y0, y1, y2, y3, z0, z1, z2, z3):
    """∂(6V)/∂xⱼ of a tet for its four corners from their x, y, z: 12 values, x of corners 0-3,
    then y, then z (the order of ``continuum.deformation_gradient``'s arguments); the global step's
    (``global_solve``). The same cross products as ``tet_force``, which sums them under a mask
    (each formula spells its arithmetic out: the kernel inlines them one by one)."""
    e10, e11, e12 = x1 - x0, y1 - y0, z1 - z0
    e20, e21, e22 = x2 - x0, y2 - y0, z2 - z0
    e30, e31, e32 = x3 - x0, y3 - y0, z3 - z0
    g10, g11, g12 = e21 * e32 - e22 * e31, e22 * e30 - e20 * e32, e20 * e31 - e21 * e30  # e2 × e3
    g20, g21, g22 = e31 * e12 - e32 * e11, e32 * e10 - e30 * e12, e30 * e11 - e31 * e10  # e3 × e1
    g30, g31, g32 = e11 * e22 - e12 * e21, e12 * e20 - e10 * e22, e10 * e21 - e11 * e20  # e1 × e2
    return (-(g10 + g20 + g30), g10, g20, g30, -(g11 + g21 + g31), g11, g21, g31,
            -(g12 + g22 + g32), g12, g22, g32)
