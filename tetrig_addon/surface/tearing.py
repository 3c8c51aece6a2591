"""Tearing: springs stretched beyond a threshold break for good. A broken structural spring tears
its mesh edge: the springs along the edge (one per face side) are gone, and the vertices along
torn edges split into one particle per fan of faces still joined. A broken shear spring (a face's
diagonal) is only gone. The broken set (``SurfaceState.torn`` and ``broken_diagonals``) is the
frame's whole tearing state.

A vertex's face corners stay on one particle while the faces around it are joined through edges
that are not torn; a torn edge separates them, so a tear through the middle of a sheet opens once
two edges at a vertex have torn (or one at the border). Which particle a corner has is a function
of the set of torn edges alone (``corner_particles``): the first fan of a vertex (the one holding
its lowest corner) keeps the vertex's own particle, the others are numbered after the vertices in
the order of their lowest corner. A state that tears more is carried over particle by particle
through each new particle's lowest corner (``carried_particles``), so the torn set is the frame's
whole tearing state: the same on playback, a jump, a bake and after reloading.

Seed 004 §6.4 (break springs beyond a limit, separate the particles at the break); the per-fan
vertex split is the usual way to make a mesh tear along its edges (e.g. Pfaff et al. 2014,
"Adaptive Tearing and Cracking of Thin Sheets", for sheets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from ..errors import TetRigInputError
from .mesh import SurfaceMesh


@dataclass(frozen=True)
class TearSettings:
    """When a spring tears.

    Attributes:
        threshold: the stretch (L − l₀)/l₀ beyond which a spring breaks (> 0;
            0.5: at 150 % of its rest length).
    """

    threshold: float = 0.5

    def validated(self) -> "TearSettings":
        """Return self after checking the range; raises TetRigInputError with a user message."""
        if not self.threshold > 0.0:
            raise TetRigInputError("The tear stretch must be positive.")
        return self


def corner_particles(mesh: SurfaceMesh, torn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The particle of every face corner when the edges ``torn`` are torn (see the module).

    Args:
        mesh: the surface.
        torn: bool [edge_count].

    Returns:
        (int32 [corner_count] particle of each corner, int32 [particle_count] vertex of each
        particle): particle v < vertex_count is vertex v; the others are split-off copies.
    """
    n = mesh.vertex_count
    cv = mesh.corner_vertices
    if not np.any(torn):
        return cv.copy(), np.arange(n, dtype=np.int32)
    sides, edges = mesh.side_corners, mesh.side_edges
    order = np.argsort(edges, kind="stable")
    e_sorted = edges[order]
    first = np.flatnonzero(np.concatenate([[True], e_sorted[1:] != e_sorted[:-1]]))
    lead = order[np.repeat(first, np.diff(np.concatenate([first, [order.shape[0]]])))]
    join = (lead != order) & ~torn[e_sorted]
    a, b = sides[lead[join]], sides[order[join]]
    same = cv[a[:, 0]] == cv[b[:, 0]]  # the two faces wind the edge the same way
    pairs = np.concatenate([np.stack([a[:, 0], np.where(same, b[:, 0], b[:, 1])], axis=1),
                            np.stack([a[:, 1], np.where(same, b[:, 1], b[:, 0])], axis=1)])
    count = cv.shape[0]
    graph = coo_matrix((np.ones(pairs.shape[0]), (pairs[:, 0], pairs[:, 1])), shape=(count, count))
    _, labels = connected_components(graph, directed=False)
    touched = np.zeros(n, dtype=bool)
    touched[mesh.edges[torn].ravel()] = True
    # one component per vertex that no torn edge touches
    labels = np.where(touched[cv], labels, labels.max(initial=-1) + 1 + cv)
    lowest = np.full(labels.max() + 1, count, dtype=np.int64)
    np.minimum.at(lowest, labels, np.arange(count))
    vertex_lowest = np.full(n, count, dtype=np.int64)
    np.minimum.at(vertex_lowest, cv, np.arange(count))
    primary = labels == labels[vertex_lowest[cv]]
    extra_labels = np.unique(labels[~primary])
    rank = np.full(labels.max() + 1, -1, dtype=np.int64)
    rank[extra_labels[np.argsort(lowest[extra_labels], kind="stable")]] = np.arange(extra_labels.shape[0])
    particles = np.where(primary, cv, n + rank[labels]).astype(np.int32)
    vertices = np.concatenate([np.arange(n), cv[np.sort(lowest[extra_labels])]]).astype(np.int32)
    return particles, vertices


