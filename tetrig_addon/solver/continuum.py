"""Continuum (finite-element) tets: corotated linear elasticity.

Energy per tet V₀·Ψ(F), Ψ = μ·‖F − R‖²_F + λ/2·(det F − 1)² (Stomakhin et al. 2012, "Energetically
Consistent Invertible Elasticity"), F = Σⱼ xⱼ bⱼᵀ the deformation gradient with bⱼ the rows of
D_m⁻¹ (b₀ = −b₁ − b₂ − b₃) and R the rotation of F. Corner j gets the force −V₀·P·bⱼ with
P = 2μ(F − R) + λ(J − 1)·cof F (∂‖F − R(F)‖²/∂F = 2(F − R) exactly) and the Hessian block
V₀·(2μ‖bⱼ‖²·I + λ·(cof F bⱼ)(cof F bⱼ)ᵀ): the λ term is exact for one corner (J is linear in each
corner), the μ term leaves out how R turns with F (as ARAP and Projective Dynamics do), which
keeps the block positive definite; the force stays exact, so the rest state is an equilibrium.

R is found by "A Robust Method to Extract the Rotational Part of Deformations" (Müller, Bender,
Chentanez, Macklin 2016): a few fixed-point steps from the tet's previous rotation (a quaternion in
``State.rotations``), which also handles inverted tets (R stays a rotation, so F − R pushes back).

The functions are written once for both backends (arrays in NumPy, scalars in the kernel), so
they call nothing but NumPy's elementwise functions (the kernel compiles each one on its own).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy import abs as absolute, cos, maximum, sin, sqrt  # elementwise: the kernel swaps them for math's scalar ones (``kernel._scalar``)

from .model import Model
from .settings import MODE_CONTINUUM, SimSettings, lame_parameters

# Rotation-extraction steps per evaluation of a tet, each from the last estimate (warm started
# across substeps, so a few suffice; Müller et al. 2016 report convergence in 1-3 for smooth motion).
ROTATION_STEPS = 2
# Guards of Müller et al.'s update ω = Σ rᵢ×aᵢ / (|Σ rᵢ·aᵢ| + ε) and of a zero rotation angle.
ROTATION_EPSILON = 1e-9
_TINY = float(np.finfo(np.float64).tiny)


@dataclass(frozen=True)
class ContinuumPlan:
    """The continuum tets of one step.

    Attributes:
        active: whether the mode is the continuum model.
        mu_volumes: float64 [tet_count] [N·m], μ·V₀.
        lambda_volumes: float64 [tet_count] [N·m], λ·V₀.
        shape_vectors: float64 [tet_count, 4, 3] [1/m], bⱼ for each corner (empty when inactive).
    """

    active: bool
    mu_volumes: np.ndarray
    lambda_volumes: np.ndarray
    shape_vectors: np.ndarray


def plan(model: Model, settings: SimSettings) -> ContinuumPlan:
    """The continuum tets' coefficients (zero outside the continuum mode)."""
    if settings.mode != MODE_CONTINUUM or model.tet_count == 0:
        zero = np.zeros(model.tet_count)
        return ContinuumPlan(False, zero, zero, np.zeros((0, 4, 3)))
    rows = model.inverse_rest_shapes  # [t, 3, 3]: row j−1 is bⱼ
    vectors = np.concatenate([-rows.sum(1, keepdims=True), rows], axis=1)
    mu, lam = lame_parameters(settings.youngs_modulus, settings.volume_stiffness)
    volumes = absolute(model.rest_volumes)
    return ContinuumPlan(True, mu * volumes, lam * volumes, vectors)


def deformation_gradient(x0, x1, x2, x3, y0, y1, y2, y3, z0, z1, z2, z3, b):
    """F = Σⱼ xⱼ bⱼᵀ from the corners' coordinates (x, y, z of corners 0-3) and ``b`` =
    (b₀ₓ, b₀ᵧ, b₀z, b₁ₓ, ...) (12 values). Returns F row by row (9 values)."""
    (b00, b01, b02, b10, b11, b12, b20, b21, b22, b30, b31, b32) = b
    return (x0 * b00 + x1 * b10 + x2 * b20 + x3 * b30,
            x0 * b01 + x1 * b11 + x2 * b21 + x3 * b31,
            x0 * b02 + x1 * b12 + x2 * b22 + x3 * b32,
            y0 * b00 + y1 * b10 + y2 * b20 + y3 * b30,
            y0 * b01 + y1 * b11 + y2 * b21 + y3 * b31,
            y0 * b02 + y1 * b12 + y2 * b22 + y3 * b32,
            z0 * b00 + z1 * b10 + z2 * b20 + z3 * b30,
            z0 * b01 + z1 * b11 + z2 * b21 + z3 * b31,
            z0 * b02 + z1 * b12 + z2 * b22 + z3 * b32)


def rotation_matrix(qw, qx, qy, qz):
    """The rotation matrix (row by row, 9 values) of a unit quaternion."""
    return (1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qw * qz), 2.0 * (qx * qz + qw * qy),
            2.0 * (qx * qy + qw * qz), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qw * qx),
            2.0 * (qx * qz - qw * qy), 2.0 * (qy * qz + qw * qx), 1.0 - 2.0 * (qx * qx + qy * qy))


