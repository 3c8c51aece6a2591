"""A Surface body's self-contacts for one substep (``self_contact`` gives the method): the rows
its VBD sweep solves (``pairs.PairRows`` against itself) and the bound on each particle's motion,
then the bound applied to the substep's result (``Bound``); a search kept for the next substeps
while the bound holds (``every_substep``).

Which pairs are contacts: a particle and a triangle it is not a corner of, or two edges that
share no particle, closer than the search radius now, and not closer than the contact distance at
rest (neighbours: a torn body's split copies, a mesh finer than the distance); the bound counts
the same pairs (``self_contact.search``). Each particle keeps its nearest triangle as its contact,
each edge its nearest edge (its two ends then push along the line between the closest points, the
other edge's ends the other way), so a fold's contact is about as stiff as the ground's.
"""

from __future__ import annotations

import dataclasses
from types import ModuleType

import numpy as np

from . import backend, pairs, self_contact
from .model import Model, State
from .self_contact import BOUND_FRACTION, SelfCollision

# The search radius: 1.5 contact distances, plus a little more than the fastest particle's travel
# relative to the body's mean in a substep over ``BOUND_FRACTION`` (so the bound holds back no
# particle that has nothing nearer), but not past ``RADIUS_EDGES`` of the median rest edge where
# that is more than the 1.5 distances: a sheet's features one triangle apart are about 0.7 edges
# from each other, so past it every particle and edge would be a pair in every substep (measured on
# the 40 x 40 cloth: 1.8 cm found all 1,679 particles and 4,876 edges paired, 10 ms a search), for
# a bound no larger (those pairs' distance is the bound).
RADIUS_DISTANCES = 1.5
RADIUS_TRAVELS = 1.1 / BOUND_FRACTION
RADIUS_EDGES = 0.65

# A search serves the next substep while every particle has used less than this of what its bound
# allows since the search (``every_substep``).
REUSE_FRACTION = 0.5

# The edges of the last few triangle arrays asked for (a torn body's change with its tears).
_EDGES_CACHE_SIZE = 8
_edges_cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}
_median_cache: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}


def _edges(triangles: np.ndarray) -> np.ndarray:
    cached = _edges_cache.get(id(triangles))
    if cached is not None and cached[0] is triangles:
        return cached[1]
    edges = self_contact.edges_of(triangles)
    if len(_edges_cache) >= _EDGES_CACHE_SIZE:
        _edges_cache.pop(next(iter(_edges_cache)))
    _edges_cache[id(triangles)] = (triangles, edges)
    return edges


def _median_edge(rest: np.ndarray, edges: np.ndarray) -> float:
    """[m] the median rest length of ``edges`` (0 without), kept per edge array."""
    cached = _median_cache.get(id(edges))
    if cached is not None and cached[0] is edges and cached[1] is rest:
        return cached[2]
    vector = rest[edges[:, 1]] - rest[edges[:, 0]]
    median = float(np.median(np.sqrt(np.einsum("ek,ek->e", vector, vector)))) if edges.shape[0] else 0.0
    if len(_median_cache) >= _EDGES_CACHE_SIZE:
        _median_cache.pop(next(iter(_median_cache)))
    _median_cache[id(edges)] = (edges, rest, median)
    return median


def mean_motion(model: Model, values: np.ndarray) -> np.ndarray:
    """The mass-weighted mean of ``values`` (float64 [V, 3]) over the free particles (float64 [3];
    zeros when none is free)."""
    free = model.inverse_masses > 0.0
    mass = model.masses[free]
    total = float(mass.sum())
    return (mass[:, None] * values[free]).sum(axis=0) / total if total > 0.0 else np.zeros(3)


def substep(model: Model, state: State, triangles: np.ndarray, dt: float, index: int, settings: SelfCollision,
            compiled: ModuleType | None = None) -> tuple[pairs.PairRows | None, np.ndarray]:
    """The self-contacts of member ``index``, a Surface body (``model``, its ``triangles`` int [T, 3])
    at the ``state`` a substep of ``dt`` [s] starts from: (its rows against itself, or ``None`` when
    there is none; the bound of each particle's distance, float64 [V] [m], for ``Bound``).
    ``compiled``: ``self_contact_kernel``, the same numbers."""
    positions = state.positions
    edges = _edges(triangles)
    relative = state.velocities - mean_motion(model, state.velocities)
    travel = float(np.sqrt(np.einsum("vk,vk->v", relative, relative).max(initial=0.0))) * dt
    floor = RADIUS_DISTANCES * settings.distance
    radius = max(floor, min(floor + RADIUS_TRAVELS * travel, RADIUS_EDGES * _median_edge(model.rest_positions, edges)))
    triangles = np.asarray(triangles, dtype=np.int64)
    found = self_contact.search(positions, model.rest_positions, triangles, edges, radius, settings.distance, compiled)
    return _rows(index, settings, positions, triangles, edges, found), found.bound


