"""Contacts between bodies: the contact vertices of one body against the surface triangles of
another, with Coulomb friction, for bodies stepped together (``tetrig_addon.touching``).

(In progress: ``step_members`` steps each member alone.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .. import colliders as collision
from . import backend
from .model import Model, State
from .plasticity import PlasticSettings
from .settings import SimSettings

# The contact distance between bodies [m]: a vertex closer than this to another body's surface is
# pushed out to it (Blender Cloth's self-collision distance is 0.015 m, its object collision 0.015).
DEFAULT_THICKNESS = 0.01


@dataclass(frozen=True)
class ContactSettings:
    """How bodies stepped together touch.

    Attributes:
        thickness: [m] ≥ 0, the contact distance: the shown surfaces rest this far apart.
        static_friction, kinetic_friction: Coulomb coefficients, 0 ≤ μ_k ≤ μ_s.
    """

    thickness: float = DEFAULT_THICKNESS
    static_friction: float = collision.DEFAULT_STATIC_FRICTION
    kinetic_friction: float = collision.DEFAULT_KINETIC_FRICTION


@dataclass(frozen=True, eq=False)
class Member:
    """One body of a set stepped together, with its frame's inputs.

    Attributes:
        model: its ``Model`` for the frame (a posed cage's rest shape applied).
        state: its state at the frame's start (not modified).
        settings: its ``SimSettings`` (the frame's gravity applied).
        frame_dt: [s] the frame's duration.
        goals: as ``loop.step``'s.
        colliders: its collision objects (``colliders.mesh_collider``) of the frame's end.
        plastic: its plasticity or ``None``.
        triangles: int32 [triangle_count, 3] or ``None``: its surface, as indices into its contact
            points (what the others touch).
    """

    model: Model
    state: State
    settings: SimSettings
    frame_dt: float
    goals: tuple[np.ndarray, np.ndarray] | None = None
    colliders: tuple[collision.Collider, ...] = ()
    plastic: PlasticSettings | None = None
    triangles: np.ndarray | None = None


def step_members(members: Sequence[Member], contact: ContactSettings = ContactSettings(),
                 use_kernel: bool | None = None) -> tuple[State, ...]:
    """One frame of every member (see the module docstring): float states, in order."""
    return tuple(backend.step(m.model, m.state, m.settings, m.frame_dt, goals=m.goals, colliders=m.colliders,
                              use_kernel=use_kernel, plastic=m.plastic) for m in members)
