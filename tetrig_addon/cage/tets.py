"""The cage and what both ways of building it share: the ``Cage`` (control points and tets), the
cage of a set of Delaunay tets (oriented, slivers dropped), the body-centred cubic lattice and
farthest-point sampling.

Sources: Labelle & Shewchuk 2007, "Isosurface Stuffing" (BCC lattice for well-shaped tets);
SciPy's Qhull wrappers (``Delaunay``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..geometry import tet_quality, tet_volumes

# Tets whose normalized volume (see ``tet_quality``) is below this are slivers and are dropped.
SLIVER_QUALITY = 0.05

# How a cage is shaped: FIT follows the mesh (tets inside it and a margin around it), HULL fills
# the convex hull (the seed's cage: parts close together share tets).
METHOD_FIT = "FIT"
METHOD_HULL = "HULL"
METHODS = (METHOD_FIT, METHOD_HULL)


@dataclass(frozen=True)
class Cage:
    """A tetrahedral cage.

    Attributes:
        control_points: float64 [control_point_count, 3] [m], rest positions of the control points
            (the seed's ``bones_rest``), in the same space as the input points.
        tets: int32 [tet_count, 4], control-point indices of each tet, positively oriented
            (det[p1-p0, p2-p0, p3-p0] > 0).
        dropped_slivers: how many Delaunay tets were removed as slivers.
        method: ``METHOD_FIT`` or ``METHOD_HULL``, how the cage was shaped.
        note: what the build changed from what was asked, for the user ("" nothing): why a fit was
            asked for but the hull was built, or why the hull's cells are finer than asked.
    """

    control_points: np.ndarray
    tets: np.ndarray
    dropped_slivers: int = 0
    method: str = METHOD_HULL
    note: str = ""

    @property
    def control_point_count(self) -> int:
        return int(self.control_points.shape[0])

    @property
    def tet_count(self) -> int:
        return int(self.tets.shape[0])


def farthest_point_sample(points: np.ndarray, spacing: float) -> np.ndarray:
    """Indices of a subset of ``points`` with no two closer than about ``spacing``.

    Greedy farthest-point sampling (one vectorized distance update per chosen point). Returns
    int64 [k]. The loop runs over chosen samples (hundreds), never over all points per frame.
    """
    n = points.shape[0]

    def squared(to: np.ndarray) -> np.ndarray:
        d = points - to
        return np.einsum("ij,ij->i", d, d)

    # squared distances: the same choices as the distances, without a square root per point
    chosen = [int(np.argmax(squared(points.mean(0))))]
    dist = squared(points[chosen[0]])
    while len(chosen) < n:
        nxt = int(np.argmax(dist))
        if dist[nxt] < spacing * spacing:
            break
        chosen.append(nxt)
        np.minimum(dist, squared(points[nxt]), out=dist)
    return np.asarray(chosen, dtype=np.int64)


def bcc_lattice(lo: np.ndarray, hi: np.ndarray, spacing: float) -> np.ndarray:
    """Body-centred cubic lattice points covering the box [lo, hi]; float64 [k, 3]."""
    axes = [np.arange(lo[k], hi[k] + spacing, spacing) for k in range(3)]
    corners = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    centres = corners + 0.5 * spacing
    return np.concatenate([corners, centres])


def delaunay_cage(control_points: np.ndarray, simplices: np.ndarray, keep: np.ndarray, method: str,
                  note: str = "") -> Cage:
    """The ``Cage`` of the Delaunay ``simplices`` marked ``keep``: oriented positively, slivers
    dropped, and the control points no tet uses any more dropped and renumbered."""
    tets = simplices.astype(np.int64)
    vol = tet_volumes(control_points, tets)
    flip = vol < 0
    tets[flip] = tets[flip][:, [0, 1, 3, 2]]
    good = tet_quality(control_points, tets) >= SLIVER_QUALITY
    tets = tets[keep & good]
    used = np.zeros(control_points.shape[0], dtype=bool)
    used[tets.ravel()] = True
    remap = np.cumsum(used) - 1
    return Cage(control_points=control_points[used], tets=remap[tets].astype(np.int32),
                dropped_slivers=int(np.count_nonzero(keep & ~good)), method=method, note=note)
