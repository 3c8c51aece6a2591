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
# A surface body's element is degenerate when the square of its own frequency, ω², is more than
# OUTLIER_RATIO times the median of its kind's; it is then softened to ω²Δt² = RESOLVED_RATIO
# (``conditioning``). Measured (UV spheres of 0.5 m radius, 10 kg/m², stretch 3e3 N/m, shear
# 3e2 N/m, bending 0.01 N·m, pressure 1e5 Pa, 240 substeps/s, one sweep, dropped on the ground): a
# bound on every spring and hinge of 20·m/Δt² (ω²Δt² = 40 for a spring between equal masses) kept
# 64×40 and 128×80 at 1.0-1.1 m tall; 50·m/Δt² let 64×40 bounce to 1.4 m; the springs alone or
# the hinges alone let 128×80 stretch to 1.9 m and 3.7 m. A bound on all elements would also
# soften fine, well-shaped meshes that do not need it: a 160,000-point Fibonacci sphere, its
# springs at up to 250·m/Δt² (median 162), rests stable unchanged, and the median test leaves it
# alone. A sheet's corner point has a quarter of an inner point's mass: its elements stay below 4.
OUTLIER_RATIO = 4.0
RESOLVED_RATIO = 40.0


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
        structural = model.edge_kinds == EDGE_STRUCTURAL
        moduli = np.where(structural, surface.stretch, surface.shear)
        k = moduli * model.edge_areas / model.rest_lengths**2
        ratios = k * inverse_mass_sum(model, model.edges, np.ones(model.edges.shape))
        factor = np.where(structural, conditioning(ratios, structural, sim_dt),
                          conditioning(ratios, ~structural, sim_dt))
        return EdgePlan(True, k * factor)
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


def inverse_mass_sum(model: Model, points: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Σⱼ wⱼ/mⱼ over each element's points (kinematic ones, moved by no element, count 0): for an
    element with the Gauss-Newton Hessian k·g gᵀ, |gⱼ|² = wⱼ, the only non-zero eigenvalue of
    M⁻¹H is k·Σⱼ wⱼ/mⱼ, the square of the element's own angular frequency ω² (a spring: g = (u, −u),
    ω² = k·(1/mᵢ + 1/mⱼ)).

    Args:
        points: int [element_count, corners], the elements' points.
        weights: float64 [element_count, corners] [1 for a spring, |∂θ/∂xⱼ|² for a hinge].

    Returns:
        float64 [element_count] [weights/kg].
    """
    return np.einsum("ek,ek->e", weights, model.inverse_masses[points])


def conditioning(ratios: np.ndarray, kind: np.ndarray, sim_dt: float) -> np.ndarray:
    """The factor softening each degenerate element of a surface body: for an element of ``kind``
    whose ω² is above both ``OUTLIER_RATIO`` times the median of its kind's and
    ``RESOLVED_RATIO``/Δt², the factor that brings it down to ``RESOLVED_RATIO``/Δt²; 1 otherwise.

    ω² (``inverse_mass_sum``) is the square of the element's own angular frequency, and ω²Δt² its
    stiffness against its points' inertia m/Δt². A sliver triangle or a thin quad (a UV sphere's
    poles: ring edges ten times shorter than the rows between them, joining points of a tenth of
    the mass of the equator's) makes it hundreds of times the mesh's typical value, in one
    direction only. Block descent with one sweep per substep (Chen et al. 2024, "Vertex Block
    Descent", ACM TOG 43(4); Macklin et al. 2019, "Small Steps in Physics Simulation") leaves such
    an element far from converged and the residual returns as velocity: the body gains energy
    (measured: a 64×40 UV sphere under pressure dropped on the ground stretched from 1 m to 2.9 m
    tall and flew off). Softening the degenerate elements to a frequency the step resolves
    conditions them as explicit codes condition their smallest elements by selective mass scaling
    (raising their critical step), here without adding mass or weight. The mesh's well-shaped
    elements, near their median, keep their stiffness however fine the mesh or stiff the
    material, and so does every element below the bound (more substeps soften less, as 1/Δt²).

    Args:
        ratios: float64 [element_count] [1/s²], ω² of every element (0 for an element with no
            free point: never softened).
        kind: bool [element_count], the elements of one kind (their median is taken together).
        sim_dt: the substep Δt [s], > 0.

    Returns:
        float64 [element_count] in (0, 1]: the factor for each element's stiffness.
    """
    rated = kind & (ratios > 0.0)
    if not rated.any():
        return np.ones(ratios.shape[0])
    bound = RESOLVED_RATIO / (sim_dt * sim_dt)
    degenerate = rated & (ratios > OUTLIER_RATIO * float(np.median(ratios[rated]))) & (ratios > bound)
    return np.where(degenerate, bound / np.where(degenerate, ratios, 1.0), 1.0)


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