def carried_particles(old_corners: np.ndarray, new_corners: np.ndarray, particle_count: int) -> np.ndarray:
    """For every particle of a new split, the particle of the old split it continues: the old
    particle of its lowest corner. int64 [particle_count] (a tear only splits, so this is exact).

    Args:
        old_corners, new_corners: int [corner_count], each corner's particle before and after.
        particle_count: the new split's particle count.
    """
    count = new_corners.shape[0]
    lowest = np.full(particle_count, count, dtype=np.int64)
    np.minimum.at(lowest, new_corners, np.arange(count))
    return old_corners[lowest].astype(np.int64)


def overstretched(lengths: np.ndarray, rest_lengths: np.ndarray, settings: TearSettings) -> np.ndarray:
    """bool [spring_count]: the springs stretched beyond the threshold, (L − l₀)/l₀ >
    ``settings.threshold`` (l₀ the current rest length, plasticity included)."""
    return lengths > (1.0 + settings.threshold) * rest_lengths


# An edge at a vertex is "across" an overstretched edge (a crack there runs along it) when the
# cosine of their angle is below this in magnitude: within 45° of perpendicular. A grid's two
# perpendicular edges, a triangle fan's edges at 60° and 120°.
CRACK_MAX_COSINE = float(np.cos(np.radians(45.0)))


class CrackFinder:
    """Where a crack opens when a structural spring overstretches: across it, not along it.

    A spring (i, j) pulled beyond the threshold is relieved by splitting one of its ends on the
    plane through that end perpendicular to the spring: the edges at that vertex within 45° of
    that plane (``CRACK_MAX_COSINE``, rest directions) are torn, so the faces on j's side and
    those on the other side part there. The end chosen is the one at the crack's tip (more torn
    edges already; on a tie the lower vertex index), so a crack runs on through the sheet as its
    tip's springs overload in turn (Pfaff et al. 2014 split vertices the same way, along the
    direction of the largest stress). An overstretched spring neither end can relieve (no edge
    across it left to tear) is returned as stuck: its springs break without a split.

    Args:
        mesh: the surface.
    """

    def __init__(self, mesh: SurfaceMesh) -> None:
        self.mesh = mesh
        n = mesh.vertex_count
        ends = mesh.edges.reshape(-1).astype(np.int64)
        order = np.argsort(ends, kind="stable")
        self._offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(ends, minlength=n), out=self._offsets[1:])
        self._incident = (order // 2).astype(np.int64)  # the edges at each vertex, grouped by vertex
        d = mesh.vertices[mesh.edges[:, 1]] - mesh.vertices[mesh.edges[:, 0]]
        self._directions = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), np.finfo(np.float64).tiny)

    def crack(self, edges: np.ndarray, torn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(torn edges after the cracks, bool [edge_count]; stuck edges, bool [edge_count]) for the
        overstretched structural springs of the mesh edges ``edges`` (int, ascending), from the
        torn edges ``torn`` (not modified). Deterministic: the edges are taken in order."""
        torn = torn.copy()
        stuck = np.zeros_like(torn)
        for e in np.asarray(edges, dtype=np.int64).tolist():
            i, j = (int(v) for v in self.mesh.edges[e])
            ends = sorted((i, j), key=lambda v: (-int(torn[self._at(v)].sum()), v))
            for v in ends:
                around = self._at(v)
                cosine = np.abs(self._directions[around] @ self._directions[e])
                across = around[(around != e) & (cosine < CRACK_MAX_COSINE) & ~torn[around]]
                if across.shape[0]:
                    torn[across] = True
                    break
            else:
                stuck[e] = True
        return torn, stuck

    def _at(self, vertex: int) -> np.ndarray:
        """The edges at ``vertex``: int64 [k]."""
        return self._incident[self._offsets[vertex]:self._offsets[vertex + 1]]
