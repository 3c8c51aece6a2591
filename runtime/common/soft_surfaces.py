"""What a jiggle rig sees of the scene's soft bodies (issue 21): their shown surfaces, at any frame.

A soft body's shown surface at frame F is its own simulated (or baked) state at F, not anything the
depsgraph has at F (its ``tetrig_offset`` modifier shows the current frame only), so a rig reads it
from the soft body's frames, never from a visited frame's depsgraph. The soft bodies' kinds live
above ``common`` (``runtime/cage``), the rigs beside them (``runtime/jiggle``), and a feature's
folder never imports another's: the scene driver registers how the soft bodies a rig sees are
found (``register``, ``runtime/soft_colliders``), and the rig asks here (``seen``).

One-way: the chains stay out of the soft bodies; the soft bodies do not feel the chains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import bpy
import numpy as np


@dataclass(frozen=True)
class SoftSurface:
    """A soft body's shown surface at one frame, world space.

    Attributes:
        bounds_min, bounds_max: float64 [3] [m], a box around it (its control points' box).
        collider: builds it as a collider (``colliders.clipped.ClippedSurface``), or ``None``.
    """

    bounds_min: np.ndarray
    bounds_max: np.ndarray
    collider: Callable[[], Any]


@dataclass(frozen=True, eq=False)
class Seen:
    """One soft body a rig sees, for one pass of the driver (or one frame of a bake): it holds the
    pass's objects and depsgraph, so it is made again at every pass (``seen``), never kept.

    Attributes:
        name: the soft body's ``name_full``.
        key: its bake fingerprint (str): what its motion depends on, saved in the .blend.
        session: what else its frames depend on in this session (its records' versions).
        surface: its shown surface at a frame (``SoftSurface``), or ``None`` when it shows none
            there (it cannot be simulated now).
    """

    name: str
    key: str
    session: tuple
    surface: Callable[[int], SoftSurface | None]


Finder = Callable[[bpy.types.Scene, bpy.types.Object, "bpy.types.Depsgraph | None"], list[Seen]]
_finder: Finder | None = None


def register(finder: Finder | None) -> None:
    """Set (or, with ``None``, clear) how the soft bodies a rig sees are found."""
    global _finder
    _finder = finder


def seen(scene: bpy.types.Scene, rig: bpy.types.Object, depsgraph: bpy.types.Depsgraph | None) -> list[Seen]:
    """The soft bodies of ``scene`` the rig ``rig`` collides with, in name order ([] before the
    driver registered its finder). Without a depsgraph, only their keys are wanted (a bake's
    status): their surfaces are ``None``, and those never simulated yet are left out."""
    return [] if _finder is None else _finder(scene, rig, depsgraph)
