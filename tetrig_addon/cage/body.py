"""A cage soft body in the one body lifecycle (``body.Body``): the solver's model of the cage, its
settings and its plasticity, stepped by ``solver.step``.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property

import numpy as np

from .. import solver
from ..body import Control
from ..solver import cage_self, pairs
from ..solver.self_contact import SelfCollision


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
        self_collision: its shown surface's contact with itself (``solver.cage_self``; it needs
            ``triangles``), or ``None``: it passes through itself.
    """

    model: solver.Model
    settings: solver.SimSettings
    plastic: solver.PlasticSettings | None = None
    triangles: np.ndarray | None = None
    self_collision: SelfCollision | None = None

    @cached_property
    def self_surface(self) -> cage_self.CageSurface | None:
        """The shown surface prepared for its contact with itself (``cage_self.prepare``, made once),
        or ``None`` without self-collision or triangles."""
        if self.self_collision is None or self.triangles is None:
            return None
        return cage_self.prepare(self.model, self.triangles, self.self_collision)

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
        riding on the state (``State.moved``); with self-collision, substep by substep with its
        contacts with itself (``solver.cage_self``).

        Raises:
            what ``solver.step`` raises.
        """
        model, settings = self.frame_model(control)
        surface = self.self_surface
        if surface is not None:  # it collides with itself: stepped as a set of one (``solver.pairs``)
            hook = cage_self.every_substep(surface, 0, cage_self.compiled_search())
            return pairs.step_coupled([self.member(state, control)], [[]], pairs.ContactSettings(), None, [hook])[0]
        return solver.step(model, state, settings, control.frame_dt, goals=control.goals,
                           colliders=control.colliders, plastic=self.plastic)

    def member(self, state: solver.State, control: Control) -> pairs.Member:
        """This body at ``state`` with the frame's inputs ``control``, as ``solver.pairs`` steps it."""
        model, settings = self.frame_model(control)
        return pairs.Member(model, state, settings, control.frame_dt, control.goals, tuple(control.colliders),
                            self.plastic, self.triangles)

    def own_rows(self, model: solver.Model, state: solver.State, index: int,
                 use_kernel: bool | None = None) -> pairs.PairRows | None:
        """Its contacts with itself from ``state`` on (``cage_self.substep_rows``; ``model``: the
        frame's, ``index``: its place in its set), or ``None`` (none, or no self-collision)."""
        surface = self.self_surface
        if surface is None:
            return None
        return cage_self.substep_rows(surface, model, state, index, cage_self.compiled_search(use_kernel))

    def frame_model(self, control: Control) -> tuple[solver.Model, solver.SimSettings]:
        """The model and settings a frame given ``control`` steps with: a posed cage's rest shape
        at the frame's end (``solver.with_rest``), the control's gravity."""
        model = self.model if control.rest is None else solver.with_rest(self.model, control.rest)
        return model, dataclasses.replace(self.settings, gravity=control.gravity)

    def shown(self, state: solver.State) -> np.ndarray:
        """The control points the frame shows: float64 [Q, 3] [m], world space (``State.shown``:
        contact points on their surfaces)."""
        return state.shown()
