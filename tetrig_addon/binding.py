"""Binding: each mesh vertex → its containing tet and 4 barycentric weights (seed 000).

The deformed vertex is the seed's vertex-shader blend, x = Σₖ wₖ · q[iₖ] (``blend``). Barycentric
coordinates are affine, so the blend reproduces the rest vertex exactly (up to rounding) even for a
vertex that lies in no tet and is bound to its nearest tet with slightly negative weights.

Source: seed article 000; Müller, "Ten Minute Physics" tutorial 12 (skinning by tet + barycentrics).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.spatial import cKDTree

from .errors import TetRigInputError
from .geometry import barycentric_transforms

# A vertex counts as inside a tet when its smallest barycentric weight is at least this (−ε lets
# points on shared faces and on the hull surface count as inside despite rounding).
INSIDE_TOLERANCE = -1e-9
# Vertices in no tet are bound to the best of this many tets with the nearest centroids.
FALLBACK_CANDIDATE_TETS = 64


@dataclass(frozen=True)
class Binding:
    """Per-vertex binding to a cage.

    Attributes:
        tet_index: int32 [vertex_count], the tet each vertex is bound to.
        control_point_indices: int32 [vertex_count, 4], = tets[tet_index] (the seed's
            ``vertex_bones``).
        weights: float64 [vertex_count, 4], barycentric weights, each row sums to 1 (the seed's
            ``weights``).
        outside_count: vertices in no tet, bound to the nearest tet (weights slightly outside [0, 1]).
    """

    tet_index: np.ndarray
    control_point_indices: np.ndarray
    weights: np.ndarray
    outside_count: int = 0

    @property
    def vertex_count(self) -> int:
        return int(self.tet_index.shape[0])


def _weights(points: np.ndarray, origin: np.ndarray, transform: np.ndarray) -> np.ndarray:
    """Barycentric weights of points [..., 3] in tets given by origin [..., 3] and T [..., 3, 3]."""
    lam = np.einsum("...ij,...j->...i", transform, points - origin)
    return np.concatenate([1.0 - lam.sum(-1, keepdims=True), lam], axis=-1)


def _tet_grid(cps: np.ndarray, tets: np.ndarray, lo: np.ndarray, cell: float,
              dims: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Uniform grid over the cage: every tet is listed in each cell its bounding box touches.

    Returns (cell_start int64 [cell_count + 1], cell_tets int64 [entries]) in CSR form. A tet that
    contains a point is listed in that point's cell, so the cell's list is an exact candidate set.
    """
    p = cps[tets]
    t_lo = np.clip(np.floor((p.min(1) - lo) / cell).astype(np.int64), 0, dims - 1)
    t_hi = np.clip(np.floor((p.max(1) - lo) / cell).astype(np.int64), 0, dims - 1)
    span = t_hi - t_lo + 1  # [m, 3]
    counts = span.prod(1)
    owner = np.repeat(np.arange(tets.shape[0]), counts)
    local = np.arange(owner.size) - np.repeat(np.cumsum(counts) - counts, counts)
    sx, sy = span[owner, 0], span[owner, 1]
    ix = t_lo[owner, 0] + local % sx
    iy = t_lo[owner, 1] + (local // sx) % sy
    iz = t_lo[owner, 2] + local // (sx * sy)
    cell_id = (iz * dims[1] + iy) * dims[0] + ix
    cell_count = int(dims.prod())
    # a stable sort of 16-bit keys is a radix sort, ten times faster than that of int64 ones
    order = np.argsort(cell_id.astype(np.uint16) if cell_count <= 1 << 16 else cell_id, kind="stable")
    start = np.zeros(cell_count + 1, dtype=np.int64)
    start[1:] = np.cumsum(np.bincount(cell_id, minlength=cell_count))
    return start, owner[order]


def _compiled_kernel():
    """The solver's compiled kernel when it is loaded (``solver.backend``; never waits for a
    compile), else None: the NumPy rounds below find the same tets."""
    from .solver import backend
    return backend.kernel() if backend.kernel_ready() else None


class TetSearch:
    """The binding's grid search over a set of tets, built once and asked many times (the fit
    cage asks which tets hold its vertices three times per tetrahedralization).

    Args:
        control_points: float [control_point_count, 3] [m].
        tets: int [tet_count, 4], non-degenerate (any orientation).
    """

    def __init__(self, control_points: np.ndarray, tets: np.ndarray) -> None:
        cps = np.asarray(control_points, dtype=np.float64)
        self.tets = np.asarray(tets)
        self.transform = barycentric_transforms(cps, self.tets)
        self.origin = cps[self.tets[:, 0]]
        extent = np.ptp(cps, axis=0).max()
        # About one tet per cell: a cell as large as the average tet.
        self.cell = max(float(np.cbrt(np.prod(np.maximum(np.ptp(cps, axis=0), 1e-12 * extent))
                                      / max(self.tets.shape[0], 1))), 1e-12 * extent)
        self.lo = cps.min(0)
        self.dims = np.floor(np.ptp(cps, axis=0) / self.cell).astype(np.int64) + 1
        self.start, self.cell_tets = _tet_grid(cps, self.tets, self.lo, self.cell, self.dims)

    def locate(self, verts: np.ndarray, among: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Best tet of each vertex among the tets listed in its grid cell (and marked in ``among``,
        bool [tet_count], if given): the first that holds it, else the one it is least outside.

        Returns (tet index int64 [n], weights float64 [n, 4], score [n] = smallest weight; −inf
        where the cell lists no tet). With the compiled kernel loaded, its ``locate_points`` (a loop
        over vertices); else one vectorized round per list position: the same tets.
        """
        verts = np.asarray(verts, dtype=np.float64).reshape(-1, 3)
        allowed = np.ones(self.tets.shape[0], dtype=bool) if among is None else np.asarray(among, dtype=bool)
        compiled = _compiled_kernel()
        if compiled is not None:
            return compiled.locate_points(verts, self.lo, float(self.cell), self.dims, self.start, self.cell_tets,
                                          np.ascontiguousarray(self.origin, dtype=np.float64),
                                          np.ascontiguousarray(self.transform, dtype=np.float64),
                                          allowed, INSIDE_TOLERANCE)
        n, dims, start, cell_tets = verts.shape[0], self.dims, self.start, self.cell_tets
        ijk = np.floor((verts - self.lo) / self.cell).astype(np.int64)
        inside_grid = np.all((ijk >= 0) & (ijk < dims), axis=1)
        ijk = np.clip(ijk, 0, dims - 1)
        vcell = (ijk[:, 2] * dims[1] + ijk[:, 1]) * dims[0] + ijk[:, 0]
        first, length = start[vcell], np.where(inside_grid, start[vcell + 1] - start[vcell], 0)
        best_tet = np.zeros(n, dtype=np.int64)
        best_w = np.zeros((n, 4))
        best_score = np.full(n, -np.inf)
        todo = np.flatnonzero(length > 0)
        r = 0
        while todo.size:
            cand = cell_tets[first[todo] + r]
            # the kernel's arithmetic, one column at a time (einsum and a min over 4 entries per
            # row cost twice as much)
            d = verts[todo] - self.origin[cand]
            t = self.transform[cand]
            lam = [t[:, k, 0] * d[:, 0] + t[:, k, 1] * d[:, 1] + t[:, k, 2] * d[:, 2] for k in range(3)]
            w0 = 1.0 - (lam[0] + lam[1] + lam[2])
            score = np.where(allowed[cand], np.minimum(np.minimum(w0, lam[0]), np.minimum(lam[1], lam[2])), -np.inf)
            better = score > best_score[todo]
            rows = todo[better]
            best_tet[rows], best_score[rows] = cand[better], score[better]
            best_w[rows] = np.stack([w0[better], lam[0][better], lam[1][better], lam[2][better]], axis=1)
            r += 1
            # vertices inside a tet, or at the end of their cell's list, stop looking (the set
            # shrinks round by round: no pass over every vertex per list position)
            todo = todo[(length[todo] > r) & (best_score[todo] < INSIDE_TOLERANCE)]
        return best_tet, best_w, best_score

    def containing(self, points: np.ndarray, among: np.ndarray | None = None) -> np.ndarray:
        """The tet holding each point (to ``INSIDE_TOLERANCE``; the first in index order where
        several do), among those marked in ``among`` (bool [tet_count]) if given; −1 for a point
        in none. Returns int64 [n], an index into ``tets``."""
        if self.tets.shape[0] == 0:
            return np.full(len(points), -1, dtype=np.int64)
        tet_index, _, score = self.locate(points, among)
        return np.where(score >= INSIDE_TOLERANCE, tet_index, -1)


def containing_tets(points: np.ndarray, control_points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """The tet holding each point (to ``INSIDE_TOLERANCE``), by the binding's grid search; −1 for
    a point in none. Much faster than Qhull's ``find_simplex`` on a lattice's many co-spherical
    points.

    Args:
        points: float [n, 3] [m].
        control_points: float [control_point_count, 3] [m].
        tets: int [tet_count, 4], non-degenerate (any orientation).

    Returns:
        int64 [n], an index into ``tets`` or −1.
    """
    return TetSearch(control_points, tets).containing(points)


def bind(vertices: np.ndarray, control_points: np.ndarray, tets: np.ndarray) -> Binding:
    """Bind every vertex to a tet of the cage.

    Args:
        vertices: float [vertex_count, 3] [m], rest positions, same space as the control points.
        control_points: float [control_point_count, 3] [m].
        tets: int [tet_count, 4], positively oriented, non-degenerate.

    Returns:
        A ``Binding`` for every vertex (none left unbound).

    Raises:
        TetRigInputError: vertices with non-finite coordinates, or a cage without tets.
    """
    verts = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    tets = np.asarray(tets)
    if tets.shape[0] == 0:
        raise TetRigInputError("The cage has no tets.")
    if not np.all(np.isfinite(verts)):
        raise TetRigInputError("The mesh has vertices with NaN or infinite coordinates.")
    cps = np.asarray(control_points, dtype=np.float64)
    search = TetSearch(cps, tets)
    transform, origin = search.transform, search.origin

    tet_index, weights, score = search.locate(verts)
    inside = score >= INSIDE_TOLERANCE

    missing = np.flatnonzero(~inside)
    if missing.size:
        # In no tet (a gap left by a dropped sliver): the best of the tets with the nearest
        # centroids, i.e. the one needing the least extrapolation.
        tree = cKDTree(cps[tets].mean(1))
        k2 = min(FALLBACK_CANDIDATE_TETS, tets.shape[0])
        _, cand2 = tree.query(verts[missing], k=k2)
        cand2 = cand2.reshape(missing.size, k2)
        w2 = _weights(verts[missing, None, :], origin[cand2], transform[cand2])
        score2 = w2.min(-1)
        best2 = np.argmax(score2, axis=1)
        r2 = np.arange(missing.size)
        tet_index[missing] = cand2[r2, best2]
        weights[missing] = w2[r2, best2]
        inside[missing] = score2[r2, best2] >= INSIDE_TOLERANCE

    return Binding(
        tet_index=tet_index.astype(np.int32),
        control_point_indices=tets[tet_index].astype(np.int32),
        weights=weights,
        outside_count=int(np.count_nonzero(~inside)),
    )


def blend(control_points: np.ndarray, indices: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """The seed's vertex-shader blend: x_v = Σₖ w_vk · q[i_vk].

    Args:
        control_points: float [control_point_count, 3] [m], current control-point positions.
        indices: int [vertex_count, 4].
        weights: float [vertex_count, 4].

    Returns:
        float64 [vertex_count, 3] [m].
    """
    q = np.asarray(control_points, dtype=np.float64)
    return np.einsum("vk,vkj->vj", weights, q[indices])


def pinned_control_points(indices: np.ndarray, weights: np.ndarray, vertex_pinned: np.ndarray,
                          control_point_count: int) -> np.ndarray:
    """Control points to pin so that every pinned vertex stays exactly where it is.

    A vertex is a blend of its 4 control points, so it holds still only if all of them do: every
    control point that a pinned vertex uses (with a non-zero weight) is pinned.

    Args:
        indices: int [vertex_count, 4].
        weights: float [vertex_count, 4].
        vertex_pinned: bool [vertex_count].
        control_point_count: Q.

    Returns:
        bool [control_point_count].
    """
    used = (np.asarray(weights) != 0.0) & np.asarray(vertex_pinned, dtype=bool)[:, None]
    pinned = np.zeros(control_point_count, dtype=bool)
    pinned[np.asarray(indices)[used]] = True
    return pinned


def control_point_goal_weights(indices: np.ndarray, weights: np.ndarray, vertex_goal: np.ndarray,
                               control_point_count: int) -> np.ndarray:
    """Goal weights of the control points from per-vertex goal weights.

    A control point takes the average goal weight of the vertices it carries, weighted by their
    barycentric weights (positive ones only); every control point a vertex of goal weight 1 uses
    gets 1, so that vertex follows its goal exactly (as ``pinned_control_points``). Control points
    no vertex uses keep 0.

    Args:
        indices: int [vertex_count, 4]; weights: float [vertex_count, 4].
        vertex_goal: float [vertex_count] in [0, 1].
        control_point_count: Q.

    Returns:
        float64 [control_point_count] in [0, 1].
    """
    idx = np.asarray(indices).ravel()
    w = np.clip(np.asarray(weights, dtype=np.float64), 0.0, None).ravel()
    goal = np.repeat(np.clip(np.asarray(vertex_goal, dtype=np.float64), 0.0, 1.0), 4)
    total = np.bincount(idx, weights=w, minlength=control_point_count)
    out = np.bincount(idx, weights=w * goal, minlength=control_point_count) / np.where(total > 0, total, 1.0)
    exact = pinned_control_points(indices, weights, np.asarray(vertex_goal) >= 1.0, control_point_count)
    return np.where(exact, 1.0, out)



def blend_matrix(indices: np.ndarray, weights: np.ndarray, control_point_count: int) -> csr_matrix:
    """The blend as a sparse matrix B [vertex_count, control_point_count] with B @ q = blend(q).

    Built once per binding; a sparse product is several times faster than gathering
    q[indices] every frame (measured in benchmarks/).

    Args:
        indices: int [vertex_count, 4].
        weights: float [vertex_count, 4] (stored as float64).
        control_point_count: Q.

    Returns:
        scipy.sparse.csr_matrix, float64, 4 entries per row (duplicate indices are summed).
    """
    n = indices.shape[0]
    return csr_matrix((np.asarray(weights, dtype=np.float64).ravel(),
                       np.asarray(indices, dtype=np.int64).ravel(), np.arange(0, 4 * n + 1, 4)),
                      shape=(n, control_point_count))