def extract_rotation(f, qw, qx, qy, qz):
    """``ROTATION_STEPS`` steps of Müller et al. 2016 from the quaternion q towards the rotation of
    F (9 values, row by row); returns the new unit quaternion (w, x, y, z)."""
    (a00, a01, a02, a10, a11, a12, a20, a21, a22) = f
    for _ in range(ROTATION_STEPS):
        # R(q), as ``rotation_matrix`` (repeated: the kernel inlines this function alone)
        r00, r01, r02 = 1.0 - 2.0 * (qy * qy + qz * qz), 2.0 * (qx * qy - qw * qz), 2.0 * (qx * qz + qw * qy)
        r10, r11, r12 = 2.0 * (qx * qy + qw * qz), 1.0 - 2.0 * (qx * qx + qz * qz), 2.0 * (qy * qz - qw * qx)
        r20, r21, r22 = 2.0 * (qx * qz - qw * qy), 2.0 * (qy * qz + qw * qx), 1.0 - 2.0 * (qx * qx + qy * qy)
        # ω = Σ over columns c of r_c × a_c, divided by |Σ r_c · a_c| + ε
        o0 = (r10 * a20 - r20 * a10) + (r11 * a21 - r21 * a11) + (r12 * a22 - r22 * a12)
        o1 = (r20 * a00 - r00 * a20) + (r21 * a01 - r01 * a21) + (r22 * a02 - r02 * a22)
        o2 = (r00 * a10 - r10 * a00) + (r01 * a11 - r11 * a01) + (r02 * a12 - r12 * a02)
        dot = (r00 * a00 + r10 * a10 + r20 * a20 + r01 * a01 + r11 * a11 + r21 * a21
               + r02 * a02 + r12 * a12 + r22 * a22)
        scale = 1.0 / (absolute(dot) + ROTATION_EPSILON)
        o0, o1, o2 = o0 * scale, o1 * scale, o2 * scale
        angle = sqrt(o0 * o0 + o1 * o1 + o2 * o2)
        s = sin(0.5 * angle) / maximum(angle, _TINY)
        dw, dx, dy, dz = cos(0.5 * angle), o0 * s, o1 * s, o2 * s
        # q ← dq ⊗ q, renormalized
        nw = dw * qw - dx * qx - dy * qy - dz * qz
        nx = dw * qx + dx * qw + dy * qz - dz * qy
        ny = dw * qy - dx * qz + dy * qw + dz * qx
        nz = dw * qz + dx * qy - dy * qx + dz * qw
        norm = 1.0 / sqrt(nw * nw + nx * nx + ny * ny + nz * nz)
        qw, qx, qy, qz = nw * norm, nx * norm, ny * norm, nz * norm
    return qw, qx, qy, qz


def stress(f, r, mu_v, lam_v):
    """(V₀·P (9 values, row by row), cof F (9 values), λV₀) for F, its rotation R, μV₀ and λV₀:
    V₀·P = 2μV₀·(F − R) + λV₀·(J − 1)·cof F."""
    (f00, f01, f02, f10, f11, f12, f20, f21, f22) = f
    (r00, r01, r02, r10, r11, r12, r20, r21, r22) = r
    # cof F: column c is the cross product of the other two columns of F (∂J/∂F)
    c00 = f11 * f22 - f21 * f12
    c10 = f21 * f02 - f01 * f22
    c20 = f01 * f12 - f11 * f02
    c01 = f12 * f20 - f22 * f10
    c11 = f22 * f00 - f02 * f20
    c21 = f02 * f10 - f12 * f00
    c02 = f10 * f21 - f20 * f11
    c12 = f20 * f01 - f00 * f21
    c22 = f00 * f11 - f10 * f01
    h = lam_v * (f00 * c00 + f10 * c10 + f20 * c20 - 1.0)
    m = 2.0 * mu_v
    p = (m * (f00 - r00) + h * c00, m * (f01 - r01) + h * c01, m * (f02 - r02) + h * c02,
         m * (f10 - r10) + h * c10, m * (f11 - r11) + h * c11, m * (f12 - r12) + h * c12,
         m * (f20 - r20) + h * c20, m * (f21 - r21) + h * c21, m * (f22 - r22) + h * c22)
    return p, (c00, c01, c02, c10, c11, c12, c20, c21, c22)


def corner_force(p, cof, mu_v, lam_v, v0, v1, v2):
    """Force −V₀·P·v and Hessian block V₀(2μ‖v‖²I + λ(cof F v)(cof F v)ᵀ) for the shape vector
    v = bⱼ of a corner (or a sum of them). Returns (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂)."""
    (p00, p01, p02, p10, p11, p12, p20, p21, p22) = p
    (c00, c01, c02, c10, c11, c12, c20, c21, c22) = cof
    g0 = c00 * v0 + c01 * v1 + c02 * v2
    g1 = c10 * v0 + c11 * v1 + c12 * v2
    g2 = c20 * v0 + c21 * v1 + c22 * v2
    d = 2.0 * mu_v * (v0 * v0 + v1 * v1 + v2 * v2)
    return (-(p00 * v0 + p01 * v1 + p02 * v2), -(p10 * v0 + p11 * v1 + p12 * v2),
            -(p20 * v0 + p21 * v1 + p22 * v2),
            d + lam_v * g0 * g0, lam_v * g0 * g1, lam_v * g0 * g2,
            d + lam_v * g1 * g1, lam_v * g1 * g2, d + lam_v * g2 * g2)
