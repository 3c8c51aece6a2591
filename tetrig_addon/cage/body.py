"""A cage soft body in the one body lifecycle (``body.Body``): the solver's model of the cage, its
settings and its plasticity, stepped by ``solver.step``.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .. import solver
from ..body import Control


@dataclasses.dataclass(frozen=True, eq=False)
class CageBody:
    """A cage's control points as a ``body.Body``; the state is a ``solver.State``.

    Attributes:
        model: the cage's ``solver.Model`` (``solver.build_model``).
        settings: validated ``solver.SimSettings``; each step takes its gravity from the control.
        plastic: plasticity (``solver.PlasticSettings``) or ``None`` (a posed cage has none: its
            rest shape is each frame's pose, which crept rest data would replace).
        triangles: int32 [triangle_count, 3] or ``None``: the shown mesh's triangles, as indices
            into the model's contact points (the mesh's vertices, ``model.contact_indices``),
            counterclockwise seen from outside; what other bodies touch (``touching``). ``None``:
            nothing can touch this body's surface.
    """

    model: solver.Model
    settings: solver.SimSettings
    plastic: solver.PlasticSettings | None = None
    triangles: np.ndarray | None = None

    def rest_state(self, start: Control) -> solver.State:
        """The start frame's state: at rest (``solver.rest_state``), or, for a posed cage
        (``start.rest``, float64 [Q, 3] [m]), at rest in the start frame's pose."""
        rest = solver.rest_state(self.model)
        if start.rest is None:
            return rest
        posed = np.asarray(start.rest)
        return solver.State(posed, np.zeros_like(posed), rest.rotations)

    def step(self, state: solver.State, control: Control) -> solver.State:
        """One frame (``solver.step``): the control's goals and colliders, a posed cage's rest
        shape at the frame's end (``control.rest``, ``solver.with_rest``), the crept rest data
        riding on the state (``State.moved``).

        Raises:
            what ``solver.step`` raises.
        """
        model, settings = self.frame_model(control)
        return solver.step(model, state, settings, control.frame_dt, goals=control.goals,
                           colliders=control.colliders, plastic=self.plastic)

    def frame_model(self, control: Control) -> tuple[solver.Model, solver.SimSettings]:
        """The model and settings a frame given ``control`` steps with: a posed cage's rest shape
        at the frame's end (``solver.with_rest``), the control's gravity."""
        model = self.model if control.rest is None else solver.with_rest(self.model, control.rest)
        return model, dataclasses.replace(self.settings, gravity=control.gravity)

    def shown(self, state: solver.State) -> np.ndarray:
        """The control points the frame shows: float64 [Q, 3] [m], world space (``State.shown``:
        contact points on their surfaces)."""
        return state.shown()
