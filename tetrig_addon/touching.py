"""Bodies that touch: the soft bodies of a scene stepped together, so that they collide with each
other (``step_together``).

A set of soft bodies that can touch, cage soft bodies (``cage.CageBody``) and Surface bodies
(``surface.SurfaceSim``, ``touching_members`` says what each kind is to the set), is one ``TouchingBodies``, a
``body.Body`` whose state is the tuple of its members' states (``TouchingState``), so the frame
cache, bakes and jumps treat the set as one thing and frame F stays a function of the scene and F
alone. A frame in which no member's surface comes near another's steps every member exactly as it
steps alone; otherwise ``solver.pairs`` makes the contacts between them (see there for the method).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from . import solver
from .body import Control
from .errors import TetRigInputError
from .solver import pairs
from .touching_members import (MemberBody, frame_member, own_contacts, self_collision, step_alone, step_in_substeps,
                               tears)
from .touching_members import shown as member_shown


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
    """Soft bodies stepped together so that they collide (a ``body.Body`` of a set).

    Attributes:
        members: the bodies: cage soft bodies, each with its surface triangles (``CageBody.triangles``;
            one without them still touches the others with its vertices but cannot be touched), and
            Surface bodies (``SurfaceSim``: its particles and its faces).
        contact: ``pairs.ContactSettings``: the contact distance and Coulomb friction between them.
    """

    members: tuple[MemberBody, ...]
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

    def shown(self, state: TouchingState) -> tuple[Any, ...]:
        """What each member shows (``CageBody.shown``: float64 [Q, 3] [m]; ``SurfaceSim.shown``: its
        ``SplitMesh``)."""
        return tuple(member_shown(body, s) for body, s in zip(self.members, state.states, strict=True))


def step_together(bodies: Sequence[MemberBody], states: Sequence[solver.State], controls: Sequence[Control],
                  contact: pairs.ContactSettings = pairs.ContactSettings(),
                  use_kernel: bool | None = None) -> tuple[solver.State, ...]:
    """One frame of soft bodies (cage and Surface bodies) that may touch each other.

    Args:
        bodies: the members; ``states``, ``controls``: one each, in the same order (not modified).
        contact: the contact distance and friction between the bodies.
        use_kernel: as ``solver.step``'s.

    Returns:
        The members' states at the frame's end. When no member's contact vertices come within
        reach of another member's surface during the frame, each is exactly ``body.step(state,
        control)`` (the same numbers as a body alone); otherwise the members step substep by
        substep together (``pairs``), or, with a Surface member that tears, as frames of one
        substep each (``touching_members.step_in_substeps``). With a Surface member that collides
        with itself (``SurfaceSim.self_collision``), always substep by substep, its contacts with
        itself found again each substep (``touching_members.own_contacts``).

    Raises:
        TetRigInputError: lengths that differ; a Surface body's settings out of range; what
            ``solver.step`` raises.
    """
    if not len(bodies) == len(states) == len(controls):
        raise TetRigInputError("Each touching body needs its own state and control.")
    members = [frame_member(body, state, control) for body, state, control in zip(bodies, states, controls)]
    found = pairs.find_pairs(members, contact, use_kernel)
    own = any(self_collision(body) is not None for body in bodies)  # it looks for them every substep
    if any(map(tears, bodies)) and (own or any(found)):
        return step_in_substeps(bodies, states, controls, contact, use_kernel)
    if own:
        return pairs.step_coupled(members, found, contact, use_kernel, own_contacts(bodies, members, use_kernel))
    if not any(found):  # as each alone: its own step (a Surface body that tears, substep by substep)
        return tuple(step_alone(body, state, control) for body, state, control in zip(bodies, states, controls))
    return pairs.step_coupled(members, found, contact, use_kernel)


def overlapping(bodies: Sequence[MemberBody], states: Sequence[solver.State],
                contact: pairs.ContactSettings = pairs.ContactSettings()) -> list[tuple[int, int]]:
    """(a, b) for every two members where ``a``'s surface is deeper inside ``b``'s than the contact
    distance in ``states`` (``pairs.overlaps``): there they stay overlapping."""
    still = Control(1.0, (0.0, 0.0, 0.0))
    return pairs.overlaps([frame_member(body, state, still) for body, state in zip(bodies, states, strict=True)],
                          contact)


__all__ = ["TouchingBodies", "TouchingState", "overlapping", "step_together"]
