"""The one body lifecycle: what cage soft bodies, Surface bodies and jiggle rigs all are to whoever
steps them frame by frame (the Blender layer's scene driver, the frame cache, a bake).

As Newton's Model / State / Control (NVIDIA Warp's Newton physics engine): a body holds its
model, built once from the rest data, and its settings; its state is what changes from frame to
frame; a frame's inputs are one ``Control``. Frame F + 1 is ``step(state at F, control of F)``,
the start frame is ``rest_state(its control)``, and what a frame shows is ``shown(state)``, so
the state at frame F depends on the start frame's inputs, the controls up to F and F alone
(``timeline.FrameCache`` keeps them).

The three kinds: ``cage.CageBody`` (a cage's control points, ``solver.step``),
``surface.SurfaceSim`` (a mesh's own vertices, ``surface.SurfaceBody.advance``) and
``jiggle.RigBody`` (bone chains, ``jiggle.step``). Each gives exactly the numbers of the direct
calls it wraps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol, TypeVar

import numpy as np

from .colliders import Collider
from .timeline import FrameState


@dataclass(frozen=True)
class Control:
    """What the step from frame F to F + 1 is given (Newton's Control), or, for ``rest_state``,
    what the start frame is given.

    Attributes:
        frame_dt: [s] the frame's duration.
        gravity: [m/s²] world space; it replaces the body's settings' gravity.
        goals: where the goals are at F and at F + 1: (float64 [P, 3] [m] each, world space) for
            cages and Surface bodies, their control points' or vertices' goals (``None``: their
            rest positions); (``jiggle.FramePose``, ``jiggle.FramePose``) for rigs, the animated
            pose of each frame. For ``rest_state``, the first is the start frame's.
        colliders: the collision objects of frame F + 1 (``colliders.mesh_collider``).
        rest: float64 [P, 3] [m] or ``None``: where a posed body rests at F + 1 (a posed cage's
            rest shape, ``solver.with_rest``); for ``rest_state``, at the start frame, where a
            posed body starts at rest.
    """

    frame_dt: float
    gravity: tuple[float, float, float]
    goals: tuple[Any, Any] | None = None
    colliders: tuple[Collider, ...] = ()
    rest: Any = None

    def part(self, k: int, parts: int) -> "Control":
        """Part ``k`` (0 to ``parts`` − 1) of the frame cut into ``parts`` equal frames: its
        duration, and goals (arrays) interpolated to its start and end."""
        goals = self.goals
        if goals is not None:
            start, end = np.asarray(goals[0]), np.asarray(goals[1])
            goals = (start + (end - start) * (k / parts), start + (end - start) * ((k + 1) / parts))
        return replace(self, frame_dt=self.frame_dt / parts, goals=goals)


S = TypeVar("S", bound=FrameState)


class Body(Protocol[S]):
    """A simulated body: a model built once from rest data, with its settings (see the module
    docstring)."""

    def rest_state(self, start: Control) -> S:
        """The state at the start frame (a posed body and a rig: in the start frame's pose)."""
        ...

    def step(self, state: S, control: Control) -> S:
        """The state at frame F + 1 from the one at F (not modified), given the frame's inputs."""
        ...

    def shown(self, state: S) -> Any:
        """What the frame of ``state`` shows (each kind says what it gives)."""
        ...
