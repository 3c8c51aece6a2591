"""A jiggle rig in the one body lifecycle (``body.Body``): its chains' model and settings, stepped
by ``motion.step``; its state is the chains' ``ChainState`` and the animated pose of its frame,
which what the frame shows is aimed from.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ..body import Control
from .model import ChainModel, ChainState, FramePose, JiggleSettings
from .motion import rest_state, shown, step


@dataclasses.dataclass(frozen=True)
class RigState:
    """A rig at one frame.

    Attributes:
        chain: the simulated tails (``ChainState``).
        pose: that frame's animated pose (``FramePose``), which ``RigBody.shown`` aims the bones
            from.
    """

    chain: ChainState
    pose: FramePose

    def finite(self) -> bool:
        """Whether every tail's position and velocity is finite."""
        return self.chain.finite()

    def halted(self) -> RigState:
        """The tails where they are, at rest, in the same pose."""
        return RigState(self.chain.halted(), self.pose)


def _poses(control: Control) -> tuple[Any, Any]:
    if control.goals is None:
        raise ValueError("A rig's control needs the animated poses of its frames (goals).")
    return control.goals


@dataclasses.dataclass(frozen=True, eq=False)
class RigBody:
    """A rig's jiggle bones as a ``body.Body``; the state is a ``RigState``.

    Attributes:
        model: the chains' ``ChainModel`` (``build_model``).
        settings: the rig's ``JiggleSettings``; each step takes the frame's duration and gravity
            from the control.
    """

    model: ChainModel
    settings: JiggleSettings

    def rest_state(self, start: Control) -> RigState:
        """Every tail on its target in the start frame's pose (``start.goals[0]``, a ``FramePose``)."""
        pose = _poses(start)[0]
        return RigState(rest_state(self.model, pose), pose)

    def step(self, state: RigState, control: Control) -> RigState:
        """One frame from the pose of F to that of F + 1 (``control.goals``, two ``FramePose``),
        ``motion.step``. The control's colliders (what other bodies show at F + 1: soft bodies'
        surfaces, ``colliders.clipped.ClippedSurface``) collide as the pose's mesh colliders do;
        the state keeps the pose without them (they are the frame's alone, and large).

        Raises:
            ValueError: a control without the poses.
        """
        pose0, pose1 = _poses(control)
        settings = dataclasses.replace(self.settings, frame_dt=control.frame_dt, gravity=control.gravity)
        stepped = pose1
        if control.colliders:
            stepped = dataclasses.replace(pose1, meshes=(*pose1.meshes, *control.colliders))
        return RigState(step(self.model, state.chain, pose0, stepped, settings), pose1)

    def shown(self, state: RigState) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every bone aimed at its tail in the state's pose (``motion.shown``: each bone's jiggle
        float64 [n, 4, 4], heads, tails and targets float64 [n, 3] [m])."""
        return shown(self.model, state.chain, state.pose)
