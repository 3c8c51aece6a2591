"""Point location in a cage: which tet holds each point, and its barycentric weights, by a grid
over the tets (``TetSearch``), for the binding and for building a fit cage.

Each tet is listed in every cell of a uniform grid that its bounding box touches (about one tet
per cell), so a point's cell lists every tet that can hold it; the first of them that holds it
(its smallest barycentric weight at least ``INSIDE_TOLERANCE``) is taken, else the one it is least
outside. Compiled with Numba (``locate_kernel``, a loop over points) when it loads, else in
vectorized NumPy rounds: the same tets.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np

from ..geometry import barycentric_transforms
from ..lazy_kernel import KernelUnavailable, LazyKernel
from ..solver import backend

# A vertex counts as inside a tet when its smallest barycentric weight is at least this (−ε lets
# points on shared faces and on the hull surface count as inside despite rounding).
INSIDE_TOLERANCE = -1e-9


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


def _load_kernel() -> ModuleType:
    """Import the kernel and compile it (or read Numba's cache) on one point."""
    from . import locate_kernel as module

    module.warm_up()
    return module


# Loaded in the background whenever the solver's kernel has loaded (measured: 1.8 s the first
# time, compiling; 0.5 s from Numba's cache): searches use Numba where the solver does.
_KERNEL = LazyKernel(_load_kernel, "tetrig-locate-compile")
backend.also_load(_KERNEL)


def _compiled_kernel() -> ModuleType | None:
    """The compiled point location (``locate_kernel``) where the solver's kernel is loaded (a
    search just after that waits for the end of its load), else None: the NumPy rounds below
    find the same tets."""
    if not backend.kernel_ready():
        return None
    try:
        return _KERNEL.module()
    except KernelUnavailable:
        return None


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
        where the cell lists no tet). With the compiled kernel loaded, ``locate_kernel.locate_points`` (a loop
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
