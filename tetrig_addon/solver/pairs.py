"""Contacts between bodies: the contact vertices of one body against the surface triangles of
another, with Coulomb friction, for bodies stepped together (``tetrig_addon.touching``).

Method. Each frame, every body's contact vertices that could reach another body's surface during
the frame become candidates, each with the triangle of the other body it is nearest to, the
barycentric coordinates β of its closest point there and the outward normal n (``colliders.nearby``
on the other body's surface at the frame's start; compiled in ``pairs_kernel``, whose broad phase is
a grid over the other body's vertices rebuilt each frame; a frame first looks at the bodies' control
points, and blends no contact point when no two cages come within reach): as the ground and
collision objects (``contacts``, Müller et al. 2007 §3.5, candidates made once a frame), in both
directions, so each body feels the other. Unlike a collider's, the plane of such a contact rides on
the other body: at every substep its point is s = Σⱼ βⱼ·pⱼ + thickness·n, pⱼ the triangle's corners
where the other body is at the substep's start. The contact itself is the ground's penalty energy
with the smoothed Coulomb friction of Li et al. 2020 (``contacts.force``), solved in the same Vertex
Block Descent sweep as the body's material; a cage vertex's contact acts on its four control points
through its barycentric weights.

Where both bodies have vertices at one place (two faces pressed together), each side's plane is
set halfway between where its vertex is and where the whole correction would put it: the two
halves add up to the whole, where each side taking all of it made the two surfaces chase each
other (measured: the gap flipped sign every substep). A vertex that starts a frame inside the
contact distance (pressed in) is let out gently: its plane starts at its depth and recedes at
``SEPARATION_SPEED``; one deeper inside the other body than the contact distance is where the
bodies overlap (placed so), and is left there (``overlaps`` tells the Blender layer). An open
surface (a Surface body's sheet) has two sides: a vertex's outside is the side it starts the frame on
(``pair_surfaces.two_sided``), so a sheet holds another body from either side, as cloth does.

The bodies step substep by substep together (each substep is ``loop.advance`` of one substep), all
from the others' positions at the substep's start (a Jacobi exchange between bodies, so the order of
the bodies does not matter), with the most substeps any of them takes. A frame in which no body
comes within reach of another steps each body exactly as it steps alone (``loop.step``).

Limits of this first version: friction between bodies resists a vertex's own motion over a substep,
not its motion relative to the other body's surface; the normal of a contact is the frame's start's;
edges that cross without a vertex inside (two boxes edge on edge) are not contacts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from types import ModuleType
from typing import Callable, Sequence

import numpy as np

from .. import colliders as collision
from ..colliders import nearby
from ..errors import TetRigInputError
from ..geometry import bounding_box, boxes_overlap
from . import backend, contacts, loop, pair_surfaces
from .contacts import Rows
from .model import Model, State
from .plasticity import PlasticSettings
from .settings import SimSettings, SurfaceMaterial

# The contact distance between bodies [m]: a vertex closer than this to another body's surface is
# pushed out to it (Blender Cloth's object and self-collision distances are 0.015 m by default).
DEFAULT_THICKNESS = 0.01
# Bodies that start a frame inside each other (placed overlapping, or pressed in by a hard hit)
# separate at this speed [m/s]: the plane of a contact starts at its vertex's depth and recedes at
# this speed to the contact distance, so the penalty never has to undo the whole depth in one
# substep (measured: two cubes placed 5 cm into each other flew apart at 1,000 m/s without).
SEPARATION_SPEED = 0.5
# Two bodies fall together: the free fall a frame adds to a vertex's margin (``contacts.contact_margins``)
# counts once towards another body, not ``CONTACT_MARGIN_FACTOR`` times as towards the ground.
PAIR_FALL_FACTOR = 1.0


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

    def __post_init__(self) -> None:
        if not (np.isfinite(self.thickness) and self.thickness >= 0.0):
            raise TetRigInputError(f"The contact distance between bodies must be 0 or more, not {self.thickness}.")
        if not (np.isfinite(self.static_friction) and np.isfinite(self.kinetic_friction)
                and 0.0 <= self.kinetic_friction <= self.static_friction):
            raise TetRigInputError("Friction between bodies must be 0 or more, static at least sliding.")


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
            points, counterclockwise seen from outside (what the others touch).
        surface: a Surface body's material (``loop.step``'s ``surface``), ``None`` for a cage.
    """

    model: Model
    state: State
    settings: SimSettings
    frame_dt: float
    goals: tuple[np.ndarray, np.ndarray] | None = None
    colliders: tuple[collision.Collider, ...] = ()
    plastic: PlasticSettings | None = None
    triangles: np.ndarray | None = None
    surface: SurfaceMaterial | None = None


