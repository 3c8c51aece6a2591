"""Tetrahedral cage construction: convex hull + interior lattice → Delaunay tets.

The cage is the technique of seed article 000: take the convex hull of the mesh, tetrahedralize it,
and use the tet vertices as control points. Two refinements keep the tets well shaped:

* the hull is resampled to about one control point per lattice spacing (farthest-point sampling of
  the hull vertices, then scaled about its centroid just enough to enclose every input point), so a
  scanned mesh with thousands of hull vertices does not produce thousands of slivers;
* interior points come from a body-centred cubic (BCC) lattice, whose Delaunay tessellation has no
  co-spherical degeneracies (unlike a plain cubic grid), kept at least half a spacing inside the hull.

Sources: seed article 000 (hull + tetrahedralization); Labelle & Shewchuk 2007, "Isosurface Stuffing"
(BCC lattice for well-shaped tets); SciPy's Qhull wrappers (``ConvexHull``, ``Delaunay``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import ConvexHull, Delaunay, QhullError

from .errors import TetRigInputError

# Tets whose normalized volume (see ``tet_quality``) is below this are slivers and are dropped.
SLIVER_QUALITY = 0.05
# Interior lattice points closer than this many spacings to the hull surface are dropped, so no tet
# is squeezed between a hull face and a lattice point just inside it.
BOUNDARY_CLEARANCE = 0.5
# Hull vertices are thinned to about one per ``HULL_SPACING_FACTOR`` lattice spacings.
HULL_SPACING_FACTOR = 1.0
# A cloud thinner than this many lattice spacings is padded to it (one spacing leaves no room for
# interior points and gives many slivers; two measured clean on the flat woody.obj).
THIN_SLAB_SPACINGS = 2.0
# Enlarge the resampled hull by this relative margin beyond the minimum that encloses every point,
# so vertices on the hull are strictly inside a tet rather than on its face.
ENCLOSE_MARGIN = 1e-4
# Points closer than this fraction of the bounding-box diagonal count as duplicates.
DUPLICATE_TOLERANCE = 1e-9
# A cloud whose second principal extent is below this fraction of its diagonal is a line.
FLAT_TOLERANCE = 1e-6

DEFAULT_RESOLUTION = 10
DEFAULT_MAX_CONTROL_POINTS = 2000


@dataclass(frozen=True)
class Cage:
    """A tetrahedral cage.

    Attributes:
        control_points: float64 [control_point_count, 3] [m], rest positions of the control points
            (the seed's ``bones_rest``), in the same space as the input points.
        tets: int32 [tet_count, 4], control-point indices of each tet, positively oriented
            (det[p1-p0, p2-p0, p3-p0] > 0).
        dropped_slivers: how many Delaunay tets were removed as slivers.
    """

    control_points: np.ndarray
    tets: np.ndarray
    dropped_slivers: int = 0

    @property
    def control_point_count(self) -> int:
        return int(self.control_points.shape[0])

    @property
    def tet_count(self) -> int:
        return int(self.tets.shape[0])


def tet_volumes(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Signed volumes of tets.

    Args:
        points: float [point_count, 3] [m].
        tets: int [tet_count, 4].

    Returns:
        float64 [tet_count] [m³]; positive for positively oriented tets.
    """
    p = np.asarray(points, dtype=np.float64)[tets]
    e1, e2, e3 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]
    return np.einsum("ij,ij->i", np.cross(e1, e2), e3) / 6.0


