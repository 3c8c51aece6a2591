"""What the quality pass (``quality``, seed 003) needs of a mesh, built once per binding.

The clamp is Gauss–Seidel over the mesh's edges in colours: each colour a matching (no two of its
edges share a vertex), so a colour can be fixed at once (the NumPy reference) or edge by edge (the
Numba kernel) with the same result. For speed the vertices are renumbered along a Morton curve
and cut into blocks of ``BLOCK_VERTICES``: the edges inside one block are fixed block by block, in
the block's cache, and a block none of whose edges was outside its limits is skipped until one of
its vertices moves (the seed's "dirty flags"); the few edges between blocks come after, in colours
of their own. Blocks share no vertex, so this order gives what the reference's colour-by-colour
order gives. The renumbering stays inside the pass: its inputs and outputs are in mesh order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import csr_matrix

from ..errors import TetRigInputError

# Boundary vertices (on an edge of only one face) smooth at this share of the weight (the seed's
# guard against an open border shrinking).
BOUNDARY_SMOOTHING_SHARE = 0.5
# Rest edges shorter than this share of the mesh's size (duplicate vertices) have no length ratio
# and are left out of the clamp.
DEGENERATE_EDGE_SHARE = 1e-12
# A tet whose edge matrix has |det| below this share of its largest edge cubed gets no affine
# Laplacian (its vertices smooth as the seed's plain pass).
FLAT_TET_SHARE = 1e-12
# Knuth's multiplicative hash: the edges' priorities in the colouring (any odd number would do).
PRIORITY_MULTIPLIER = 2654435761
# Vertices per block: a block's positions and edges (about 100 kB) stay in a core's cache.
BLOCK_VERTICES = 2048
# Bits per axis of the Morton code that orders the vertices.
MORTON_BITS = 21


@dataclass(frozen=True)
class EdgeSet:
    """Clamped edges in the pass's vertex numbering, in colours.

    Attributes:
        ends: int32 [edge_count, 2]; rest_lengths: float64 [edge_count], > 0.
        colour_offsets: int64 [colour_count + 1] into ``members``; members: int64 [edge_count],
            the edges by colour (the reference fixes ``members[colour_offsets[c]:[c + 1]]`` at once).
        block_offsets: int64 [block_count, colour_count + 1] into ``ends`` (inner edges, which are
            sorted by block then colour: block b's colour c is ``ends[block_offsets[b, c]:[b, c + 1]]``;
            every block of the mesh has a row, ⌈vertex_count / block size⌉); for the edges between
            blocks ``ends`` is already in colour order and this is [1, C + 1].
    """

    ends: np.ndarray
    rest_lengths: np.ndarray
    colour_offsets: np.ndarray
    members: np.ndarray
    block_offsets: np.ndarray


@dataclass(frozen=True)
class QualityPlan:
    """A mesh as the pass needs it (``build_plan``).

    Attributes:
        rest_positions: float64 [vertex_count, 3], the rest mesh (mesh order).
        smoothing_scale: float64 [vertex_count] (mesh order): 1, ``BOUNDARY_SMOOTHING_SHARE`` on
            a boundary, 0 for fixed vertices and vertices without edges.
        order: int64 [vertex_count]: the pass's vertex i is the mesh's vertex ``order[i]``.
        Everything below is in the pass's numbering:
        sorted_rest: float64 [vertex_count, 3]; scale: float64 [vertex_count];
        mobility: float64 [vertex_count], 1 or 0 (fixed): an edge's correction is shared in
            proportion (½ and ½, or all on the free end).
        neighbour_offsets: int64 [vertex_count + 1], neighbour_ids: int32 [adjacency_count], the
            one-rings (CSR, ids ascending); adjacency: csr_matrix [vertex_count, vertex_count] of
            ones, the same; inverse_degree: float64 [vertex_count], 1 / the one-ring's size (1 for
            a vertex without edges): the mean over a one-ring is ``(adjacency @ d) * inverse_degree``.
        block_size: vertices per block (the last block may be smaller).
        inner: the edges inside a block; cross: the edges between blocks.
        workspace: the kernel's work arrays, made at its first use of the plan.
    """

    rest_positions: np.ndarray
    smoothing_scale: np.ndarray
    order: np.ndarray
    sorted_rest: np.ndarray
    scale: np.ndarray
    mobility: np.ndarray
    neighbour_offsets: np.ndarray
    neighbour_ids: np.ndarray
    adjacency: csr_matrix
    inverse_degree: np.ndarray
    block_size: int
    inner: EdgeSet
    cross: EdgeSet
    workspace: dict = field(default_factory=dict, compare=False, repr=False)

    @property
    def vertex_count(self) -> int:
        return int(self.rest_positions.shape[0])

    @property
    def edge_count(self) -> int:
        """Edges the clamp holds (degenerate ones and ones with both ends fixed left out)."""
        return int(self.inner.ends.shape[0] + self.cross.ends.shape[0])


def face_edges(face_corners: np.ndarray, face_sizes: np.ndarray) -> np.ndarray:
    """Every face's edges, one per corner (shared edges repeat): int64 [corner_count, 2], each
    row sorted.

    Args:
        face_corners: int [corner_count], the faces' vertex indices one face after another
            (Blender: ``loops.vertex_index``).
        face_sizes: int [face_count], corners per face (Blender: ``polygons.loop_total``), ≥ 3.
    """
    corners = np.asarray(face_corners, dtype=np.int64)
    sizes = np.asarray(face_sizes, dtype=np.int64)
    if corners.size != sizes.sum():
        raise TetRigInputError(f"{corners.size} face corners given for faces of {sizes.sum()} corners.")
    nxt = np.arange(1, corners.size + 1)
    nxt[np.cumsum(sizes) - 1] = np.cumsum(sizes) - sizes  # the last corner closes its face
    return np.sort(np.stack([corners, corners[nxt]], axis=1), axis=1)


def unique_edges(face_corners: np.ndarray, face_sizes: np.ndarray) -> np.ndarray:
    """The faces' edges, each once: int32 [edge_count, 2], rows sorted (for meshes given as faces
    only; Blender meshes have their own edge list)."""
    return np.unique(face_edges(face_corners, face_sizes), axis=0).astype(np.int32)


def boundary_vertices(vertex_count: int, face_corners: np.ndarray, face_sizes: np.ndarray) -> np.ndarray:
    """Vertices on a boundary edge (an edge of exactly one face): bool [vertex_count]."""
    pairs = face_edges(face_corners, face_sizes)
    keys, counts = np.unique(pairs[:, 0] * vertex_count + pairs[:, 1], return_counts=True)
    ends = keys[counts == 1]
    boundary = np.zeros(vertex_count, dtype=bool)
    boundary[ends // vertex_count] = True
    boundary[ends % vertex_count] = True
    return boundary


def _edge_colours(edges: np.ndarray, vertex_count: int) -> np.ndarray:
    """A colour per edge, int64 [edge_count], such that no two edges of a colour share a vertex.

    Each colour is a maximal matching of the edges not yet coloured, found in rounds (Luby): an
    edge whose priority is the highest at both its ends joins the colour, its neighbours leave the
    round. Priorities are a fixed function of the edge's place in the (sorted) list, so the
    colouring depends on the edges alone (an exported rig gives the same colours everywhere).
    """
    count = edges.shape[0]
    # distinct for distinct edges (an odd multiplier is a bijection modulo 2³²), the same everywhere
    priority = (np.arange(count, dtype=np.uint64) * np.uint64(PRIORITY_MULTIPLIER)
                & np.uint64(0xFFFFFFFF)).astype(np.int64)
    colour = np.full(count, -1, dtype=np.int64)
    remaining = np.arange(count)
    c = 0
    while remaining.size:
        candidates = remaining
        while candidates.size:
            a, b, p = edges[candidates, 0], edges[candidates, 1], priority[candidates]
            best = np.full(vertex_count, -1, dtype=np.int64)
            np.maximum.at(best, a, p)
            np.maximum.at(best, b, p)
            won = (best[a] == p) & (best[b] == p)
            colour[candidates[won]] = c
            taken = np.zeros(vertex_count, dtype=bool)
            taken[a[won]] = taken[b[won]] = True
            candidates = candidates[~(taken[a] | taken[b])]
        remaining = remaining[colour[remaining] < 0]
        c += 1
    return colour


def _morton_order(points: np.ndarray) -> np.ndarray:
    """The points sorted along a Morton (Z-order) curve: int64 [n], so that near points get near
    numbers (``MORTON_BITS`` per axis over the bounding box)."""
    if points.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    span = max(float(np.ptp(points, axis=0).max()), 1e-300)
    cells = ((points - points.min(axis=0)) / span * (2**MORTON_BITS - 1)).astype(np.uint64)

    def spread(v: np.ndarray) -> np.ndarray:  # bit k of v to bit 3k
        for shift, mask in ((32, 0x1F00000000FFFF), (16, 0x1F0000FF0000FF), (8, 0x100F00F00F00F00F),
                            (4, 0x10C30C30C30C30C3), (2, 0x1249249249249249)):
            v = (v | (v << np.uint64(shift))) & np.uint64(mask)
        return v

    code = spread(cells[:, 0]) | (spread(cells[:, 1]) << np.uint64(1)) | (spread(cells[:, 2]) << np.uint64(2))
    return np.argsort(code, kind="stable").astype(np.int64)


def _edge_set(ends: np.ndarray, lengths: np.ndarray, vertex_count: int, block: np.ndarray | None,
              block_count: int = 1) -> EdgeSet:
    """Colour edges; ``block`` (int64 [edge_count], each < ``block_count``) sorts them block by
    block, else they are sorted by colour."""
    colour = _edge_colours(ends, vertex_count)
    colours = int(colour.max(initial=-1)) + 1
    blocks = np.zeros(len(ends), dtype=np.int64) if block is None else block
    order = np.lexsort((ends[:, 0], colour, blocks))
    ends, lengths, colour, blocks = ends[order], lengths[order], colour[order], blocks[order]
    keys = np.arange(block_count)[:, None] * (colours + 1) + np.arange(colours + 1)[None, :]
    block_offsets = np.searchsorted(blocks * (colours + 1) + colour, keys)
    members = np.argsort(colour, kind="stable").astype(np.int64)
    return EdgeSet(ends=np.ascontiguousarray(ends, dtype=np.int32), rest_lengths=lengths,
                   colour_offsets=np.searchsorted(colour[members], np.arange(colours + 1)).astype(np.int64),
                   members=members, block_offsets=block_offsets.astype(np.int64))


def build_plan(rest_positions: np.ndarray, edges: np.ndarray, boundary: np.ndarray | None = None,
               fixed: np.ndarray | None = None) -> QualityPlan:
    """Prepare the pass for a mesh.

    Args:
        rest_positions: float [vertex_count, 3], the rest mesh (the lengths' units).
        edges: int [edge_count, 2], the mesh's edges (Blender: ``edges.vertices``); duplicates and
            loops are ignored.
        boundary: bool [vertex_count] (``boundary_vertices``) or ``None`` for none.
        fixed: bool [vertex_count] or ``None``: vertices the pass never moves (pinned ones).

    Raises:
        TetRigInputError: a vertex index out of range, or non-finite rest positions.
    """
    rest = np.asarray(rest_positions, dtype=np.float64).reshape(-1, 3)
    n = rest.shape[0]
    e = np.sort(np.asarray(edges, dtype=np.int64).reshape(-1, 2), axis=1)
    if e.size and (e.min() < 0 or e.max() >= n):
        raise TetRigInputError(f"An edge names a vertex outside the mesh's {n} vertices.")
    if not np.all(np.isfinite(rest)):
        raise TetRigInputError("The mesh has vertices with NaN or infinite coordinates.")
    fixed = np.zeros(n, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    boundary = np.zeros(n, dtype=bool) if boundary is None else np.asarray(boundary, dtype=bool)
    order = _morton_order(rest)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    e = np.unique(np.sort(rank[e], axis=1), axis=0)  # the pass's numbering from here on
    e = e[e[:, 0] != e[:, 1]]
    sorted_rest, fixed_s = rest[order], fixed[order]
    # the one-rings (all edges, the degenerate ones too) and their means
    rows, cols = np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]])
    adjacency = csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    adjacency.sort_indices()
    degree = np.diff(adjacency.indptr)
    scale = np.where(boundary[order], BOUNDARY_SMOOTHING_SHARE, 1.0) * (degree > 0) * ~fixed_s
    # the clamped edges: a rest length to compare with, and an end that may move
    lengths = np.linalg.norm(sorted_rest[e[:, 1]] - sorted_rest[e[:, 0]], axis=1)
    size = float(np.ptp(rest, axis=0).max()) if n else 0.0
    keep = (lengths > DEGENERATE_EDGE_SHARE * size) & ~(fixed_s[e[:, 0]] & fixed_s[e[:, 1]])
    e, lengths = e[keep], lengths[keep]
    block = e // BLOCK_VERTICES
    inside = block[:, 0] == block[:, 1]
    unsorted_scale = np.empty(n)
    unsorted_scale[order] = scale
    return QualityPlan(
        rest_positions=rest, smoothing_scale=unsorted_scale, order=order, sorted_rest=sorted_rest,
        scale=scale, mobility=(~fixed_s).astype(np.float64),
        neighbour_offsets=adjacency.indptr.astype(np.int64), neighbour_ids=adjacency.indices.astype(np.int32),
        adjacency=adjacency, inverse_degree=1.0 / np.maximum(degree, 1), block_size=BLOCK_VERTICES,
        inner=_edge_set(e[inside], lengths[inside], n, block[inside, 0], max(-(-n // BLOCK_VERTICES), 1)),
        cross=_edge_set(e[~inside], lengths[~inside], n, None))


def affine_laplacian_matrix(plan: QualityPlan, rest_control_points: np.ndarray,
                            indices: np.ndarray) -> csr_matrix:
    """The Laplacian a vertex would have if the whole mesh moved with its own tet.

    For vertex i bound to the tet of control points ``indices[i]``, the mean of its neighbours'
    rest positions c_i has barycentric coordinates β_i in that tet and the vertex itself w_i; if
    the cage moved the mesh with that tet's affine motion, the displacement's Laplacian (mean of
    the neighbours − the vertex) would be Σₖ (β_ik − w_ik) · D[indices[i, k]]. Returns that as a
    matrix M (mesh order), so ``expected_laplacian = M @ D``.

    Args:
        rest_control_points: float [control_point_count, 3], same space as the rest mesh.
        indices: int [vertex_count, 4], each vertex's tet (the seed's ``vertex_bones``).

    Returns:
        scipy.sparse.csr_matrix float64 [vertex_count, control_point_count], 4 entries a row,
        each row summing to 0; rows of vertices in a flat tet or without neighbours are 0.
    """
    q = np.asarray(rest_control_points, dtype=np.float64)
    idx = np.asarray(indices, dtype=np.int64)
    n = plan.vertex_count
    laplacian = np.empty((n, 3))  # the rest shape's Laplacian L(x), mesh order
    rest = plan.sorted_rest
    laplacian[plan.order] = (plan.adjacency @ rest) * plan.inverse_degree[:, None] - rest
    laplacian[plan.order[np.diff(plan.neighbour_offsets) == 0]] = 0.0
    corners = q[idx]  # [n, 4, 3]
    edge_matrix = np.stack([corners[:, k] - corners[:, 0] for k in (1, 2, 3)], axis=2)
    det = np.linalg.det(edge_matrix)
    scale = np.abs(corners - corners[:, :1]).max(axis=(1, 2)) ** 3
    flat = ~(np.abs(det) > FLAT_TET_SHARE * scale)
    edge_matrix[flat] = np.eye(3)
    lam = np.linalg.solve(edge_matrix, laplacian[:, :, None])[:, :, 0]  # Δλ₁₂₃
    lam[flat] = 0.0
    values = np.concatenate([-lam.sum(axis=1, keepdims=True), lam], axis=1)
    return csr_matrix((values.ravel(), idx.ravel(), np.arange(0, 4 * n + 1, 4)),
                      shape=(n, q.shape[0]))