@dataclass(frozen=True, eq=False)
class PairRows:
    """One body's candidates against another body's surface, for one frame.

    Attributes:
        other: the other body (its index among the members).
        contacts: int64 [r], rows of this body's contact points.
        corners: int64 [r, 3], the other body's contact points at the corners of the triangle.
        barycentric: float64 [r, 3], the closest point's coordinates on that triangle.
        normals: float64 [r, 3], unit, outward from the other body.
        depths: float64 [r] [m], how deep below the plane still counts (``ContactPlan.depths``).
        allowances: float64 [r] [m], how far inside the contact distance each vertex was at the
            frame's start (0 outside it): its plane starts there (``SEPARATION_SPEED``).
        contact: the contact distance and friction of these rows, ``None``: the set's (a Surface
            body's contacts with itself have their own, ``self_rows``).
    """

    other: int
    contacts: np.ndarray
    corners: np.ndarray
    barycentric: np.ndarray
    normals: np.ndarray
    depths: np.ndarray
    allowances: np.ndarray
    contact: ContactSettings | None = None

    @cached_property
    def corner_points(self) -> tuple[np.ndarray, np.ndarray]:
        """(the other body's contact points at the corners, int64 [u], each corner's among them,
        int64 [3r]): neighbouring rows share corners, so each substep blends each once."""
        unique, inverse = np.unique(self.corners.ravel(), return_inverse=True)
        return unique, inverse.ravel()

    def rows(self, contact: ContactSettings) -> Rows:
        """The candidates as ``contacts.Rows`` for the frame's ``contacts.assemble``, their planes
        not set yet (zeros): every substep sets them (``planes``), the rest stays."""
        count = self.contacts.shape[0]
        return (self.contacts, self.normals, np.zeros((count, 3)), self.depths,
                np.full(count, contact.static_friction), np.full(count, contact.kinetic_friction))

    def planes(self, own: Model, own_positions: np.ndarray, other: Model, other_positions: np.ndarray,
               contact: ContactSettings, elapsed: float, compiled: ModuleType | None = None) -> np.ndarray:
        """The candidates' planes (``ContactPlan.surfaces``, float64 [r, 3] [m]) for a substep that
        ends ``elapsed`` [s] into the frame, where this body (``own``, its control points at
        ``own_positions``) and the other (``other``, at ``other_positions``, float64 [Q, 3] [m]) are
        at its start: on the other's surface, moved out by the contact distance, and by half of the
        way there for a vertex that starts the substep inside it (module docstring). ``compiled``:
        ``pairs_kernel``, the same numbers in one loop."""
        receding = np.maximum(self.allowances - SEPARATION_SPEED * elapsed, 0.0)
        if compiled is not None:
            return compiled.pair_planes(own.contact_indices, own.contact_weights, own_positions, self.contacts,
                                        other.contact_indices, other.contact_weights, other_positions,
                                        self.corners, self.barycentric, self.normals, receding,
                                        contact.thickness)
        unique, inverse = self.corner_points
        corner = _contact_points(other, other_positions, unique)[inverse].reshape(-1, 3, 3)
        closest = (self.barycentric[:, 0, None] * corner[:, 0] + self.barycentric[:, 1, None] * corner[:, 1]
                   + self.barycentric[:, 2, None] * corner[:, 2])
        offset = contact.thickness - receding
        own_points = _contact_points(own, own_positions, self.contacts)
        height = ((own_points[:, 0] - closest[:, 0]) * self.normals[:, 0]
                  + (own_points[:, 1] - closest[:, 1]) * self.normals[:, 1]
                  + (own_points[:, 2] - closest[:, 2]) * self.normals[:, 2])
        offset = np.minimum(offset, 0.5 * (offset + height))
        return closest + offset[:, None] * self.normals


def _contact_points(model: Model, positions: np.ndarray, which: np.ndarray | None,
                    compiled: ModuleType | None = None) -> np.ndarray:
    """p = Σₖ wₖ xₖ of the contact points ``which`` (int [r], ``None``: all) of ``model``: float64
    [r, 3] [m]; ``compiled`` (``pairs_kernel``) sums the same in the same order."""
    idx, w = model.contact_indices, model.contact_weights
    if compiled is not None and which is None:
        return compiled.blend(idx, w, positions)
    if which is not None:
        idx, w = idx[which], w[which]
    return (w[:, 0, None] * positions[idx[:, 0]] + w[:, 1, None] * positions[idx[:, 1]]
            + w[:, 2, None] * positions[idx[:, 2]] + w[:, 3, None] * positions[idx[:, 3]])


