"""The static description of a cage for simulation (``Model``, built once per bind) and what
changes every step (``State``).

Names follow Newton (NVIDIA Warp): ``Model`` is static, ``State`` changes every step. The model
also holds the topology both solver backends read: a colouring of the control points (no two
points of one colour share a tet, so a colour's points can be solved in any order, or together)
and, for every point, the edges and tets around it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Self

import numpy as np

from ..errors import TetRigInputError
from ..geometry import inverse3, tet_volumes, unique_edges
from .topology import TET_FACES, Topology, build_topology, color_points, csr_rows, free_components  # noqa: F401

# (``TET_FACES``, ``Topology`` and the builders live in ``topology``; they are named here too, where
# the model's users have always imported them.)

# A goal weight at least this is 1: the point follows its goal exactly (kinematic).
GOAL_EXACT = 1.0 - 1e-6

# The kinds of a surface body's springs (``Model.edge_kinds``).
EDGE_STRUCTURAL = 1
EDGE_SHEAR = 2

# Smallest positive float: a denominator floor that never changes a non-zero one.
TINY = float(np.finfo(np.float64).tiny)


@dataclass(frozen=True)
class Model:
    """Static description of a cage for simulation.

    Attributes:
        rest_positions: float64 [particle_count, 3] [m], control points at rest (world space).
        masses: float64 [particle_count] [kg], lumped (ρ·V/4 per tet corner), pins included.
        inverse_masses: float64 [particle_count] [1/kg]; 0 for kinematic points (pinned, or goal
            weight 1), which follow their goal exactly.
        edges: int32 [edge_count, 2], unique tet edges.
        rest_lengths: float64 [edge_count] [m].
        edge_volumes: float64 [edge_count] [m³], the rest volume an edge stands for (a sixth of
            each incident tet's); an edge spring of modulus E_s has stiffness E_s·V_e/l₀².
        tets: int32 [tet_count, 4], positively oriented.
        rest_volumes: float64 [tet_count] [m³], > 0.
        inverse_rest_shapes: float64 [tet_count, 3, 3] [1/m], D_m⁻¹ (continuum model).
        contact_indices: int32 [contact_count, 4], control points of the mesh vertices that
            collide (normally every vertex): the mesh, not the cage, touches the ground.
        contact_weights: float64 [contact_count, 4], their barycentric weights.
        goal_weights: float64 [particle_count] in [0, 1): goal spring weight of each free point.
        topology: ``Topology``.

    A surface body (``surface.model``) has no tets; its edges are springs of two kinds, and it has
    hinges and, when closed, the triangles of its enclosed volume:
        edge_kinds: int8 [edge_count], ``EDGE_STRUCTURAL`` or ``EDGE_SHEAR`` (empty for cages).
        edge_areas: float64 [edge_count] [m²], the area a spring stands for (k = modulus·A/l₀²).
        hinges: int32 [hinge_count, 4], (a, b, c, d): triangles (a, b, c) and (b, a, d) (``bending``).
        rest_angles: float64 [hinge_count] [rad], their dihedral angles at rest.
        hinge_weights: float64 [hinge_count], |ē|²/(Ā₁ + Ā₂) (k = bending·weight).
        triangles: int32 [triangle_count, 3], outward, of the enclosed volume (empty when open).
        rest_enclosed_volume: V₀ [m³] (0 when open).
    """

    rest_positions: np.ndarray
    masses: np.ndarray
    inverse_masses: np.ndarray
    edges: np.ndarray
    rest_lengths: np.ndarray
    edge_volumes: np.ndarray
    tets: np.ndarray
    rest_volumes: np.ndarray
    inverse_rest_shapes: np.ndarray
    contact_indices: np.ndarray
    contact_weights: np.ndarray
    goal_weights: np.ndarray
    topology: Topology
    edge_kinds: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int8))
    edge_areas: np.ndarray = field(default_factory=lambda: np.zeros(0))
    hinges: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), dtype=np.int32))
    rest_angles: np.ndarray = field(default_factory=lambda: np.zeros(0))
    hinge_weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), dtype=np.int32))
    rest_enclosed_volume: float = 0.0

    @property
    def particle_count(self) -> int:
        return int(self.rest_positions.shape[0])

    @cached_property
    def extent(self) -> float:
        """The longest side of the rest positions' bounding box [m] (the contacts' margin scales
        with it each frame; computed once per model)."""
        return float(np.ptp(self.rest_positions, axis=0).max()) if self.particle_count else 0.0

    @property
    def edge_count(self) -> int:
        return int(self.edges.shape[0])

    @property
    def tet_count(self) -> int:
        return int(self.tets.shape[0])


@dataclass
class State:
    """What changes every step.

    Attributes:
        positions: float64 [particle_count, 3] [m].
        velocities: float64 [particle_count, 3] [m/s].
        rotations: float64 [tet_count, 4], each tet's rotation as a unit quaternion (w, x, y, z),
            the continuum model's running estimate of R in F = R·S (identity otherwise).
        shown_positions: float64 [particle_count, 3] [m] or None: what the frame shows, the
            positions with penetrating contact points moved onto their surfaces; the next step
            starts from ``positions`` (the dynamics are the penalty contact's).
        rest_lengths: float64 [edge_count] [m] or ``None``: the edges' rest lengths where
            plasticity changed them (``solver.plasticity``), else the model's.
        inverse_rest_shapes: float64 [tet_count, 3, 3] [1/m] or ``None``: the continuum tets'
            D_m⁻¹ where plasticity changed them, else the model's.
        rest_angles: float64 [hinge_count] [rad] or ``None``: a surface body's hinges' rest angles
            where plasticity changed them, else the model's.
        history: ``None``, or BDF2's second point (``integrator``): the positions [m] and velocities
            [m/s] (float64 [particle_count, 3]) of the substep before the last, and its length [s].

    The rest data are part of the frame's state (a dent made at frame 10 is still there at frame
    11, whether 11 was played or jumped to); ``solver.step`` reads them in place of the model's.
    """

    positions: np.ndarray
    velocities: np.ndarray
    rotations: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    shown_positions: np.ndarray | None = None
    rest_lengths: np.ndarray | None = None
    inverse_rest_shapes: np.ndarray | None = None
    rest_angles: np.ndarray | None = None
    history: tuple[np.ndarray, np.ndarray, float] | None = None

    def copy(self) -> "State":
        """A deep copy (the fields of a subclass included)."""
        out = copy.copy(self)
        for name, value in vars(self).items():
            if isinstance(value, np.ndarray):
                setattr(out, name, value.copy())
        return out

    def moved(self, positions: np.ndarray, velocities: np.ndarray, rotations: np.ndarray,
              shown_positions: np.ndarray | None = None, history: tuple | None = None) -> "State":
        """This state with a step's new positions, velocities, rotations, shown positions and
        history (``None``: none): the rest data and the fields of a subclass carry over (shared)."""
        out = copy.copy(self)
        out.positions, out.velocities, out.rotations = positions, velocities, rotations
        out.shown_positions = shown_positions
        out.history = history
        return out

    def shown(self) -> np.ndarray:
        """The positions to show: ``shown_positions`` when the step set them (the contacts'
        resting depth taken out, ``contacts.project_out``), else ``positions``."""
        return self.positions if self.shown_positions is None else self.shown_positions

    def finite(self) -> bool:
        """Whether every position and velocity is finite (``timeline.FrameState``)."""
        return bool(np.all(np.isfinite(self.positions)) and np.all(np.isfinite(self.velocities)))

    def halted(self) -> Self:
        """``moved`` where it is, at rest: zero velocities (``timeline.FrameState``)."""
        return replace(self, velocities=np.zeros_like(self.velocities), shown_positions=None, history=None)


def rest_state(model: Model) -> State:
    """The state at the start frame: rest positions, zero velocity, identity rotations."""
    return State(model.rest_positions.copy(), np.zeros_like(model.rest_positions), identity_rotations(model.tet_count))


def identity_rotations(tet_count: int) -> np.ndarray:
    """float64 [tet_count, 4]: every tet's rotation the identity quaternion (w, x, y, z) = (1, 0, 0, 0)."""
    rotations = np.zeros((tet_count, 4))
    rotations[:, 0] = 1.0
    return rotations


