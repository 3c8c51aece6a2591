"""The surface-quality pass of seed 003 on a blended mesh: edge-length clamp, Laplacian smoothing
of the displacement, edge-length clamp again ("constrain → smooth → constrain").

A soft body's vertices follow the cage by the barycentric blend, so a vertex's displacement is
``d = B @ D`` (``binding.blend_matrix``; D the control points' displacements). Where the cage's
tets stretch, fold or spike after a hard impact, so do the triangles on them. This pass repairs
the blended displacement before it is shown:

1. **Edge-length clamp** (``constrain_edge_lengths``): every mesh edge longer than
   ``max_stretch`` × its rest length, or shorter than ``max_compression`` × it, is brought back to
   that limit about its midpoint (each end moves half; a fixed vertex does not move, the other end
   takes the whole correction). Sweeps repeat up to ``constraint_iterations`` times and stop early
   after a sweep that found no edge outside its limits (the seed's early exit).
2. **Laplacian smoothing** of the displacement (``smooth_displacements``): each vertex moves
   ``smoothing_weight`` of the way from its displacement to the mean of its neighbours'
   (boundary vertices half as far), all vertices at once from the previous values (Jacobi),
   ``smoothing_iterations`` times.
3. The clamp once more, to undo what the smoothing pushed past a limit.

Two choices the seed leaves open, made here for a cage-driven mesh:

- *Gauss–Seidel in colours.* The seed fixes edges one after another. Here the edges are split
  into colours, each a matching (no two edges of a colour share a vertex, the seed's "edge
  colouring" speed-up); within a colour the order does not matter, so the NumPy reference fixes a
  colour at once and the Numba kernel edge by edge, with the same result.
- *Smoothing that keeps the cage's own motion.* Smoothing a displacement that rotates the body
  (d = (R − I)·x) moves vertices: the mean of a vertex's neighbours is not the vertex on a curved
  or irregular mesh (a 90° turn of the Stanford bunny moves vertices by up to 1.6 mm, more than an
  edge). So a vertex's Laplacian is measured against the one its own tet's affine motion gives
  (``expected_laplacian``, from ``affine_laplacian_matrix``): any affine motion of the whole cage
  (a fall, a turn, a uniform squash) passes unchanged, and the smoothing acts on what differs from
  the tet's motion — the kinks where neighbouring tets move apart, spikes and noise.

Units: lengths in the mesh's own units (Blender: object space); the limits and weights are ratios.

Source: seed article 003 (vertex-deformation quality design: MaxEdgeStretchRatio 1.35,
MaxEdgeCompressRatio 0.70, EdgeConstraintIterations 4, LaplacianSmoothingWeight 0.45,
LaplacianIterations 2, boundary vertices at half weight, Jacobi; budget 7 ms at 100k vertices).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix

from . import quality_backend
from .errors import TetRigInputError

# The seed's parameters (seed 003).
DEFAULT_MAX_STRETCH = 1.35
DEFAULT_MAX_COMPRESSION = 0.70
DEFAULT_CONSTRAINT_ITERATIONS = 4
DEFAULT_SMOOTHING_WEIGHT = 0.45
DEFAULT_SMOOTHING_ITERATIONS = 2
# Boundary vertices (on an edge of only one face) smooth at this share of the weight (the seed's
# guard against an open border shrinking).
BOUNDARY_SMOOTHING_SHARE = 0.5
# An edge within this relative distance of its limit counts as inside it: a clamped edge lands on
# its limit only up to rounding, and the next sweep must not count it again.
LIMIT_TOLERANCE = 1e-9
# Rest edges shorter than this share of the mesh's size (duplicate vertices) have no length ratio
# and are left out of the clamp.
DEGENERATE_EDGE_SHARE = 1e-12
# A tet whose edge matrix has |det| below this share of its largest edge cubed gets no affine
# Laplacian (its vertices smooth as the seed's plain pass).
FLAT_TET_SHARE = 1e-12
# Knuth's multiplicative hash: the edges' priorities in the colouring (any odd number would do).
PRIORITY_MULTIPLIER = 2654435761


@dataclass(frozen=True)
class QualitySettings:
    """The pass's settings (seed 003's names in brackets); ``validated`` checks them."""

    max_stretch: float = DEFAULT_MAX_STRETCH  # [MaxEdgeStretchRatio] ≥ 1
    max_compression: float = DEFAULT_MAX_COMPRESSION  # [MaxEdgeCompressRatio] in (0, 1]
    constraint_iterations: int = DEFAULT_CONSTRAINT_ITERATIONS  # [EdgeConstraintIterations] ≥ 0
    smoothing_weight: float = DEFAULT_SMOOTHING_WEIGHT  # [LaplacianSmoothingWeight] in [0, 1]
    smoothing_iterations: int = DEFAULT_SMOOTHING_ITERATIONS  # [LaplacianIterations] ≥ 0

    def validated(self) -> "QualitySettings":
        """Raises TetRigInputError for a value out of range, with a message for the user."""
        if not self.max_stretch >= 1.0:
            raise TetRigInputError(f"Max Stretch must be at least 1 (got {self.max_stretch}).")
        if not 0.0 < self.max_compression <= 1.0:
            raise TetRigInputError(f"Max Compression must be above 0 and at most 1 (got {self.max_compression}).")
        if not 0.0 <= self.smoothing_weight <= 1.0:
            raise TetRigInputError(f"Smoothing must be between 0 and 1 (got {self.smoothing_weight}).")
        if self.constraint_iterations < 0 or self.smoothing_iterations < 0:
            raise TetRigInputError("Iterations cannot be negative.")
        return self


@dataclass(frozen=True)
class QualityPlan:
    """What the pass needs of a mesh, built once per binding (``build_plan``).

    Attributes:
        rest_positions: float64 [vertex_count, 3], the rest mesh.
        edge_ends: int32 [edge_count, 2], the clamped edges in colour order.
        rest_lengths: float64 [edge_count], > 0.
        edge_shares: float64 [edge_count, 2], the share of a correction each end takes (½ and ½;
            0 and 1 when one end is fixed).
        colour_offsets: int64 [colour_count + 1]: colour c is edges colour_offsets[c]:[c + 1], no
            two of which share a vertex.
        neighbour_offsets: int64 [vertex_count + 1], neighbour_ids: int32 [adjacency_count]: each
            vertex's one-ring (CSR).
        averaging: scipy.sparse.csr_matrix float64 [vertex_count, vertex_count], row i the mean
            over i's neighbours (empty for a vertex without edges).
        smoothing_scale: float64 [vertex_count]: 1, ``BOUNDARY_SMOOTHING_SHARE`` on a boundary,
            0 for fixed vertices and vertices without edges.
    """

    rest_positions: np.ndarray
    edge_ends: np.ndarray
    rest_lengths: np.ndarray
    edge_shares: np.ndarray
    colour_offsets: np.ndarray
    neighbour_offsets: np.ndarray
    neighbour_ids: np.ndarray
    averaging: csr_matrix
    smoothing_scale: np.ndarray

    @property
    def vertex_count(self) -> int:
        return int(self.rest_positions.shape[0])


@dataclass(frozen=True)
class QualityResult:
    """The repaired displacement and what the clamp did.

    Attributes:
        displacements: float64 [vertex_count, 3].
        sweeps: clamp sweeps run before and after the smoothing (each ≤ constraint_iterations).
        violations_left: edges outside their limits in the last sweep (0 when it converged).
    """

    displacements: np.ndarray
    sweeps: tuple[int, int]
    violations_left: int


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
    round. Priorities are a fixed function of the edge's position in the list, so the colouring
    depends on the edges alone (an exported rig gives the same colours everywhere).
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
    e = np.unique(e[e[:, 0] != e[:, 1]], axis=0)
    fixed = np.zeros(n, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    boundary = np.zeros(n, dtype=bool) if boundary is None else np.asarray(boundary, dtype=bool)
    # one-ring of every vertex (all edges, also the degenerate ones)
    rows, cols = np.concatenate([e[:, 0], e[:, 1]]), np.concatenate([e[:, 1], e[:, 0]])
    adjacency = csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n))
    adjacency.sort_indices()
    degree = np.diff(adjacency.indptr)
    averaging = csr_matrix((np.repeat(1.0 / np.maximum(degree, 1), degree), adjacency.indices,
                            adjacency.indptr), shape=(n, n))
    scale = np.where(boundary, BOUNDARY_SMOOTHING_SHARE, 1.0) * (degree > 0) * ~fixed
    # the clamped edges: a rest length to compare with, and an end that may move
    lengths = np.linalg.norm(rest[e[:, 1]] - rest[e[:, 0]], axis=1)
    size = float(np.ptp(rest, axis=0).max()) if n else 0.0
    keep = (lengths > DEGENERATE_EDGE_SHARE * size) & ~(fixed[e[:, 0]] & fixed[e[:, 1]])
    e, lengths = e[keep], lengths[keep]
    colour = _edge_colours(e, n)
    order = np.lexsort((e[:, 0], colour))
    e, lengths, colour = e[order], lengths[order], colour[order]
    mobile = (~fixed[e]).astype(np.float64)
    shares = mobile / mobile.sum(axis=1, keepdims=True)
    offsets = np.searchsorted(colour, np.arange(colour.max(initial=-1) + 2))
    return QualityPlan(rest_positions=rest, edge_ends=np.ascontiguousarray(e, dtype=np.int32),
                       rest_lengths=lengths, edge_shares=shares, colour_offsets=offsets.astype(np.int64),
                       neighbour_offsets=adjacency.indptr.astype(np.int64),
                       neighbour_ids=adjacency.indices.astype(np.int32), averaging=averaging,
                       smoothing_scale=scale)


def affine_laplacian_matrix(plan: QualityPlan, rest_control_points: np.ndarray,
                            indices: np.ndarray) -> csr_matrix:
    """The Laplacian a vertex would have if the whole mesh moved with its own tet.

    For vertex i bound to the tet of control points ``indices[i]``, the mean of its neighbours'
    rest positions c_i has barycentric coordinates β_i in that tet and the vertex itself w_i; if
    the cage moved the mesh with that tet's affine motion, the displacement's Laplacian (mean of
    the neighbours − the vertex) would be Σₖ (β_ik − w_ik) · D[indices[i, k]]. Returns that as a
    matrix M, so ``expected_laplacian = M @ D``.

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
    rest = plan.rest_positions
    laplacian = plan.averaging @ rest - rest  # rest-shape Laplacian L(x) [vertex_count, 3]
    laplacian[np.diff(plan.neighbour_offsets) == 0] = 0.0
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


