"""What each kind of body is to a set of touching bodies (``touching``): a cage soft body
(``cage.CageBody``) or a Surface body (``surface.SurfaceSim``) as one ``solver.pairs.Member`` of a
frame, and a frame of a set with a Surface body that tears or collides with itself
(``step_in_substeps``).

A Surface member's contact points are its particles (a torn body's split copies included), its
surface the mesh's faces fanned into triangles on the particles their corners have now (a tear's
split faces), what the set shows; it steps with its material (``SurfaceMaterial``) and its goals
per particle, as ``SurfaceBody.advance`` steps it alone.

A Surface body that can tear steps alone one substep at a time, tearing after each
(``SurfaceBody.advance``). In a frame where it touches another member, the whole set does the same:
the frame is cut into as many frames of one substep as the members take substeps, each stepped as
a frame of its own (``pairs.step_members``: the pairs found again for each, so a tear's new particles
and split faces are in the next substep's contacts), and every member that can tear tears after each.

A Surface body that collides with itself (``SurfaceSim.self_collision``) steps so in every frame,
alone or in a set: its contacts with itself are found before each substep and its particles'
motion bounded after it (``solver.self_contact``).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence, Union

from . import solver
from .body import Control
from .cage.body import CageBody
from .solver import cage_self, pairs, self_rows
from .solver.self_contact import SelfCollision
from .surface.body import SurfaceSim, SurfaceState, surface_triangles

# A member of a set: a cage soft body or a Surface body.
MemberBody = Union[CageBody, SurfaceSim]

def frame_member(body: MemberBody, state: solver.State, control: Control) -> pairs.Member:
    """``body`` at ``state`` with the frame's inputs ``control``, as ``pairs`` steps it.

    Raises:
        TetRigInputError: a Surface body's material, plasticity or tearing out of range
            (``SurfaceBody.check``).
    """
    if isinstance(body, CageBody):
        return body.member(state, control)
    assert isinstance(state, SurfaceState)
    return body.member(state, control)


def step_alone(body: MemberBody, state: solver.State, control: Control) -> solver.State:
    """One frame of ``body`` as it steps alone (``CageBody.step``, ``SurfaceSim.step``).

    Raises:
        what the body's ``step`` raises.
    """
    if isinstance(body, SurfaceSim):
        assert isinstance(state, SurfaceState)
        return body.step(state, control)
    return body.step(state, control)


def shown(body: MemberBody, state: solver.State) -> Any:
    """What ``body`` shows at ``state``: a cage's control points float64 [Q, 3] [m], a Surface body's
    ``SplitMesh``."""
    if isinstance(body, SurfaceSim):
        assert isinstance(state, SurfaceState)
        return body.shown(state)
    return body.shown(state)


def tears(body: MemberBody) -> bool:
    """Whether ``body`` is a Surface body that can tear."""
    return isinstance(body, SurfaceSim) and body.tear is not None


def self_collision(body: MemberBody) -> SelfCollision | None:
    """A body's self-contact settings (a Surface body's, ``solver.self_contact``; a cage body's with
    a surface, ``solver.cage_self``), ``None`` for a body that does not collide with itself."""
    if isinstance(body, CageBody) and body.self_surface is None:
        return None
    return body.self_collision


def cage_own_rows(bodies: Sequence[MemberBody], members: Sequence[pairs.Member],
                  use_kernel: bool | None = None) -> list[list[pairs.PairRows]]:
    """Each member's contacts with itself for its frame where it is a cage body that collides with
    itself (``CageBody.own_rows``, ``solver.cage_self``), else none."""
    rows: list[list[pairs.PairRows]] = []
    for i, (body, m) in enumerate(zip(bodies, members)):
        own = body.own_rows(m.model, m.state, i, use_kernel) if isinstance(body, CageBody) else None
        rows.append([] if own is None else [own])
    return rows


def own_contacts(bodies: Sequence[MemberBody], members: Sequence[pairs.Member],
                 use_kernel: bool | None = None) -> list[pairs.SubstepContacts | None]:
    """For ``pairs.step_coupled``: each member's contacts with itself (a Surface body's
    ``self_rows.every_substep``, a cage body's ``cage_self.every_substep``), ``None`` for one that
    does not collide with itself."""
    search, cage_search = self_rows.compiled_search(use_kernel), cage_self.compiled_search(use_kernel)
    hooks: list[pairs.SubstepContacts | None] = []
    for i, (body, member) in enumerate(zip(bodies, members)):
        own = self_collision(body)
        if isinstance(body, CageBody):
            surface = body.self_surface
            hooks.append(None if surface is None else cage_self.every_substep(surface, i, cage_search))
            continue
        hooks.append(None if own is None or member.triangles is None else
                     self_rows.every_substep(i, own, member.triangles, search))
    return hooks


def step_in_substeps(bodies: Sequence[MemberBody], states: Sequence[solver.State], controls: Sequence[Control],
                     contact: pairs.ContactSettings, use_kernel: bool | None = None) -> tuple[solver.State, ...]:
    """One frame of a set with a member that tears or collides with itself, as frames of one substep
    each (module docstring): as many as the most substeps any member takes, each member's goals
    interpolated over them, the contacts of each member that collides with itself found before each
    and its motion bounded after (``solver.self_rows``), the tearing members torn after each
    (``SurfaceBody.torn``).

    Raises:
        what ``frame_member`` and ``pairs.step_members`` raise.
    """
    substeps = max(body.settings.substeps for body in bodies)
    current = list(states)
    for k in range(substeps):
        members = []
        for body, state, control in zip(bodies, current, controls):
            member = frame_member(body, state, control.part(k, substeps))
            members.append(dataclasses.replace(member, settings=dataclasses.replace(member.settings, substeps=1)))
        # a Surface body's contacts with itself, found again every substep (``solver.self_contact``)
        extra: list[list[pairs.PairRows]] = [[] for _ in bodies]
        bounds: dict[int, self_rows.Bound] = {}
        search = self_rows.compiled_search(use_kernel)
        for i, body in enumerate(bodies):
            own, m = self_collision(body), members[i]
            if isinstance(body, SurfaceSim) and own is not None and m.triangles is not None:
                rows, distances = self_rows.substep(m.model, m.state, m.triangles, m.frame_dt, i, own, search)
                extra[i] = [rows] if rows is not None else []
                bounds[i] = self_rows.Bound(m.model, m.state.positions, distances, m.frame_dt)
        extra = [[*rows, *more] for rows, more in zip(extra, cage_own_rows(bodies, members, use_kernel))]
        current = list(pairs.step_members(members, contact, use_kernel, extra))
        for i, limit in bounds.items():
            current[i] = limit(current[i])
        for i, body in enumerate(bodies):
            if isinstance(body, SurfaceSim) and body.tear is not None:
                state = current[i]
                assert isinstance(state, SurfaceState)
                current[i] = body.body.torn(state, body.tear)
    return tuple(current)


__all__ = ["MemberBody", "cage_own_rows", "frame_member", "own_contacts", "self_collision", "shown", "step_alone",
           "step_in_substeps", "surface_triangles", "tears"]
