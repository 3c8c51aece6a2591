"""Goal springs: E = ½·s·|x − goal|² on every free point with a goal weight g, s = g·k·m.

With the stiffness per kilogram k [1/s²] (``SimSettings.goal_stiffness``) a point swings about its
goal at √(g·k)/2π Hz whatever its mass, so the cage resolution does not change it (seed 001's
spring to the animated target). The goal moves with the object's animation, interpolated over the
substeps; its damping acts on the velocity relative to the goal's, before each substep.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .model import Model
from .settings import SimSettings


@dataclass(frozen=True)
class GoalPlan:
    """Goals of one frame.

    Attributes:
        stiffness: float64 [particle_count] [N/m], g·k·m (0 for points without a goal).
        damping: float64 [particle_count], the share 1 − exp(−c·g·Δt) of a point's velocity
            relative to its goal removed each substep.
        start, end: float64 [particle_count, 3] [m], every point's goal at the frame's start and
            end (kinematic points follow it exactly).
    """

    stiffness: np.ndarray
    damping: np.ndarray
    start: np.ndarray
    end: np.ndarray


def plan(model: Model, settings: SimSettings, sim_dt: float,
         goals: tuple[np.ndarray, np.ndarray] | None) -> GoalPlan:
    """The frame's goal springs; ``goals`` = (start, end) positions [m] or ``None`` (rest)."""
    weights = model.goal_weights
    start, end = goals if goals is not None else (model.rest_positions, model.rest_positions)
    return GoalPlan(stiffness=weights * settings.goal_stiffness * model.masses,
                    damping=1.0 - np.exp(-settings.goal_damping * weights * sim_dt),
                    start=np.ascontiguousarray(start, dtype=np.float64),
                    end=np.ascontiguousarray(end, dtype=np.float64))


def force(d0, d1, d2, s):
    """Force and (diagonal) Hessian of a goal spring from d = x − goal [m]: (f₀, f₁, f₂, s)."""
    return -s * d0, -s * d1, -s * d2, s