def constrain_edge_lengths(plan: QualityPlan, positions: np.ndarray, settings: QualitySettings,
                           iterations: int | None = None) -> tuple[np.ndarray, int, int]:
    """The edge-length clamp (NumPy reference), colour by colour.

    Args:
        positions: float [vertex_count, 3], not modified.
        iterations: sweeps at most; default ``settings.constraint_iterations``.

    Returns:
        (positions float64 [vertex_count, 3], sweeps run, edges outside their limits in the last
        sweep — 0 when the last sweep found none).
    """
    x = np.array(positions, dtype=np.float64)
    lo, hi = settings.max_compression, settings.max_stretch
    lo_tol, hi_tol = lo * (1.0 - LIMIT_TOLERANCE), hi * (1.0 + LIMIT_TOLERANCE)
    offsets = plan.colour_offsets
    sweeps = violations = 0
    for _ in range(settings.constraint_iterations if iterations is None else iterations):
        sweeps += 1
        violations = 0
        for c in range(offsets.size - 1):
            s, t = offsets[c], offsets[c + 1]
            a, b, rest = plan.edge_ends[s:t, 0], plan.edge_ends[s:t, 1], plan.rest_lengths[s:t]
            d = x[b] - x[a]
            squared = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2]
            longest, shortest = rest * hi_tol, rest * lo_tol
            bad = np.flatnonzero((squared > longest * longest) | (squared < shortest * shortest))
            violations += bad.size
            fix = bad[squared[bad] > 0.0]  # a collapsed edge has no direction
            if fix.size:
                length = np.sqrt(squared[fix])
                target = np.minimum(np.maximum(length / rest[fix], lo), hi) * rest[fix]
                corr = (length - target) / length
                step = d[fix]
                x[a[fix]] += step * (corr * plan.edge_shares[s:t, 0][fix])[:, None]
                x[b[fix]] -= step * (corr * plan.edge_shares[s:t, 1][fix])[:, None]
        if violations == 0:
            break
    return x, sweeps, violations


