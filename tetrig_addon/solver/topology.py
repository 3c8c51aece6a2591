"""The topology both solver backends read (``Topology``): a colouring of the control points (no
two points of one colour share a tet, so a colour's points can be solved in any order, or together)
and, for every point, the edges and tets around it; built once per model (``build_topology``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# For corner j of a tet (p0, p1, p2, p3), the opposite face (a, b, c) ordered so that
# ∂(6V)/∂p_j = (p_b − p_a) × (p_c − p_a) and 6V = that · (p_j − p_a): 6V is linear in each corner.
TET_FACES = np.array([[1, 3, 2], [0, 2, 3], [0, 3, 1], [0, 1, 2]], dtype=np.int64)


@dataclass(frozen=True)
class Topology:
    """Which elements touch which control point, and the order points are solved in.

    Attributes:
        color_points: int32 [free_count], the free (non-kinematic) control points, grouped by
            colour: points of one colour share no tet (nor edge, nor contact).
        color_offsets: int64 [color_count + 1]; colour c is color_points[offsets[c]:offsets[c+1]].
        edge_offsets: int64 [particle_count + 1]; point i's edges are rows offsets[i]:offsets[i+1]
            of ``edge_ids`` / ``edge_others``.
        edge_ids: int32 [2·edge_count], the edge of each row.
        edge_others: int32 [2·edge_count], the edge's other end.
        tet_offsets: int64 [particle_count + 1]; point i's tets are rows offsets[i]:offsets[i+1].
        tet_ids: int32 [4·tet_count], the tet of each row.
        tet_corners: int32 [4·tet_count], which corner (0–3) of that tet the point is.
        tet_faces: int32 [4·tet_count, 3], the opposite face's points (see ``TET_FACES``).
        boundary_edges: int32 [k], edges with one kinematic and one free end.
        boundary_tets: int32 [k], tets with kinematic and free corners.
        components: int32 [particle_count], which body each free point belongs to: free points
            joined by tets through free points only (two legs held only by a pinned hip are two
            bodies); −1 for kinematic points.
        component_count: how many there are.
        hinge_offsets, hinge_ids, hinge_corners: point i's hinges (surface bodies) are rows
            hinge_offsets[i]:[i+1] (int64 [particle_count + 1]) of ``hinge_ids`` (int32) and
            ``hinge_corners`` (int32, 0-3: which corner of the hinge the point is); empty for cages.
        boundary_hinges: int32 [k], hinges with kinematic and free corners.
        triangle_offsets, triangle_ids, triangle_corners: point i's triangles of the enclosed
            volume, the same way (corner 0-2); empty for cages.
    """

    color_points: np.ndarray
    color_offsets: np.ndarray
    edge_offsets: np.ndarray
    edge_ids: np.ndarray
    edge_others: np.ndarray
    tet_offsets: np.ndarray
    tet_ids: np.ndarray
    tet_corners: np.ndarray
    tet_faces: np.ndarray
    boundary_edges: np.ndarray
    boundary_tets: np.ndarray
    components: np.ndarray
    component_count: int
    hinge_offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    hinge_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    hinge_corners: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    boundary_hinges: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    triangle_offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    triangle_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    triangle_corners: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))

    @property
    def color_count(self) -> int:
        return int(self.color_offsets.shape[0] - 1)



def csr_rows(points: np.ndarray, particle_count: int) -> tuple[np.ndarray, np.ndarray]:
    """(offsets int64 [particle_count + 1], order [len(points)]): the rows of ``points`` grouped
    by point, in their original order within a point."""
    order = np.argsort(points, kind="stable")
    offsets = np.zeros(particle_count + 1, dtype=np.int64)
    np.cumsum(np.bincount(points, minlength=particle_count), out=offsets[1:])
    return offsets, order


def color_points(edges: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Greedy colouring of the free points over the edge graph (every two corners of a tet share
    an edge, so points of one colour share no tet). Runs once per model; a Python loop over
    points is fine there.

    Args:
        edges: int [edge_count, 2].
        free: bool [particle_count].

    Returns:
        (color_points int32 [free_count] grouped by colour, color_offsets int64 [color_count + 1]).
    """
    n = free.shape[0]
    both = np.concatenate([edges, edges[:, ::-1]]).astype(np.int64)
    offsets, order = csr_rows(both[:, 0], n)
    neighbours = both[order, 1]
    colors = np.full(n, -1, dtype=np.int64)
    for i in np.flatnonzero(free).tolist():
        taken = set(colors[neighbours[offsets[i]:offsets[i + 1]]].tolist())
        c = 0
        while c in taken:
            c += 1
        colors[i] = c
    points = np.flatnonzero(free)
    grouped = points[np.argsort(colors[points], kind="stable")].astype(np.int32)
    counts = np.bincount(colors[points], minlength=int(colors.max(initial=-1)) + 1)
    return grouped, np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def build_topology(particle_count: int, edges: np.ndarray, tets: np.ndarray,
                   free: np.ndarray, coupled: np.ndarray | None = None) -> Topology:
    """The colouring and the point → element incidences of a cage (see ``Topology``); ``coupled``
    (int [k, 2]) are more pairs of points that share an element without an edge (a surface body's
    hinge wings): they get different colours and belong to one body."""
    n = particle_count
    ends = edges.reshape(-1).astype(np.int64)
    edge_offsets, order = csr_rows(ends, n)
    edge_rows = order // 2
    other = edges[edge_rows, 1 - order % 2]
    corners = tets.reshape(-1).astype(np.int64)
    tet_offsets, torder = csr_rows(corners, n)
    tet_rows, corner = torder // 4, torder % 4
    faces = tets[tet_rows[:, None], TET_FACES[corner]]
    kin_edges = (~free)[edges].sum(1)
    kin_tets = (~free)[tets].sum(1)
    pairs = edges if coupled is None else np.concatenate([edges, np.asarray(coupled, dtype=edges.dtype)])
    points, offsets = color_points(pairs, free)
    labels, count = free_components(pairs, free)
    return Topology(color_points=points, color_offsets=offsets,
                    edge_offsets=edge_offsets, edge_ids=edge_rows.astype(np.int32),
                    edge_others=other.astype(np.int32),
                    tet_offsets=tet_offsets, tet_ids=tet_rows.astype(np.int32),
                    tet_corners=corner.astype(np.int32), tet_faces=faces.astype(np.int32),
                    boundary_edges=np.flatnonzero(kin_edges == 1).astype(np.int32),
                    boundary_tets=np.flatnonzero((kin_tets > 0) & (kin_tets < 4)).astype(np.int32),
                    components=labels, component_count=count)


def free_components(edges: np.ndarray, free: np.ndarray) -> tuple[np.ndarray, int]:
    """(int32 [particle_count] labels, count): the connected components of the free points over
    the edges between two free points (kinematic points get −1)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = free.shape[0]
    both = free[edges[:, 0]] & free[edges[:, 1]]
    graph = coo_matrix((np.ones(int(both.sum())), (edges[both, 0], edges[both, 1])), shape=(n, n))
    _, labels = connected_components(graph, directed=False)
    labels = np.where(free, labels, -1)
    # renumber the free points' labels 0..count-1
    used, compact = np.unique(labels[free], return_inverse=True)
    result = np.full(n, -1, dtype=np.int32)
    result[free] = compact
    return result, int(used.shape[0])