def lumped_masses(positions: np.ndarray, tets: np.ndarray, density: float) -> np.ndarray:
    """Lumped masses: each tet gives ρ·V/4 to each of its four control points.

    Args:
        positions: float [particle_count, 3] [m].
        tets: int [tet_count, 4].
        density: ρ [kg/m³].

    Returns:
        float64 [particle_count] [kg].
    """
    vol = np.abs(tet_volumes(positions, tets))
    return np.bincount(np.asarray(tets).ravel(), weights=np.repeat(vol * density / 4.0, 4),
                       minlength=positions.shape[0])


def build_model(rest_positions: np.ndarray, tets: np.ndarray, density: float = 1000.0,
                pinned: np.ndarray | None = None,
                contacts: tuple[np.ndarray, np.ndarray] | None = None,
                goal_weights: np.ndarray | None = None) -> Model:
    """Build the static simulation model of a cage.

    Args:
        rest_positions: float [particle_count, 3] [m], control points at rest, world space.
        tets: int [tet_count, 4].
        density: ρ [kg/m³], > 0.
        pinned: bool [particle_count] or ``None``; pinned control points follow their goal (their
            rest position, carried by the animation) exactly.
        contacts: (int [contact_count, 4] indices, float [contact_count, 4] weights) of the mesh
            vertices that collide, or ``None`` to collide with the control points themselves.
        goal_weights: float [particle_count] in [0, 1] or ``None``; weight 1 pins the point,
            0 < weight < 1 pulls it to its goal with a spring (``SimSettings.goal_stiffness``).

    Returns:
        A ``Model``.

    Raises:
        TetRigInputError: non-positive density, a cage without tets, or a flat tet.
    """
    if not density > 0.0:
        raise TetRigInputError("Density must be positive.")
    x0 = np.asarray(rest_positions, dtype=np.float64)
    tets = np.asarray(tets, dtype=np.int32).copy()
    if tets.shape[0] == 0:
        raise TetRigInputError("The cage has no tets.")
    # A mirroring world matrix (negative scale) turns every tet inside out: orient them again.
    inverted = tet_volumes(x0, tets) < 0.0
    tets[inverted] = tets[inverted][:, [0, 1, 3, 2]]
    n = x0.shape[0]
    masses = lumped_masses(x0, tets, density)
    with np.errstate(divide="ignore"):
        inv = np.where(masses > 0.0, 1.0 / masses, 0.0)
    goals = np.zeros(n)
    kinematic = np.zeros(n, dtype=bool) if pinned is None else np.asarray(pinned, dtype=bool).copy()
    if goal_weights is not None:
        goals = np.clip(np.asarray(goal_weights, dtype=np.float64), 0.0, 1.0)
        kinematic |= goals >= GOAL_EXACT
        goals = np.where(goals >= GOAL_EXACT, 0.0, goals)
    inv = np.where(kinematic, 0.0, inv)
    edges = unique_edges(tets).astype(np.int32)
    rest_lengths = np.linalg.norm(x0[edges[:, 0]] - x0[edges[:, 1]], axis=1)
    volumes = tet_volumes(x0, tets)
    if contacts is None:  # the control points themselves
        contacts = (np.repeat(np.arange(n)[:, None], 4, axis=1),
                    np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)))
    return Model(rest_positions=x0, masses=masses, inverse_masses=inv, edges=edges,
                 rest_lengths=rest_lengths, edge_volumes=_edge_volumes(edges, tets, volumes, n),
                 tets=tets, rest_volumes=volumes, inverse_rest_shapes=inverse_rest_shapes(x0, tets),
                 contact_indices=np.asarray(contacts[0], dtype=np.int32),
                 contact_weights=np.asarray(contacts[1], dtype=np.float64),
                 goal_weights=np.where(inv > 0.0, goals, 0.0),
                 topology=build_topology(n, edges, tets, inv > 0.0))


