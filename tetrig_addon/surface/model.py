"""The solver model of a surface body: its particles are the mesh's vertices (and the copies a tear
splits off), its elements the springs, hinges and volume triangles of ``mesh``, joined through the
particles each face corner has (``tearing.corner_particles``).

The result is a ``solver.Model`` without tets, stepped by the same block-descent loop as cages
(``solver.step`` with the body's ``SurfaceMaterial``), so pins, goals, the ground, colliders,
friction and the compiled kernel work the same.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from ..errors import TetRigInputError
from ..solver import Model
from ..solver.model import EDGE_SHEAR, EDGE_STRUCTURAL, GOAL_EXACT, build_topology, csr_rows
from .mesh import SurfaceMesh, closure


@dataclass(frozen=True)
class SurfaceModel:
    """A surface body's solver model for one set of torn edges.

    Attributes:
        model: the ``solver.Model``.
        corner_particles: int32 [corner_count], the particle of each face corner.
        particle_vertices: int32 [particle_count], the vertex of each particle.
        row_springs: int32 [side_count + diagonal_count], the spring of each face side, then of
            each diagonal (−1 where both ends share a particle).
        spring_rows: int64 [spring_count], the first row (face side or diagonal) of each spring.
        spring_edges: int32 [spring_count], the mesh edge of each structural spring (−1 for shear).
        hinge_rows: int64 [hinge_count], which of the mesh's hinges each hinge is.
        closed: whether the volume triangles are closed (a tear opens them and the gas escapes).
    """

    model: Model
    corner_particles: np.ndarray
    particle_vertices: np.ndarray
    row_springs: np.ndarray
    spring_rows: np.ndarray
    spring_edges: np.ndarray
    hinge_rows: np.ndarray
    closed: bool

    @property
    def particle_count(self) -> int:
        return int(self.particle_vertices.shape[0])


def build(mesh: SurfaceMesh, rest_positions: np.ndarray, areal_density: float,
          corner_particles: np.ndarray, particle_vertices: np.ndarray,
          pinned: np.ndarray | None = None, goal_weights: np.ndarray | None = None,
          broken_rows: np.ndarray | None = None) -> SurfaceModel:
    """The model of ``mesh`` with the corners' particles given (``tearing.corner_particles``).

    Args:
        mesh: the surface.
        rest_positions: float [vertex_count, 3] [m], the vertices at rest in world space.
        areal_density: mass per area [kg/m²] (density × thickness), > 0.
        corner_particles: int [corner_count]; particle_vertices: int [particle_count].
        pinned: bool [vertex_count] or ``None``: vertices that follow their goal exactly.
        goal_weights: float [vertex_count] in [0, 1] or ``None`` (see ``solver.build_model``).
        broken_rows: bool [side_count + diagonal_count] or ``None``: the face sides, then the
            diagonals, whose springs broke (``tearing``): they have no spring.

    Returns:
        A ``SurfaceModel``.

    Raises:
        TetRigInputError: a density that is not positive.
    """
    if not areal_density > 0.0:
        raise TetRigInputError("Density and thickness must be positive.")
    cp = np.ascontiguousarray(corner_particles, dtype=np.int32)
    pv = np.ascontiguousarray(particle_vertices, dtype=np.int32)
    count = pv.shape[0]
    x0 = np.ascontiguousarray(np.asarray(rest_positions, dtype=np.float64)[pv])
    masses = areal_density * np.bincount(cp, weights=mesh.corner_areas, minlength=count)
    kinematic = np.zeros(count, dtype=bool) if pinned is None else np.asarray(pinned, dtype=bool)[pv]
    goals = np.zeros(count)
    if goal_weights is not None:
        goals = np.clip(np.asarray(goal_weights, dtype=np.float64)[pv], 0.0, 1.0)
        kinematic = kinematic | (goals >= GOAL_EXACT)
        goals = np.where(goals >= GOAL_EXACT, 0.0, goals)
    inverse = np.where(kinematic | (masses <= 0.0), 0.0, 1.0 / np.where(masses > 0.0, masses, 1.0))
    springs, kinds, areas, row_springs, spring_rows = _springs(mesh, cp, broken_rows)
    hinges, keep = _hinges(mesh, cp)
    tri = cp[mesh.triangles]
    shape = closure(x0[tri], tri)
    closed = mesh.closure.closed and shape.closed
    triangles = (tri[:, ::-1] if shape.inward else tri) if closed else np.zeros((0, 3), dtype=np.int32)
    free = inverse > 0.0
    topology = build_topology(count, springs, np.zeros((0, 4), dtype=np.int32), free, coupled=hinges[:, 2:])
    h_offsets, h_order = csr_rows(hinges.reshape(-1).astype(np.int64), count)
    t_offsets, t_order = csr_rows(triangles.reshape(-1).astype(np.int64), count)
    kinematic_corners = (~free)[hinges].sum(1)
    topology = replace(
        topology, hinge_offsets=h_offsets, hinge_ids=(h_order // 4).astype(np.int32),
        hinge_corners=(h_order % 4).astype(np.int32),
        boundary_hinges=np.flatnonzero((kinematic_corners > 0) & (kinematic_corners < 4)).astype(np.int32),
        triangle_offsets=t_offsets, triangle_ids=(t_order // 3).astype(np.int32),
        triangle_corners=(t_order % 3).astype(np.int32))
    rest_lengths = np.linalg.norm(x0[springs[:, 0]] - x0[springs[:, 1]], axis=1)
    model = Model(
        rest_positions=x0, masses=masses, inverse_masses=inverse, edges=springs, rest_lengths=rest_lengths,
        edge_volumes=np.zeros(springs.shape[0]), tets=np.zeros((0, 4), dtype=np.int32),
        rest_volumes=np.zeros(0), inverse_rest_shapes=np.zeros((0, 3, 3)),
        contact_indices=np.ascontiguousarray(np.repeat(np.arange(count, dtype=np.int32)[:, None], 4, axis=1)),
        contact_weights=np.tile([1.0, 0.0, 0.0, 0.0], (count, 1)), goal_weights=np.where(free, goals, 0.0),
        topology=topology, edge_kinds=kinds, edge_areas=areas, hinges=hinges,
        rest_angles=np.ascontiguousarray(mesh.rest_angles[keep]),
        hinge_weights=np.ascontiguousarray(mesh.hinge_weights[keep]),
        triangles=np.ascontiguousarray(triangles, dtype=np.int32),
        rest_enclosed_volume=shape.rest_volume if closed else 0.0)
    side_count = mesh.side_corners.shape[0]
    edges = np.where(kinds == EDGE_STRUCTURAL, mesh.side_edges[np.minimum(spring_rows, side_count - 1)], -1)
    return SurfaceModel(model=model, corner_particles=cp, particle_vertices=pv, row_springs=row_springs,
                        spring_rows=spring_rows, spring_edges=edges.astype(np.int32), hinge_rows=keep,
                        closed=closed)


def _springs(mesh: SurfaceMesh, cp: np.ndarray, broken_rows: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """The springs between particles: every face side (structural) and diagonal (shear) that is
    not broken, the rows that join the same two particles as one kind merged into one spring
    standing for their summed area. Returns (ends int32 [S, 2], kinds int8 [S], areas [S] [m²], row_springs int32 [R],
    spring_rows int64 [S]: each spring's first row)."""
    corners = np.concatenate([mesh.side_corners, mesh.diagonal_corners])
    kinds = np.concatenate([np.full(mesh.side_corners.shape[0], EDGE_STRUCTURAL),
                            np.full(mesh.diagonal_corners.shape[0], EDGE_SHEAR)]).astype(np.int64)
    areas = np.concatenate([mesh.side_areas, mesh.diagonal_areas])
    ends = np.sort(cp[corners], axis=1).astype(np.int64)
    valid = ends[:, 0] != ends[:, 1]
    if broken_rows is not None:
        valid &= ~broken_rows
    keys = np.stack([ends[:, 0], ends[:, 1], kinds], axis=1)[valid]
    unique, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    row_springs = np.full(corners.shape[0], -1, dtype=np.int32)
    row_springs[valid] = inverse
    rows = np.flatnonzero(valid)
    return (np.ascontiguousarray(unique[:, :2], dtype=np.int32), unique[:, 2].astype(np.int8),
            np.bincount(inverse, weights=areas[valid], minlength=unique.shape[0]), row_springs, rows[first])


def _hinges(mesh: SurfaceMesh, cp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(hinges by particle int32 [H, 4], which of the mesh's hinges they are int64 [H]): those
    whose edge is not torn (a and a′, b and b′ share their particles) and whose four corners are
    four particles."""
    p = cp[mesh.hinge_corners]
    keep = (p[:, 0] == p[:, 4]) & (p[:, 1] == p[:, 5])
    four = p[:, :4]
    distinct = np.ones(p.shape[0], dtype=bool)
    for i in range(4):
        for j in range(i + 1, 4):
            distinct &= four[:, i] != four[:, j]
    keep = np.flatnonzero(keep & distinct)
    return np.ascontiguousarray(four[keep], dtype=np.int32), keep