def every_substep(index: int, settings: SelfCollision, triangles: np.ndarray,
                  compiled: ModuleType | None = None) -> pairs.SubstepContacts:
    """Member ``index``'s contacts with itself for ``pairs.step_coupled``, for one frame: found before
    a substep (``substep``) and its result bounded (``Bound``); the same search serves the next
    substeps while every particle has moved less than ``REUSE_FRACTION`` of what its bound allows
    since it (relative to the body's mean motion: the bound holds for the whole way since the
    search, so nothing crosses; Offset Geometric Contact searches again only where a bound is
    reached). A body at rest in folds then searches once a frame, not every substep."""
    last: list[tuple[pairs.PairRows | None, Bound, int]] = []

    def contacts(model: Model, state: State, dt: float) -> tuple[list[pairs.PairRows], Bound]:
        if last and last[0][1].model is model and last[0][1].within(state.positions, REUSE_FRACTION):
            rows, bound, age = last[0]
            last[0] = (rows, bound, age + 1)
            if rows is None:
                return [], bound
            # its planes recede from where the search found them (``pairs.SEPARATION_SPEED``)
            receded = np.maximum(rows.allowances - pairs.SEPARATION_SPEED * dt * (age + 1), 0.0)
            return [dataclasses.replace(rows, allowances=receded)], bound
        rows, found = substep(model, state, triangles, dt, index, settings, compiled)
        bound = Bound(model, state.positions, found, dt)
        last[:] = [(rows, bound, 0)]
        return ([] if rows is None else [rows]), bound
    return contacts


def _rows(index: int, settings: SelfCollision, positions: np.ndarray, triangles: np.ndarray, edges: np.ndarray,
          found: self_contact.Nearest) -> pairs.PairRows | None:
    """The contact rows: each particle against its nearest triangle, each edge's ends against its
    nearest edge and that edge's ends against it (module docstring), with normals from the other
    feature towards this one (a face's or the two edges' normal where they touch)."""
    v = np.flatnonzero(found.triangles >= 0)
    corners, bary = triangles[found.triangles[v]], found.barycentric[v]
    closest = _blend(positions, corners, bary)
    offset = positions[v] - closest
    a = positions[corners[:, 0]]
    face = np.cross(positions[corners[:, 1]] - a, positions[corners[:, 2]] - a)
    normal_vt, distance, ok = _direction(offset, face)
    v, corners, bary, normal_vt, distance = v[ok], corners[ok], bary[ok], normal_vt[ok], distance[ok]
    # each pair of edges once, whichever of the two found it
    first = np.flatnonzero(found.partners >= 0)
    second = found.partners[first]
    parameters = found.parameters[first]
    once = (first < second) | (found.partners[second] != first)
    first, second, parameters = first[once], second[once], parameters[once]
    e, f = edges[first], edges[second]
    s, u = parameters[:, 0], parameters[:, 1]
    across = np.cross(positions[e[:, 1]] - positions[e[:, 0]], positions[f[:, 1]] - positions[f[:, 0]])
    normal_ee, gap, ok = _direction(_on_segment(positions, e, s) - _on_segment(positions, f, u), across)
    e, f, s, u, normal_ee, gap = e[ok], f[ok], s[ok], u[ok], normal_ee[ok], gap[ok]
    contacts = np.concatenate([v, e[:, 0], e[:, 1], f[:, 0], f[:, 1]])
    if contacts.shape[0] == 0:
        return None
    zero = np.zeros_like(s)
    on_f, on_e = np.stack([1.0 - u, u, zero], axis=1), np.stack([1.0 - s, s, zero], axis=1)
    f_corners, e_corners = f[:, [0, 1, 1]], e[:, [0, 1, 1]]
    gaps = np.concatenate([distance, gap, gap, gap, gap])
    return pairs.PairRows(
        other=index, contacts=contacts.astype(np.int64),
        corners=np.concatenate([corners, f_corners, f_corners, e_corners, e_corners]).astype(np.int64),
        barycentric=np.concatenate([bary, on_f, on_f, on_e, on_e]),
        normals=np.concatenate([normal_vt, normal_ee, normal_ee, -normal_ee, -normal_ee]),
        depths=np.full(contacts.shape[0], np.inf), allowances=np.maximum(settings.distance - gaps, 0.0),
        contact=pairs.ContactSettings(settings.distance, settings.static_friction, settings.kinetic_friction))