# with_rest: a posed tet smaller than this share of its bound volume keeps its bound rest shape.
POSED_MIN_VOLUME_SHARE = 0.25


def with_rest(model: Model, rest_positions: np.ndarray) -> Model:
    """``model`` with another rest shape (a posed mesh's, ``cage.posing``): rest lengths,
    volumes and D_m⁻¹ of the new shape; masses, pins, goals, contacts and topology kept (the mass
    does not change when a limb bends).

    Args:
        rest_positions: float [particle_count, 3] [m].

    A tet that the new shape squeezes below ``POSED_MIN_VOLUME_SHARE`` of ``model``'s rest volume,
    or turns inside out (a pose map is smooth, not injective: a bent joint can fold tets of the
    margin), keeps ``model``'s volume and D_m⁻¹ instead: a flat or inverted rest shape would make
    that tet infinitely stiff or push it inside out.
    """
    x0 = np.asarray(rest_positions, dtype=np.float64)
    edges = model.edges
    volumes = tet_volumes(x0, model.tets)
    folded = volumes < POSED_MIN_VOLUME_SHARE * model.rest_volumes
    volumes = np.where(folded, model.rest_volumes, volumes)
    inverse = model.inverse_rest_shapes.copy()
    if np.any(~folded):
        inverse[~folded] = inverse_rest_shapes(x0, model.tets[~folded])
    return replace(
        model, rest_positions=x0,
        rest_lengths=np.linalg.norm(x0[edges[:, 0]] - x0[edges[:, 1]], axis=1),
        edge_volumes=_edge_volumes(edges, model.tets, volumes, model.particle_count),
        rest_volumes=volumes, inverse_rest_shapes=inverse)


def inverse_rest_shapes(positions: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """D_m⁻¹ of every tet: float64 [tet_count, 3, 3] [1/m], D_m = [x₁−x₀, x₂−x₀, x₃−x₀] (columns).

    Raises:
        TetRigInputError: a tet with zero volume (D_m singular).
    """
    p = np.asarray(positions, dtype=np.float64)[np.asarray(tets)]
    dm = np.transpose(p[:, 1:] - p[:, :1], (0, 2, 1))
    if dm.shape[0] == 0:
        return np.zeros((0, 3, 3))
    if np.any(np.abs(np.linalg.det(dm)) <= TINY):
        raise TetRigInputError("The cage has a flat tet; press Build Cage again.")
    return inverse3(dm)


def _edge_volumes(edges: np.ndarray, tets: np.ndarray, volumes: np.ndarray,
                  particle_count: int) -> np.ndarray:
    """Rest volume each edge represents: a sixth of the volume of every tet containing it."""
    pairs = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    tet_edges = np.sort(tets[:, pairs].reshape(-1, 2).astype(np.int64), axis=1)
    keys = tet_edges[:, 0] * particle_count + tet_edges[:, 1]
    edge_keys = edges[:, 0].astype(np.int64) * particle_count + edges[:, 1]
    order = np.argsort(edge_keys)
    slot = order[np.searchsorted(edge_keys[order], keys)]
    return np.bincount(slot, weights=np.repeat(np.abs(volumes) / 6.0, 6), minlength=edges.shape[0])