def _fastest(state: State) -> float:
    """[m/s] the fastest control point's speed."""
    v = state.velocities
    return float(np.sqrt((v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1] + v[:, 2] * v[:, 2]).max(initial=0.0)))


def _cages_within_reach(members: Sequence[Member], contact: ContactSettings) -> bool:
    """Whether the boxes of two members' control points, each grown by the most any contact point
    of it can travel in the frame (``contacts.contact_margins`` with every weight's share at its
    largest) and the contact distance, overlap. A member whose contact points are not all within
    its control points (a negative barycentric weight: a vertex bound outside its tet) has no such
    box and always counts as within reach."""
    boxes: list[tuple[np.ndarray, np.ndarray] | None] = []
    for m in members:
        w = m.model.contact_weights
        if w.shape[0] == 0:
            boxes.append(None)
            continue
        if w.min() < 0.0:
            return True
        x = m.state.positions
        fall = 0.5 * float(np.linalg.norm(m.settings.gravity)) * m.frame_dt * m.frame_dt
        grow = (2.0 * contacts.CONTACT_MARGIN_FACTOR * m.frame_dt * _fastest(m.state) + PAIR_FALL_FACTOR * fall
                + contacts.CONTACT_MARGIN_EXTENT * m.model.extent + contact.thickness)
        low, high = bounding_box(x)
        boxes.append((low - grow, high + grow))
    return any(a is not None and b is not None and boxes_overlap(a, b)
               for i, a in enumerate(boxes) for b in boxes[i + 1:])


def step_members(members: Sequence[Member], contact: ContactSettings = ContactSettings(),
                 use_kernel: bool | None = None,
                 extra: Sequence[Sequence[PairRows]] | None = None) -> tuple[State, ...]:
    """One frame of every member (see the module docstring).

    Args:
        members: the bodies with their frame's inputs.
        contact: the contact distance and friction between them.
        use_kernel: as ``backend.step``'s, for every member.
        extra: more rows per member (a Surface body's against itself, ``self_rows``), or ``None``.

    Returns:
        The members' states at the frame's end, in order.

    Raises:
        BackendUnavailable: ``use_kernel=True`` without a compiled kernel; what ``loop.step``
            raises.
    """
    found = find_pairs(members, contact, use_kernel)
    if extra is not None:
        found = [[*rows, *more] for rows, more in zip(found, extra, strict=True)]
    if not any(found):
        return tuple(backend.step(m.model, m.state, m.settings, m.frame_dt, goals=m.goals, colliders=m.colliders,
                                  use_kernel=use_kernel, surface=m.surface, plastic=m.plastic) for m in members)
    return step_coupled(members, found, contact, use_kernel)


def find_pairs(members: Sequence[Member], contact: ContactSettings,
               use_kernel: bool | None = None) -> list[list[PairRows]]:
    """``frame_pairs`` searched as the members step: compiled where the kernel is (``use_kernel``
    as ``backend.step``'s), else in NumPy; an empty list per member when none comes within reach."""
    return frame_pairs(members, contact, _compiled_search(use_kernel))


def frame_pairs(members: Sequence[Member], contact: ContactSettings,
                compiled: ModuleType | None = None) -> list[list[PairRows]]:
    """Every member's candidates against the others' surfaces for the frame (one list per member):
    its contact vertices that could come within the contact distance of another member's surface
    during the frame (both bodies' travel, ``contacts.contact_margins``), by ``colliders.nearby``
    (``compiled``: ``pairs_kernel``, the same search compiled, or ``None``)."""
    # A first look from the control points: where no two bodies' cages come within reach of each
    # other, no contact point needs blending (most frames of bodies apart)
    if not _cages_within_reach(members, contact):
        return [[] for _ in members]
    points = [_contact_points(m.model, m.state.positions, None, compiled) for m in members]
    margins = [contacts.contact_margins(m.model, m.state, m.settings, m.frame_dt, PAIR_FALL_FACTOR) for m in members]
    # how far a surface can come towards a vertex in the frame: its own speed (the vertex's margin
    # holds the fall and its own travel), and the contact distance
    travel = [contacts.CONTACT_MARGIN_FACTOR * m.frame_dt * _fastest(m.state) + contact.thickness for m in members]
    extents = [bounding_box(p) if p.shape[0] else None for p in points]
    boxes = [(e[0] - float(margin.max()), e[1] + float(margin.max())) if e is not None else None
             for e, margin in zip(extents, margins)]
    found: list[list[PairRows]] = [[] for _ in members]
    for b, other in enumerate(members):
        extent = extents[b]
        if other.triangles is None or extent is None:
            continue
        facts = pair_surfaces.facts(other.triangles, points[b])
        surface = None
        box_b = (extent[0] - travel[b], extent[1] + travel[b])
        for a in range(len(members)):
            box_a = boxes[a]
            if a == b or box_a is None or not boxes_overlap(box_a, box_b):
                continue
            if surface is None and compiled is None:
                surface = nearby.surface(points[b], facts.triangles, facts.rings)
            reach = margins[a] + travel[b]
            grown = (box_b[0] - float(margins[a].max()), box_b[1] + float(margins[a].max()))
            rows = _pair_rows(surface, facts, points[b], b, points[a], reach, grown, contact, compiled)
            if rows is not None:
                found[a].append(rows)
    return found


