"""Bodies that touch: the soft bodies of a scene stepped together, so that they collide with each
other (``step_together``).

A set of cage soft bodies (``cage.CageBody``) that can touch is one ``TouchingBodies``, a
``body.Body`` whose state is the tuple of its members' states (``TouchingState``), so the frame
cache, bakes and jumps treat the set as one thing and frame F stays a function of the scene and F
alone. A frame in which no member's surface comes near another's steps every member exactly as it
steps alone; otherwise ``solver.pairs`` makes the contacts between them (see there for the method).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from . import solver
from .body import Control
from .cage.body import CageBody
from .errors import TetRigInputError
from .solver import pairs


@dataclass(frozen=True)
class TouchingState:
    """The states of a set of touching bodies at one frame (``timeline.FrameState``).

    Attributes:
        states: one ``solver.State`` per member, in the members' order.
    """

    states: tuple[solver.State, ...]

    def finite(self) -> bool:
        """Whether every member's positions and velocities are finite."""
        return all(state.finite() for state in self.states)

    def halted(self) -> "TouchingState":
        """Every member at rest where it is (``State.halted``)."""
        return TouchingState(tuple(state.halted() for state in self.states))


@dataclass(frozen=True, eq=False)
class TouchingBodies:
    """Cage soft bodies stepped together so that they collide (a ``body.Body`` of a set).

    Attributes:
        members: the bodies, each with its surface triangles (``CageBody.triangles``); a member
            without them still touches the others with its vertices but cannot be touched.
        contact: ``pairs.ContactSettings``: the contact distance and Coulomb friction between them.
    """

    members: tuple[CageBody, ...]
    contact: pairs.ContactSettings = pairs.ContactSettings()

    def __post_init__(self) -> None:
        if not self.members:
            raise TetRigInputError("A set of touching bodies needs at least one body.")

    def rest_state(self, starts: Sequence[Control]) -> TouchingState:
        """Every member's start-frame state (``CageBody.rest_state``), given one control each."""
        return TouchingState(tuple(body.rest_state(start) for body, start in zip(self.members, starts, strict=True)))

    def step(self, state: TouchingState, controls: Sequence[Control], use_kernel: bool | None = None) -> TouchingState:
        """One frame of the whole set (``step_together``)."""
        return TouchingState(step_together(self.members, state.states, controls, self.contact, use_kernel))

    def shown(self, state: TouchingState) -> tuple[np.ndarray, ...]:
        """What each member shows (``CageBody.shown``): float64 [Q, 3] [m] each."""
        return tuple(body.shown(s) for body, s in zip(self.members, state.states, strict=True))


def step_together(bodies: Sequence[CageBody], states: Sequence[solver.State], controls: Sequence[Control],
                  contact: pairs.ContactSettings = pairs.ContactSettings(),
                  use_kernel: bool | None = None) -> tuple[solver.State, ...]:
    """One frame of cage soft bodies that may touch each other.

    Args:
        bodies: the members; ``states``, ``controls``: one each, in the same order (not modified).
        contact: the contact distance and friction between the bodies.
        use_kernel: as ``solver.step``'s.

    Returns:
        The members' states at the frame's end. When no member's contact vertices come within
        reach of another member's surface during the frame, each is exactly ``body.step(state,
        control)`` (the same numbers as a body alone); otherwise the members step substep by
        substep together (``pairs``).

    Raises:
        TetRigInputError: lengths that differ; what ``solver.step`` raises.
    """
    if not len(bodies) == len(states) == len(controls):
        raise TetRigInputError("Each touching body needs its own state and control.")
    members = []
    for body, state, control in zip(bodies, states, controls):
        model, settings = body.frame_model(control)
        members.append(pairs.Member(model, state, settings, control.frame_dt, control.goals,
                                    tuple(control.colliders), body.plastic, body.triangles))
    return pairs.step_members(members, contact, use_kernel)


def overlapping(bodies: Sequence[CageBody], states: Sequence[solver.State],
                contact: pairs.ContactSettings = pairs.ContactSettings()) -> list[tuple[int, int]]:
    """(a, b) for every two members where ``a``'s surface is deeper inside ``b``'s than the contact
    distance in ``states`` (``pairs.overlaps``): there they stay overlapping."""
    members = [pairs.Member(body.model, state, body.settings, 1.0, triangles=body.triangles)
               for body, state in zip(bodies, states, strict=True)]
    return pairs.overlaps(members, contact)


__all__ = ["TouchingBodies", "TouchingState", "overlapping", "step_together"]
