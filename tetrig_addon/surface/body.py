"""A surface body frame by frame: its state (positions of the particles, rest data, torn edges),
its models for each set of torn edges, and one frame's step with plasticity and tearing.

A frame is one ``solver.step`` of all its substeps; a body that can tear steps substep by substep
instead and looks for overstretched springs after each, so a tear runs through the sheet at the
substep rate, not the frame rate. Everything is a function of the previous state, so the state at
frame F is the same however it is reached (``timeline.FrameCache``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from .. import colliders as collision
from ..body import Control
from ..errors import TetRigInputError
from ..solver import SimSettings, State, step
from ..solver.model import EDGE_STRUCTURAL
from ..solver.plasticity import PlasticSettings
from ..solver import pairs, self_rows
from ..solver.self_contact import SelfCollision
from ..solver.settings import SurfaceMaterial
from . import model as surface_model
from . import tearing
from .mesh import SurfaceMesh

# Models kept per body, for the last few sets of torn edges asked for.
MODEL_CACHE_SIZE = 4
# The fan triangles on the particles of the last few Surface models asked for (``surface_triangles``):
# the same array object each frame, so the contacts' surface facts are told once (``solver.pairs``).
_TRIANGLES_CACHE_SIZE = 16
_triangles_cache: dict[int, tuple[surface_model.SurfaceModel, np.ndarray]] = {}


@dataclass
class SurfaceState(State):
    """A surface body's ``State`` and what tore (``tearing``), for the rest of playback:

    Attributes:
        torn: bool [edge_count], the mesh's edges a crack runs along: the faces on either side
            no longer share the edge's vertices (each keeps its own spring along it).
        broken: bool [side_count + diagonal_count], the face sides, then the diagonals, whose
            springs broke without a crack to relieve them (``tearing.crack_edges``): gone.
    """

    torn: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    broken: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


@dataclass(frozen=True)
class SplitMesh:
    """The mesh to show for a state: the vertices along torn edges duplicated, one per fan of
    faces still joined (``tearing``).

    Attributes:
        positions: float64 [particle_count, 3] [m], world space: vertex v < vertex_count is the
            mesh's own vertex v; the rest are the copies a tear split off.
        corner_vertices: int32 [corner_count], the vertex of every face corner in this mesh (the
            faces keep their order and sizes; only the corners of split vertices change).
        source_vertices: int32 [particle_count], the original vertex each vertex copies (for
            its attributes: UVs stay on the corners, vertex groups and colours follow this).
    """

    positions: np.ndarray
    corner_vertices: np.ndarray
    source_vertices: np.ndarray


class SurfaceBody:
    """A surface body: its mesh, rest pose, mass, pins and goal weights, and its models.

    Args:
        mesh: the surface (``mesh.surface_mesh``).
        rest_positions: float [vertex_count, 3] [m], the vertices at rest in world space.
        areal_density: mass per area [kg/m²] (density × thickness).
        pinned: bool [vertex_count] or ``None``; goal_weights: float [vertex_count] or ``None``
            (weight 1 pins; see ``solver.build_model``).
        name: the object's name, for messages.

    Raises:
        TetRigInputError: a density that is not positive.
    """

    def __init__(self, mesh: SurfaceMesh, rest_positions: np.ndarray, areal_density: float,
                 pinned: np.ndarray | None = None, goal_weights: np.ndarray | None = None,
                 name: str = "The mesh") -> None:
        self.mesh = mesh
        self.name = name
        self.rest_positions = np.ascontiguousarray(rest_positions, dtype=np.float64)
        self.areal_density = float(areal_density)
        self.pinned = pinned
        self.goal_weights = goal_weights
        self._models: dict[bytes, surface_model.SurfaceModel] = {}
        self._cracks = tearing.CrackFinder(mesh)
        self.model_for(np.zeros(mesh.edge_count, dtype=bool))  # checks the inputs now

    @property
    def row_count(self) -> int:
        """Face sides + diagonals: the rows of ``SurfaceState.broken``."""
        return int(self.mesh.side_corners.shape[0] + self.mesh.diagonal_corners.shape[0])

    def model_for(self, torn: np.ndarray, broken: np.ndarray | None = None) -> surface_model.SurfaceModel:
        """The model with the edges ``torn`` (bool [edge_count], or empty for none) torn and the
        spring rows ``broken`` (bool [side_count + diagonal_count], empty or ``None`` for none)
        broken."""
        torn = np.zeros(self.mesh.edge_count, dtype=bool) if torn.shape[0] == 0 else torn
        if broken is None or broken.shape[0] == 0:
            broken = np.zeros(self.row_count, dtype=bool)
        key = np.packbits(np.concatenate([torn, broken])).tobytes()
        cached = self._models.get(key)
        if cached is None:
            corners, vertices = tearing.corner_particles(self.mesh, torn)
            cached = surface_model.build(self.mesh, self.rest_positions, self.areal_density, corners,
                                         vertices, self.pinned, self.goal_weights, broken)
            if len(self._models) >= MODEL_CACHE_SIZE:
                self._models.pop(next(iter(self._models)))
            self._models[key] = cached
        return cached

    def rest_state(self) -> SurfaceState:
        """The state at the start frame: every vertex at rest, nothing torn."""
        rest = self.model_for(np.zeros(0, dtype=bool)).model.rest_positions
        return SurfaceState(rest.copy(), np.zeros_like(rest), np.zeros((0, 4)),
                            torn=np.zeros(self.mesh.edge_count, dtype=bool),
                            broken=np.zeros(self.row_count, dtype=bool))

    def check(self, material: SurfaceMaterial) -> None:
        """Raise ``TetRigInputError`` when the material cannot work on this mesh: pressure on a
        surface that does not enclose a volume (the message says why and what to do)."""
        material.validated()
        if material.pressure > 0.0 and not self.mesh.closure.closed:
            raise TetRigInputError(self.mesh.closure.problem(self.name) + ".")

    def advance(self, state: SurfaceState, settings: SimSettings, material: SurfaceMaterial,
                frame_dt: float, goals: tuple[np.ndarray, np.ndarray] | None = None,
                colliders: Sequence[collision.Collider] = (),
                plastic: PlasticSettings | None = None,
                tear: tearing.TearSettings | None = None, use_kernel: bool | None = None) -> SurfaceState:
        """One frame from ``state`` (not modified).

        Args:
            settings: the step settings. A surface body uses ``substeps``, ``iterations``,
                ``damping``, ``gravity``, the ground's, ``max_speed`` and the goals'; its springs'
                stiffness comes from ``material`` (``mode``, ``youngs_modulus``,
                ``volume_stiffness``, ``use_volume`` and ``stiffness`` are the cages').
            material: the springs', hinges' and gas's stiffness.
            frame_dt: [s].
            goals: (start, end), float [vertex_count, 3] [m] each: the vertices' goals at the
                frame's start and end, or ``None`` for their rest positions.
            colliders: the frame's collision objects.
            plastic: plasticity (``solver.PlasticSettings``), or ``None``.
            tear: tearing (``tearing.TearSettings``), or ``None``. A body that can tear steps one
                substep at a time (the contacts are planned each substep, not each frame).
            use_kernel: see ``solver.step``.

        Returns:
            The ``SurfaceState`` at the frame's end.

        Raises:
            TetRigInputError: pressure on a mesh that is not closed (``check``), or plasticity or
                tearing settings out of range.
        """
        self.check(material)
        if tear is not None:
            tear.validated()
        if plastic is not None:
            plastic.validated()
        chunks = settings.substeps if tear is not None else 1
        chunk = replace(settings, substeps=settings.substeps // chunks)
        dt = frame_dt / chunks
        for k in range(chunks):
            current = self.model_for(state.torn, state.broken)
            chunk_goals = None
            if goals is not None:
                start, end = goals
                particles = current.particle_vertices
                chunk_goals = (start[particles] + (end - start)[particles] * (k / chunks),
                               start[particles] + (end - start)[particles] * ((k + 1) / chunks))
            result = step(current.model, state, chunk, dt, goals=chunk_goals, colliders=colliders,
                          use_kernel=use_kernel, surface=material, plastic=plastic)
            assert isinstance(result, SurfaceState)
            state = result
            if tear is not None:
                state = self._tear(current, state, tear)
        return state

    def torn(self, state: SurfaceState, tear: tearing.TearSettings) -> SurfaceState:
        """``state`` after the tear check ``advance`` makes after each substep (``_tear``): the same
        state when no spring is overstretched, else one on the model of its new torn edges, the split
        particles appended (``tearing.carried_particles``). For bodies stepped together (``touching``)."""
        return self._tear(self.model_for(state.torn, state.broken), state, tear)

    def _tear(self, current: surface_model.SurfaceModel, state: SurfaceState,
              tear: tearing.TearSettings) -> SurfaceState:
        """The state with the overstretched springs relieved, carried onto the new model: a
        structural spring opens a crack across it (``tearing.CrackFinder``), a shear spring or one
        no crack can relieve breaks."""
        model = current.model
        x = state.positions
        lengths = np.linalg.norm(x[model.edges[:, 0]] - x[model.edges[:, 1]], axis=1)
        rest = model.rest_lengths if state.rest_lengths is None else state.rest_lengths
        over = tearing.overstretched(lengths, rest, tear)
        if not over.any():
            return state
        structural = model.edge_kinds == EDGE_STRUCTURAL
        torn, stuck = self._cracks.crack(np.unique(current.spring_edges[over & structural]), state.torn)
        broken = state.broken.copy()
        breaking = np.flatnonzero(over & ~structural)
        rows = np.flatnonzero(np.isin(current.row_springs, breaking))
        broken[rows] = True
        broken[:self.mesh.side_corners.shape[0]] |= stuck[self.mesh.side_edges]
        new = self.model_for(torn, broken)
        carry = tearing.carried_particles(current.corner_particles, new.corner_particles, new.particle_count)
        shown = None if state.shown_positions is None else state.shown_positions[carry]
        history = None if state.history is None else (state.history[0][carry], state.history[1][carry],
                                                        state.history[2])
        out = state.moved(x[carry], state.velocities[carry], state.rotations, shown, history)
        assert isinstance(out, SurfaceState)
        out.torn = torn
        out.broken = broken
        if state.rest_lengths is not None:
            out.rest_lengths = state.rest_lengths[current.row_springs[new.spring_rows]]
        if state.rest_angles is not None:
            position = np.full(self.mesh.hinge_corners.shape[0], -1, dtype=np.int64)
            position[current.hinge_rows] = np.arange(current.hinge_rows.shape[0])
            out.rest_angles = state.rest_angles[position[new.hinge_rows]]
        return out

    def vertex_positions(self, state: SurfaceState) -> np.ndarray:
        """Each vertex's own particle (its first fan): float64 [vertex_count, 3] [m]."""
        return state.positions[:self.mesh.vertex_count]

    def split_mesh(self, state: SurfaceState) -> SplitMesh:
        """The mesh to show at ``state`` (``SplitMesh``): as many vertices as particles, the
        positions the frame shows (``State.shown``), and the faces' corners on them."""
        current = self.model_for(state.torn, state.broken)
        return SplitMesh(positions=state.shown(), corner_vertices=current.corner_particles,
                         source_vertices=current.particle_vertices)

    def corner_positions(self, state: SurfaceState) -> np.ndarray:
        """Each face corner's particle: float64 [corner_count, 3] [m] (differs from its vertex's
        own particle where a tear split the vertex)."""
        return state.positions[self.model_for(state.torn, state.broken).corner_particles]


def surface_triangles(sim: "SurfaceSim", current: surface_model.SurfaceModel) -> np.ndarray:
    """The faces of ``sim``'s mesh fanned into triangles on the particles of ``current`` (its model
    for a set of torn edges): int32 [triangle_count, 3], the mesh's winding."""
    cached = _triangles_cache.get(id(current))
    if cached is not None and cached[0] is current:
        return cached[1]
    triangles = np.ascontiguousarray(current.corner_particles[sim.body.mesh.triangles], dtype=np.int32)
    if len(_triangles_cache) >= _TRIANGLES_CACHE_SIZE:
        _triangles_cache.pop(next(iter(_triangles_cache)))
    _triangles_cache[id(current)] = (current, triangles)
    return triangles


@dataclass(frozen=True, eq=False)
class SurfaceSim:
    """A Surface body with its settings as a ``body.Body`` (``SurfaceBody`` is its model, built
    once from the rest data); the state is a ``SurfaceState``.

    Attributes:
        body: the ``SurfaceBody``.
        settings, material, plastic, tear: as ``SurfaceBody.advance`` takes them; each step takes
            the gravity from the control.
        self_collision: its self-contact (``solver.self_contact``), or ``None``: it passes through
            itself.
    """

    body: SurfaceBody
    settings: SimSettings
    material: SurfaceMaterial
    plastic: PlasticSettings | None = None
    tear: tearing.TearSettings | None = None
    self_collision: SelfCollision | None = None

    def rest_state(self, start: Control) -> SurfaceState:
        """The start frame's state (``SurfaceBody.rest_state``), or, for a mesh posed before the
        body (``start.rest``, float64 [vertex_count, 3] [m], world space), at rest in that pose."""
        state = self.body.rest_state()
        return state if start.rest is None else replace(state, positions=np.asarray(start.rest))

    def step(self, state: SurfaceState, control: Control) -> SurfaceState:
        """One frame (``SurfaceBody.advance``) with the control's goals and colliders.

        Raises:
            what ``SurfaceBody.advance`` raises.
        """
        if self.self_collision is not None:
            return self._step_self(state, control, self.self_collision)
        settings = replace(self.settings, gravity=control.gravity)
        return self.body.advance(state, settings, self.material, control.frame_dt, goals=control.goals,
                                 colliders=control.colliders, plastic=self.plastic, tear=self.tear)

    def member(self, state: SurfaceState, control: Control) -> pairs.Member:
        """This body at ``state`` with the frame's inputs ``control``, as ``solver.pairs`` steps it
        (``touching_members.frame_member``): its particles, its faces on them.

        Raises:
            TetRigInputError: its material, plasticity or tearing out of range (``SurfaceBody.check``).
        """
        self.body.check(self.material)
        for extra in (self.plastic, self.tear):
            if extra is not None:
                extra.validated()
        current = self.body.model_for(state.torn, state.broken)
        goals = None
        if control.goals is not None:
            particles = current.particle_vertices
            goals = (np.asarray(control.goals[0])[particles], np.asarray(control.goals[1])[particles])
        return pairs.Member(current.model, state, replace(self.settings, gravity=control.gravity),
                            control.frame_dt, goals, tuple(control.colliders), self.plastic,
                            surface_triangles(self, current), self.material)

    def _step_self(self, state: SurfaceState, control: Control, own: SelfCollision) -> SurfaceState:
        """One frame colliding with itself (``solver.self_contact``): substep by substep, its
        contacts with itself found before a substep (``self_rows.every_substep``); one that tears
        steps as frames of one substep each, torn after each (as ``touching_members.step_in_substeps``
        steps a set)."""
        parts = 1 if self.tear is None else self.settings.substeps
        for k in range(parts):
            member = self.member(state, control.part(k, parts))
            if parts > 1:
                member = replace(member, settings=replace(member.settings, substeps=1))
            assert member.triangles is not None
            hook = self_rows.every_substep(0, own, member.triangles, self_rows.compiled_search())
            stepped = pairs.step_coupled([member], [[]], pairs.ContactSettings(), None, [hook])[0]
            assert isinstance(stepped, SurfaceState)
            state = stepped if self.tear is None else self.body.torn(stepped, self.tear)
        return state

    def shown(self, state: SurfaceState) -> SplitMesh:
        """The mesh the frame shows (``SurfaceBody.split_mesh``)."""
        return self.body.split_mesh(state)