def smooth_displacements(plan: QualityPlan, displacements: np.ndarray, settings: QualitySettings,
                         expected_laplacian: np.ndarray | None = None) -> np.ndarray:
    """Jacobi Laplacian smoothing of a displacement (NumPy reference).

    d_i ← d_i + w·s_i·(mean_j d_j − d_i − e_i), ``smoothing_iterations`` times, with w the weight,
    s_i ``plan.smoothing_scale`` and e_i the expected Laplacian (0 without one: the seed's pass).

    Args:
        displacements: float [vertex_count, 3]; not modified.
        expected_laplacian: float [vertex_count, 3] or ``None`` (``affine_laplacian_matrix``).

    Returns:
        float64 [vertex_count, 3].
    """
    d = np.array(displacements, dtype=np.float64)
    step = (settings.smoothing_weight * plan.smoothing_scale)[:, None]
    for _ in range(settings.smoothing_iterations):
        change = plan.averaging @ d - d
        if expected_laplacian is not None:
            change = change - expected_laplacian
        d = d + step * change
    return d


def improve(plan: QualityPlan, displacements: np.ndarray, settings: QualitySettings,
            expected_laplacian: np.ndarray | None = None, use_kernel: bool | None = None) -> QualityResult:
    """The whole pass: clamp, smooth, clamp (seed 003's sandwich).

    Args:
        displacements: float [vertex_count, 3] from the rest mesh (the blended offsets).
        settings: validated ``QualitySettings``.
        expected_laplacian: float [vertex_count, 3] or ``None``: see the module's docstring.
        use_kernel: ``True`` the Numba kernel (compiling it first), ``False`` the NumPy reference,
            ``None`` the kernel once it is loaded (``quality_backend.warm_up``), else the
            reference. Both give the same displacements (to rounding).

    Raises:
        TetRigInputError: an array of another vertex count.
        quality_backend.KernelUnavailable: ``use_kernel=True`` and Numba cannot load.
    """
    d = np.asarray(displacements, dtype=np.float64)
    for name, array in (("displacements", d), ("expected Laplacian", expected_laplacian)):
        if array is not None and np.shape(array) != plan.rest_positions.shape:
            raise TetRigInputError(f"The {name} must be {plan.vertex_count}×3 like the mesh, got "
                                   f"{np.shape(array)}.")
    if use_kernel is None:
        use_kernel = quality_backend.kernel_ready()
    if use_kernel:
        return quality_backend.kernel().improve(plan, d, settings, expected_laplacian)
    x, first, _ = constrain_edge_lengths(plan, plan.rest_positions + d, settings)
    smoothed = smooth_displacements(plan, x - plan.rest_positions, settings, expected_laplacian)
    x, second, left = constrain_edge_lengths(plan, plan.rest_positions + smoothed, settings)
    return QualityResult(x - plan.rest_positions, (first, second), left)