def overlaps(members: Sequence[Member], contact: ContactSettings = ContactSettings()) -> list[tuple[int, int]]:
    """The pairs (a, b) of members where vertices of a are deeper inside b's closed surface than the
    contact distance: placed overlapping, the bodies stay so there (``frame_pairs`` leaves such
    vertices alone), which the panel says."""
    points = [contacts.contact_points(m.model, m.state.positions) for m in members]
    found = []
    for b, other in enumerate(members):
        if other.triangles is None or points[b].shape[0] == 0:
            continue
        facts = pair_surfaces.facts(other.triangles, points[b])
        if not facts.closed:
            continue
        surface = nearby.surface(points[b], facts.triangles, facts.rings)
        low, high = bounding_box(points[b])
        for a in range(len(members)):
            inside_box = np.all((points[a] >= low) & (points[a] <= high), axis=1) if a != b else None
            if inside_box is None or not inside_box.any():
                continue
            deep = np.full(int(inside_box.sum()), np.ptp(points[b], axis=0).max())
            distance = nearby.closest(surface, points[a][inside_box], deep)[3]
            if distance.shape[0] and distance.min() < -contact.thickness:
                found.append((a, b))
    return found


def _pair_rows(surface: nearby.Surface | None, facts: pair_surfaces.SurfaceFacts, vertices: np.ndarray, other: int,
               p: np.ndarray, reach: np.ndarray, box: tuple[np.ndarray, np.ndarray], contact: ContactSettings,
               compiled: ModuleType | None) -> PairRows | None:
    """The vertices ``p`` (float64 [n, 3] [m]) within ``reach`` (float64 [n] [m]) of member
    ``other``'s surface (``facts`` on its contact points ``vertices``, float64 [V, 3] [m], in
    ``box`` grown by its reach): their closest triangles, or ``None`` when none is. ``surface``:
    the surface for ``nearby.closest`` (the NumPy reference), or ``None`` with ``compiled``, the
    same search in ``pairs_kernel``."""
    low, high = box
    near = np.flatnonzero((p[:, 0] >= low[0]) & (p[:, 0] <= high[0]) & (p[:, 1] >= low[1]) & (p[:, 1] <= high[1])
                          & (p[:, 2] >= low[2]) & (p[:, 2] <= high[2]))
    if near.shape[0] == 0:
        return None
    if compiled is not None:
        found, triangle, barycentric, distance, normal = compiled.closest(
            p[near], reach[near], vertices, facts.triangles, facts.rings, nearby.NEAREST_VERTICES,
            nearby.INSIDE_BARYCENTRIC, nearby.ON_SURFACE_RELATIVE)
    else:
        assert surface is not None
        found, triangle, barycentric, distance, normal = nearby.closest(surface, p[near], reach[near])
    if not facts.closed:
        distance, normal = pair_surfaces.two_sided(distance, normal)
    # A vertex deeper inside than the contact distance is where the bodies overlap (placed so): it
    # is left there, as is the vertex of the other body in it (module docstring).
    band = distance > -contact.thickness
    if not band.any():
        return None
    distance = distance[band]
    # at any depth: a closed surface's inside is the other body's, an open one's far side is not the
    # vertex's (``pair_surfaces.two_sided``)
    depths = np.full(distance.shape[0], np.inf)
    return PairRows(other=other, contacts=near[found[band]].astype(np.int64),
                    corners=facts.triangles[triangle[band]].astype(np.int64),
                    barycentric=barycentric[band], normals=normal[band], depths=depths,
                    allowances=np.maximum(contact.thickness - distance, 0.0))