class Bound:
    """What a substep from ``start`` (float64 [V, 3] [m]) of ``dt`` [s] may reach (``self_contact``
    says why): every free particle's displacement less the body's mean displacement within
    ``BOUND_FRACTION`` of its ``bound`` (float64 [V] [m], ``substep``)."""

    def __init__(self, model: Model, start: np.ndarray, bound: np.ndarray, dt: float) -> None:
        self.model, self.start, self.bound, self.dt = model, start, bound, dt
        self.mean: np.ndarray | None = None

    def within(self, positions: np.ndarray, fraction: float) -> bool:
        """Whether every particle at ``positions`` (float64 [V, 3] [m]) is within ``fraction`` of what
        the bound allows it: pinned and goal-held ones too (they are not bounded, but one that moved
        as far asks for a new search, so a grip animated into the sheet meets its contacts)."""
        relative = positions - self.start - mean_motion(self.model, positions - self.start)
        length = np.sqrt(np.einsum("vk,vk->v", relative, relative))
        return bool(np.all(length <= fraction * BOUND_FRACTION * self.bound))

    def __call__(self, new: State, shown_only: bool = False) -> State:
        """``new`` bounded, its velocity lowered by what the bound took (the displacement counted
        from the search); with ``shown_only``, its shown positions only (the frame's end, its
        positions bounded already), with the mean of the last call."""
        if not shown_only or self.mean is None:
            self.mean = mean_motion(self.model, new.positions - self.start)
        positions = new.positions if shown_only else _limited(self.model, self.start, new.positions, self.mean,
                                                              self.bound)
        shown = new.shown_positions
        if shown is not None:
            shown = _limited(self.model, self.start, shown, self.mean, self.bound)
        velocities = new.velocities if positions is new.positions else \
            new.velocities - (new.positions - positions) / self.dt
        if positions is new.positions and shown is new.shown_positions:
            return new
        return new.moved(positions, velocities, new.rotations, shown, new.history)


def _limited(model: Model, start: np.ndarray, reached: np.ndarray, mean: np.ndarray, bound: np.ndarray) -> np.ndarray:
    """``reached`` (float64 [V, 3] [m]) with every free particle's displacement from ``start`` less
    ``mean`` within ``BOUND_FRACTION`` of its ``bound``; ``reached`` itself when none is over."""
    relative = reached - start - mean
    length = np.sqrt(np.einsum("vk,vk->v", relative, relative))
    allowed = BOUND_FRACTION * bound
    over = (length > allowed) & (model.inverse_masses > 0.0)
    if not over.any():
        return reached
    scale = np.where(over, allowed / np.where(over, length, 1.0), 1.0)
    return np.where(over[:, None], start + mean + relative * scale[:, None], reached)


def _direction(offset: np.ndarray, fallback: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(unit ``offset`` float64 [n, 3], where the features touch the unit ``fallback``; the length of
    ``offset`` [m] float64 [n]; bool [n], where a direction is defined)."""
    length = np.sqrt(np.einsum("nk,nk->n", offset, offset))
    fall = np.sqrt(np.einsum("nk,nk->n", fallback, fallback))
    touching = length <= 1e-12
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = np.where(touching[:, None], fallback / fall[:, None], offset / length[:, None])
    ok = np.all(np.isfinite(unit), axis=1)
    return np.where(ok[:, None], unit, 0.0), length, ok


def _blend(positions: np.ndarray, corners: np.ndarray, bary: np.ndarray) -> np.ndarray:
    return (bary[:, 0, None] * positions[corners[:, 0]] + bary[:, 1, None] * positions[corners[:, 1]]
            + bary[:, 2, None] * positions[corners[:, 2]])


def _on_segment(positions: np.ndarray, edges: np.ndarray, s: np.ndarray) -> np.ndarray:
    a, b = positions[edges[:, 0]], positions[edges[:, 1]]
    return a + s[:, None] * (b - a)


def _import_search() -> ModuleType:
    from . import self_contact_kernel as module

    return module


# Loaded in the background whenever the solver's kernel has loaded.
_SEARCH = backend.Companion(_import_search, "tetrig-self-contact-compile")


def compiled_search(use_kernel: bool | None = None) -> ModuleType | None:
    """The compiled search (``self_contact_kernel``), or ``None`` (``backend.Companion.module``): the
    NumPy reference finds the same pairs."""
    return _SEARCH.module(use_kernel)
