"""Tet-edge springs: E = ½·k·(|xᵢ − xⱼ| − l₀)² on every unique tet edge.

Springs mode: k = E_s·V_e/l₀² with the spring modulus E_s of ``settings.spring_moduli`` (a uniform
strain ε stores ½·E_s·ε² per unit volume whatever the cage resolution). PBD mode (the seed's Chaos
spring, article 000, ``FPBDRigidSpringConstraints``: Δ = k·(|p0−p1| − d)/(w0+w1) per substep):
a projection that corrects the share k of the error is a spring of stiffness k/(1 − k)·m_e/Δt²,
m_e = 1/(w₀ + w₁), which is what this module gives it, so the seed's stiffness keeps its meaning
(and its dependence on the substep count).

``force`` is written once for both backends: NumPy calls it on arrays of incidences, the compiled
kernel inlines it on scalars (so it uses only arithmetic, ``sqrt`` and ``maximum``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy import maximum, sqrt  # elementwise: the kernel swaps them for math's scalar ones (``kernel._scalar``)

from .model import EDGE_STRUCTURAL, Model
from .settings import MODE_PBD, MODE_SPRINGS, SimSettings, SurfaceMaterial, spring_moduli

# Edges shorter than this [m] have no direction: their direction is taken as d / MIN_EDGE_LENGTH.
MIN_EDGE_LENGTH = 1e-12
# PBD stiffness 1 (a hard projection) as a spring: this many times m_e/Δt².
PBD_MAX_RATIO = 1e4


@dataclass(frozen=True)
class EdgePlan:
    """The edge springs of one step.

    Attributes:
        active: whether the mode has edge springs at all (the continuum model has none).
        stiffness: float64 [edge_count] [N/m].
    """

    active: bool
    stiffness: np.ndarray


def plan(model: Model, settings: SimSettings, sim_dt: float,
         surface: SurfaceMaterial | None = None) -> EdgePlan:
    """The edge springs' stiffness for the settings' mode and the substep length ``sim_dt`` [s];
    a surface body's (``model.edge_kinds``) from its ``surface`` material: k = modulus·A/l₀² with
    the stretch modulus on structural springs and the shear modulus on shear springs.

    Raises:
        ValueError: a surface body without its material.
    """
    if model.edge_kinds.shape[0]:
        if surface is None:
            raise ValueError("a surface body's springs need its SurfaceMaterial")
        moduli = np.where(model.edge_kinds == EDGE_STRUCTURAL, surface.stretch, surface.shear)
        return EdgePlan(True, moduli * model.edge_areas / model.rest_lengths**2)
    if settings.mode == MODE_SPRINGS:
        modulus = spring_moduli(settings)[0]
        return EdgePlan(True, modulus * model.edge_volumes / model.rest_lengths**2)
    if settings.mode == MODE_PBD:
        k = settings.stiffness
        ratio = PBD_MAX_RATIO if k >= 1.0 else min(k / (1.0 - k), PBD_MAX_RATIO)
        w = model.inverse_masses[model.edges].sum(1)
        edge_mass = np.where(w > 0.0, 1.0 / np.where(w > 0.0, w, 1.0), 0.0)
        return EdgePlan(True, ratio * edge_mass / (sim_dt * sim_dt))
    return EdgePlan(False, np.zeros(model.edge_count))


def force(d0, d1, d2, rest, k):
    """Force on end i of a spring and its Hessian block ∂²E/∂xᵢ², from d = xᵢ − xⱼ [m].

    Returns (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂) [N, N/m]: f = −k(L − l₀)·u, u = d/L, and
    H = k·(u uᵀ + max(0, 1 − l₀/L)·(I − u uᵀ)), the transverse term clamped at zero for a
    compressed spring so the block stays positive semi-definite (Chen et al. 2024, VBD §4).
    """
    length = sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    inv_length = 1.0 / maximum(length, MIN_EDGE_LENGTH)
    u0, u1, u2 = d0 * inv_length, d1 * inv_length, d2 * inv_length
    s = -k * (length - rest)
    b = k * maximum(1.0 - rest * inv_length, 0.0)
    a = k - b
    return (s * u0, s * u1, s * u2,
            b + a * u0 * u0, a * u0 * u1, a * u0 * u2, b + a * u1 * u1, a * u1 * u2, b + a * u2 * u2)