def tet_quality(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Normalized tet quality: 6√2·V / l_rms³, 1 for a regular tet, ≤ 0 for inverted or flat ones.

    Args:
        points: float [point_count, 3] [m].
        tets: int [tet_count, 4].

    Returns:
        float64 [tet_count], dimensionless.
    """
    p = np.asarray(points, dtype=np.float64)[tets]
    pairs = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    sq = sum(np.einsum("ij,ij->i", p[:, a] - p[:, b], p[:, a] - p[:, b]) for a, b in pairs)
    l_rms = np.sqrt(sq / 6.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = 6.0 * np.sqrt(2.0) * tet_volumes(points, tets) / l_rms**3
    return np.nan_to_num(q, nan=0.0)


def unique_edges(tets: np.ndarray) -> np.ndarray:
    """Unique undirected edges of a set of tets (the seed's spring list).

    Args:
        tets: int [tet_count, 4].

    Returns:
        int32 [edge_count, 2], each row sorted (i < j), rows sorted lexicographically.
    """
    tets = np.asarray(tets)
    pairs = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    e = tets[:, pairs].reshape(-1, 2)
    e = np.sort(e, axis=1)
    return np.unique(e, axis=0).astype(np.int32)


def validate_points(points: np.ndarray) -> np.ndarray:
    """Check that a point cloud can carry a cage; return it as float64 with duplicates removed.

    Args:
        points: float [point_count, 3] [m].

    Returns:
        float64 [unique_count, 3] [m].

    Raises:
        TetRigInputError: empty input, non-finite coordinates, fewer than 4 distinct points, or all
            points on one line. Planar input is accepted: ``build_cage`` thickens it.
    """
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3 or p.shape[0] == 0:
        raise TetRigInputError("The mesh has no vertices.")
    if not np.all(np.isfinite(p)):
        bad = int(np.count_nonzero(~np.all(np.isfinite(p), axis=1)))
        noun = "vertex" if bad == 1 else "vertices"
        raise TetRigInputError(f"The mesh has {bad} {noun} with NaN or infinite coordinates.")
    diag = float(np.linalg.norm(p.max(0) - p.min(0)))
    if diag == 0.0:
        raise TetRigInputError("All vertices are at one point; a cage needs a volume.")
    # Quantize relative to the diagonal so nearly identical points collapse to one.
    key = np.round((p - p.min(0)) / (diag * DUPLICATE_TOLERANCE)).astype(np.int64)
    _, first = np.unique(key, axis=0, return_index=True)
    u = p[np.sort(first)]
    if u.shape[0] < 4:
        raise TetRigInputError(
            f"The mesh has {u.shape[0]} distinct vertices; a tetrahedral cage needs at least 4."
        )
    centred = u - u.mean(0)
    singular = np.linalg.svd(centred, compute_uv=False) / np.sqrt(u.shape[0])
    if singular[1] < FLAT_TOLERANCE * diag:
        raise TetRigInputError("All vertices lie on one line, so there is no volume to fill with tets.")
    return u


def _farthest_point_sample(points: np.ndarray, spacing: float) -> np.ndarray:
    """Indices of a subset of ``points`` with no two closer than about ``spacing``.

    Greedy farthest-point sampling (one vectorized distance update per chosen point). Returns
    int64 [k]. The loop runs over chosen samples (hundreds), never over all points per frame.
    """
    n = points.shape[0]
    chosen = [int(np.argmax(np.linalg.norm(points - points.mean(0), axis=1)))]
    dist = np.linalg.norm(points - points[chosen[0]], axis=1)
    while len(chosen) < n:
        nxt = int(np.argmax(dist))
        if dist[nxt] < spacing:
            break
        chosen.append(nxt)
        dist = np.minimum(dist, np.linalg.norm(points - points[nxt], axis=1))
    return np.asarray(chosen, dtype=np.int64)


def _hull(points: np.ndarray) -> ConvexHull:
    try:
        return ConvexHull(points)
    except QhullError as exc:  # QH6154 and friends: degenerate input
        raise TetRigInputError(
            "Qhull could not build a convex hull (the vertices are degenerate, e.g. planar): "
            + str(exc).splitlines()[0]
        ) from exc


def _enclosing_hull_points(points: np.ndarray, spacing: float) -> np.ndarray:
    """Resampled hull vertices, scaled about their centroid to enclose every input point."""
    hull = _hull(points)
    hull_pts = points[hull.vertices]
    sample = hull_pts[_farthest_point_sample(hull_pts, spacing * HULL_SPACING_FACTOR)]
    if sample.shape[0] < 4:
        sample = hull_pts
    try:
        small = ConvexHull(sample)
    except QhullError:
        sample, small = hull_pts, hull
    centre = sample[small.vertices].mean(0)
    normals, offsets = small.equations[:, :3], small.equations[:, 3]
    # Gauge of each original hull vertex w.r.t. the resampled hull around ``centre``: the factor by
    # which the resampled hull must grow to contain it. Convexity makes hull vertices sufficient.
    room = -(normals @ centre + offsets)  # distance from centre to each face, > 0
    gauge = ((hull_pts - centre) @ normals.T) / room
    scale = max(1.0, float(gauge.max())) * (1.0 + ENCLOSE_MARGIN)
    result = centre + (sample[small.vertices] - centre) * scale
    return result


def _bcc_lattice(lo: np.ndarray, hi: np.ndarray, spacing: float) -> np.ndarray:
    """Body-centred cubic lattice points covering the box [lo, hi]; float64 [k, 3]."""
    axes = [np.arange(lo[k], hi[k] + spacing, spacing) for k in range(3)]
    corners = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    centres = corners + 0.5 * spacing
    return np.concatenate([corners, centres])


def _thicken(points: np.ndarray, spacing: float) -> np.ndarray:
    """Pad a flat or thin cloud to ``THIN_SLAB_SPACINGS`` spacings thick along its thinnest axis.

    A planar mesh (a leaf, a sheet, a paper figure) has no volume for tets; doubling it on both
    sides of its mid-plane gives a slab with a layer of interior lattice points, whose tets are
    well shaped, and the mesh sits in the slab's middle.
    """
    centred = points - points.mean(0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][-1]
    extent = float(np.ptp(centred @ axis))
    if extent >= THIN_SLAB_SPACINGS * spacing:
        return points
    pad = 0.5 * (THIN_SLAB_SPACINGS * spacing - extent)
    return np.concatenate([points + pad * axis, points - pad * axis])


def _build_once(points: np.ndarray, spacing: float) -> Cage:
    points = _thicken(points, spacing)
    boundary = _enclosing_hull_points(points, spacing)
    hull = _hull(boundary)
    lo, hi = boundary.min(0), boundary.max(0)
    # Centre the lattice in the box so it sits symmetrically inside the hull.
    extent = hi - lo
    offset = lo + 0.5 * (extent - spacing * np.floor(extent / spacing))
    lattice = _bcc_lattice(offset - spacing, hi, spacing)
    normals, offsets = hull.equations[:, :3], hull.equations[:, 3]
    depth = -(lattice @ normals.T + offsets).max(axis=1)  # distance inside the hull (>0 inside)
    interior = lattice[depth >= BOUNDARY_CLEARANCE * spacing]
    control_points = np.concatenate([boundary, interior])
    try:
        tri = Delaunay(control_points)
    except QhullError as exc:
        raise TetRigInputError("Qhull could not tetrahedralize the hull: " + str(exc).splitlines()[0]) from exc
    tets = tri.simplices.astype(np.int64)
    vol = tet_volumes(control_points, tets)
    flip = vol < 0
    tets[flip] = tets[flip][:, [0, 1, 3, 2]]
    quality = tet_quality(control_points, tets)
    keep = quality >= SLIVER_QUALITY
    tets = tets[keep]
    # Drop control points no tet uses any more (rare: a point only in slivers) and renumber.
    used = np.zeros(control_points.shape[0], dtype=bool)
    used[tets.ravel()] = True
    remap = np.cumsum(used) - 1
    return Cage(
        control_points=control_points[used],
        tets=remap[tets].astype(np.int32),
        dropped_slivers=int(np.count_nonzero(~keep)),
    )


def build_cage(
    points: np.ndarray,
    resolution: int = DEFAULT_RESOLUTION,
    max_control_points: int = DEFAULT_MAX_CONTROL_POINTS,
) -> Cage:
    """Build a tetrahedral cage enclosing ``points`` (seed 000: convex hull → tets).

    Args:
        points: float [point_count, 3] [m], the mesh's rest vertices (object space).
        resolution: lattice cells across the longest side of the bounding box (≥ 1); higher gives
            more, smaller tets.
        max_control_points: cap on the control-point count (≥ 8); the spacing grows until it fits.

    Returns:
        A ``Cage`` whose tets are positively oriented, have quality ≥ ``SLIVER_QUALITY`` and cover the
        convex hull of ``points``. A cloud thinner than one lattice spacing (a planar mesh) is
        thickened to ``THIN_SLAB_SPACINGS`` spacings first.

    Raises:
        TetRigInputError: see ``validate_points``; or a resolution/cap out of range.
    """
    if resolution < 1:
        raise TetRigInputError(f"Resolution must be at least 1, got {resolution}.")
    if max_control_points < 8:
        raise TetRigInputError(f"The control-point cap must be at least 8, got {max_control_points}.")
    pts = validate_points(points)
    size = float((pts.max(0) - pts.min(0)).max())
    spacing = size / resolution
    for _ in range(32):
        cage = _build_once(pts, spacing)
        if cage.control_point_count <= max_control_points:
            return cage
        spacing *= 1.1 * (cage.control_point_count / max_control_points) ** (1.0 / 3.0)
    raise TetRigInputError(f"Could not fit the cage under {max_control_points} control points.")