# A member's contacts found again before every substep (``self_rows``, ``cage_self``): from its frame model, state
# at the substep's start and substep [s], its rows and what bounds the result (``self_rows.Bound``, or ``None``).
SubstepContacts = Callable[[Model, State, float], tuple[Sequence[PairRows], Callable[[State, bool], State] | None]]


def step_coupled(members: Sequence[Member], found: Sequence[Sequence[PairRows]], contact: ContactSettings,
                 use_kernel: bool | None = None,
                 every_substep: Sequence[SubstepContacts | None] | None = None) -> tuple[State, ...]:
    """One frame of the members substep by substep together, each with its candidates against the
    others (``found``, from ``frame_pairs``) on planes that ride on the others (module docstring),
    each taking the most substeps any takes. A member's contact plan is assembled once for the frame
    and a substep sets the planes of its rows; ``every_substep`` (per member, or ``None``): contacts
    found again before each substep (the plan assembled again) and what bounds its result."""
    substeps = max(m.settings.substeps for m in members)
    search = _compiled_search(use_kernel)
    hooks = list(every_substep) if every_substep is not None else [None] * len(members)
    prepared = []
    for m, pair_rows in zip(members, found):
        settings = dataclasses.replace(m.settings, substeps=substeps)
        compiled = backend.choose(m.model, settings, m.surface, use_kernel)
        state = loop.with_rotations(m.model, m.state)
        model = loop.with_state_rest(m.model, state)
        base = [*contacts.candidate_rows(model, state, settings, m.colliders, m.frame_dt, compiled),
                *(rows.rows(rows.contact or contact) for rows in pair_rows)]
        plan = contacts.assemble(model, base, m.frame_dt / substeps, compiled)
        fixed = sum(rows[0].shape[0] for rows in base) - sum(rows.contacts.shape[0] for rows in pair_rows)
        material = loop.material_plans(model, settings, m.frame_dt / substeps, m.surface)
        prepared.append((model, settings, compiled, state, plan, fixed, base, material))
    current = [p[3] for p in prepared]
    plans: list[contacts.ContactPlan] = [p[4] for p in prepared]
    passes: list[Callable[[State, bool], State] | None] = [None] * len(members)
    for s in range(substeps):
        for index, ((model, _, compiled, _, plan, fixed, base, _), m, pair_rows) in enumerate(zip(prepared, members,
                                                                                                found)):
            sub_dt = m.frame_dt / substeps
            own: Sequence[PairRows] = ()
            hook = hooks[index]
            if hook is not None:
                own, passes[index] = hook(model, current[index], sub_dt)
                plan = contacts.assemble(model, [*base, *(rows.rows(rows.contact or contact) for rows in own)],
                                         sub_dt, compiled)
            if not pair_rows and not own:
                plans[index] = plan
                continue
            surfaces = plan.surfaces.copy()
            at_end = m.frame_dt * (s + 1) / substeps  # the planes where the substep ends (own rows: from it)
            for rows, elapsed in [*((r, at_end) for r in pair_rows), *((r, sub_dt) for r in own)]:
                surfaces[fixed:fixed + rows.contacts.shape[0]] = rows.planes(
                    model, current[index].positions, prepared[rows.other][0], current[rows.other].positions,
                    rows.contact or contact, elapsed, search)
                fixed += rows.contacts.shape[0]
            plans[index] = dataclasses.replace(plan, surfaces=surfaces)
        current = [loop.advance(model, state, settings, m.frame_dt, plan, m.goals, compiled, m.surface, substep=s,
                                material=material)
                   for (model, settings, compiled, *_, material), m, state, plan in zip(prepared, members, current,
                                                                                        plans)]
        current = [state if passing is None else passing(state, False) for state, passing in zip(current, passes)]
    ends = [loop.finish(m.model, model, start, new, settings, m.frame_dt, plan, compiled, m.plastic)
            for (model, settings, compiled, start, *_), m, new, plan in zip(prepared, members, current, plans)]
    return tuple(end if passing is None else passing(end, True) for end, passing in zip(ends, passes))


def _import_search() -> ModuleType:
    from . import pairs_kernel as module

    return module


# Loaded in the background whenever the solver's kernel has loaded.
_SEARCH = backend.Companion(_import_search, "tetrig-pairs-compile")


def _compiled_search(use_kernel: bool | None = None) -> ModuleType | None:
    """The compiled search (``pairs_kernel``), or ``None`` (``backend.Companion.module``):
    ``colliders.nearby`` finds the same triangles in NumPy."""
    return _SEARCH.module(use_kernel)
