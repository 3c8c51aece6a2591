"""The time integrator of a substep: implicit Euler, or BDF2 on the history a state carries.

Implicit (backward) Euler, the Vertex Block Descent paper's integrator, damps a swing of angular
frequency ω by a factor 1/√(1 + (ωΔt)²) per step: at 240 steps/s a 3.6 Hz bar loses two thirds of
its swing in a second, a 10 Hz ear in a quarter of one (issue 24). The second-order backward
differentiation formula (BDF2) is as stable (A- and L-stable) and damps by about (ωΔt)⁴/4 per
step instead, so a swing keeps its height for many periods at the same step.

With the last two substeps (xₙ, vₙ) and (xₙ₋₁, vₙ₋₁) of length Δt, a BDF2 substep is implicit
Euler's of length ĥ = ⅔Δt from x̂ = (4xₙ − xₙ₋₁)/3 at v̂ = (4vₙ − vₙ₋₁)/3: it minimizes the
same incremental potential with ĥ for Δt (y = x̂ + ĥv̂ + ĥ²g), and its velocity is
v = (x − x̂)/ĥ = (3x − 4xₙ + xₙ₋₁)/(2Δt) (Ascher & Petzold 1998, "Computer Methods for Ordinary
Differential Equations and Differential-Algebraic Equations", §5.1.2; Choi & Ko 2002, "Stable but
Responsive Cloth", use it for cloth). So the sweeps, the translation and global steps, contacts and
friction need only ĥ in place of Δt; both backends share these two definitions.

In contact, frames step with implicit Euler (``loop.step``: any frame with contact candidates).
With one sweep per step the penalty contacts and friction are not converged, and BDF2, which does
not damp what the solve leaves, turns that residual into motion: measured, a cube at rest on the
ground moved at up to 2 cm/s, and a cube on a 15° slope with μ = 0.5 slid 3.5-4.6 cm where implicit
Euler holds it within 5 mm. A swinging tail, ear or antenna touches nothing and keeps BDF2's swing;
the first frame after a contact starts BDF2 afresh (one implicit Euler substep).
"""

from __future__ import annotations

import math

import numpy as np

from .model import State
from .settings import SimSettings

# ĥ/Δt of a BDF2 substep.
SECOND_ORDER_STEP = 2.0 / 3.0


def history_start(state: State, settings: SimSettings, h: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(xₙ₋₁, vₙ₋₁) for the frame's first BDF2 substep: float64 [particle_count, 3] copies of the
    state's history [m], [m/s] when ``settings`` asks for BDF2 and the history was taken at the
    substep ``h`` [s] (to 1e-9 relative) for as many points; else ``None``, and the first substep
    is implicit Euler's (the start frame, a halted or torn state, another rate)."""
    past = state.history
    if not settings.second_order or past is None or abs(past[2] - h) > 1e-9 * h:
        return None
    if past[0].shape != state.positions.shape:
        return None
    return past[0].copy(), past[1].copy()


def substep_decays(settings: SimSettings, h: float) -> tuple[float, float]:
    """(implicit Euler's, BDF2's) velocity decay per substep of ``h`` [s] for ``settings.damping``:
    exp(−damping·Δt) and exp(−damping·⅔Δt). BDF2 applies it to v̂ = (4vₙ − vₙ₋₁)/3, whose step is
    ⅔Δt: with the full Δt's decay velocities fell as exp(−1.5·damping·t), and a fall's top speed
    was ⅔·g/damping (found by a helper's trial: a cube with Damping 1 fell at 6.55 m/s after 5 s,
    9.76 m/s with implicit Euler)."""
    return math.exp(-settings.damping * h), math.exp(-settings.damping * SECOND_ORDER_STEP * h)
