"""Pressure in a closed surface body: an ideal gas, p·V = p₀·V₀, with the same p₀ outside.

The enclosed volume V = Σ over triangles (a, b, c) of a·(b × c)/6 is linear in each point, with
gradient gᵢ = Σ (b × c)/6 over the point's triangles (cyclic order, so (b, c) follow i). The gas and
the air outside store E(V) = p₀·(V − V₀) − p₀V₀·ln(V/V₀): E' = p₀ − p₀V₀/V (the pressure difference,
zero at rest), E'' = p₀V₀/V². Squeezed by ΔV the gas pushes back as a bulk modulus of p₀ would,
and ever harder as V shrinks (it never collapses).

Solved in two parts each substep (a global constraint does not suit point-by-point block descent,
which would let the first point solved take the whole correction):

* a Newton step of the incremental potential along the direction dᵢ = wᵢ·gᵢ (wᵢ = 1/mᵢ), over the
  inertia and the gas: s = −(Σ(xᵢ − yᵢ)·gᵢ/Δt² + E'·W)/(W/Δt² + E''·W²), W = Σ wᵢ|gᵢ|²; for
  E = ½k(V − V₀)² and x = y this is the XPBD update of a global volume constraint with compliance
  1/k (Macklin, Müller, Chentanez 2016; Müller et al. 2007, "Position Based Dynamics", §4.4 for
  the closed-mesh constraint);
* in the sweeps every point feels the gas's force −E'·gᵢ (E' of the substep's volume after that
  step) and its Hessian block E''·gᵢgᵢᵀ, so a body at rest under load is an exact equilibrium.

The formulas are written once for both backends (arrays in NumPy, scalars in the compiled kernel).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy import maximum

from .model import Model
from .settings import SurfaceMaterial

# The gas is taken at no less than this share of its rest volume (a body squashed flat or turned
# inside out still gets a finite, outward push).
MIN_VOLUME_SHARE = 1e-3


@dataclass(frozen=True)
class PressurePlan:
    """The gas of one step.

    Attributes:
        active: whether the body is closed and has a pressure.
        pressure: p₀ [Pa].
        rest_volume: V₀ [m³], > 0 when active.
    """

    active: bool
    pressure: float
    rest_volume: float


def plan(model: Model, surface: SurfaceMaterial | None) -> PressurePlan:
    """The gas for the material: active when it has a pressure and the model encloses a volume."""
    active = surface is not None and surface.pressure > 0.0 and model.rest_enclosed_volume > 0.0
    return PressurePlan(active, surface.pressure if active and surface is not None else 0.0,
                        model.rest_enclosed_volume if active else 0.0)


def gas(volume, p0, v0):
    """(E'(V) [Pa], E''(V) [Pa/m³]) of the gas at ``volume`` [m³], from p₀ [Pa] and V₀ [m³]."""
    v = maximum(volume, MIN_VOLUME_SHARE * v0)
    return p0 - p0 * v0 / v, p0 * v0 / (v * v)


def corner_gradient(b0, b1, b2, c0, c1, c2):
    """∂V/∂xᵢ from one triangle (i, b, c) of the point: (b × c)/6 [m²] (3 values)."""
    return (b1 * c2 - b2 * c1) / 6.0, (b2 * c0 - b0 * c2) / 6.0, (b0 * c1 - b1 * c0) / 6.0


def step_length(inertia_slope, e1, e2, w, h2):
    """Length s of the Newton step along dᵢ = wᵢgᵢ, from Σ(xᵢ − yᵢ)·gᵢ [m³], E', E'', W [m⁴/kg] and
    Δt² [s²] (see the module); 0 when no point can move."""
    curvature = w / h2 + e2 * w * w
    return -(inertia_slope / h2 + e1 * w) / maximum(curvature, 1e-300) * (w > 0.0)


def enclosed_volume(positions: np.ndarray, triangles: np.ndarray) -> float:
    """V = Σ a·(b × c)/6 [m³] of a closed, consistently oriented triangle mesh.

    Args:
        positions: float64 [point_count, 3] [m].
        triangles: int [triangle_count, 3], outward (counter-clockwise seen from outside).
    """
    p = positions[triangles]
    return float(np.einsum("ij,ij->", p[:, 0], np.cross(p[:, 1], p[:, 2])) / 6.0)


def volume_gradients(positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """gᵢ = ∂V/∂xᵢ of every point: float64 [point_count, 3] [m²] (zero for points in no triangle)."""
    p = positions[triangles]
    out = np.zeros_like(positions)
    for k in range(3):
        b, c = p[:, (k + 1) % 3], p[:, (k + 2) % 3]
        g = np.stack(corner_gradient(b[:, 0], b[:, 1], b[:, 2], c[:, 0], c[:, 1], c[:, 2]), axis=1)
        np.add.at(out, triangles[:, k], g)
    return out


def force(e1, e2, g0, g1, g2):
    """The gas's force −E'·g and Hessian block E''·g gᵀ on a point (or a body's translation) whose
    volume gradient is g [m²]. Returns (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂) [N, N/m]."""
    return (-e1 * g0, -e1 * g1, -e1 * g2, e2 * g0 * g0, e2 * g0 * g1, e2 * g0 * g2, e2 * g1 * g1,
            e2 * g1 * g2, e2 * g2 * g2)
