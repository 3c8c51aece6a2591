"""Building a tetrahedral cage around a mesh: ``build_cage`` checks the points and shapes the cage
by one of two methods, the hull (``hull``, seed 000) or the fit (``fit``, tets inside the mesh).
"""

from __future__ import annotations

import numpy as np

from ..errors import TetRigInputError
from . import inside
from .fit import FIT_MIN_SOLID_SHARE, FIT_VOXELS_PER_SPACING, build_fit, point_normals
from .hull import build_hull
from .tets import METHOD_FIT, METHOD_HULL, METHODS, Cage

# Points closer than this fraction of the bounding-box diagonal count as duplicates.
DUPLICATE_TOLERANCE = 1e-9
# A cloud whose second principal extent is below this fraction of its diagonal is a line.
FLAT_TOLERANCE = 1e-6

DEFAULT_RESOLUTION = 10
# A hull cage is one body (the hull is convex). When the slivers ``build_hull`` drops cut it in
# pieces, the lattice is made this much finer, at most this many times. Measured: issue 24's bar
# (1 × 0.1 × 0.1 m, a 41 × 5 × 5 point grid) at Resolution 10 was 22 control points in 2 bodies
# (the interior points of a rod one cell thick lie on one plane at the hull's clearance; the slivers
# between them were dropped) and its tip half fell off; 4 passes (4.1 cm cells) give 127 in one
# body; at Resolutions 12 and 16 it was in pieces too (122 and 107 points after 3 and 1 passes),
# and a box's surface of that size centred on the origin needed 5 passes at Resolution 8.
HULL_REFINE_FACTOR = 0.8
HULL_REFINE_PASSES = 10
DEFAULT_MAX_CONTROL_POINTS = 2000


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
    return _validated(points)[0]


def _validated(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``validate_points`` and, for each input point, the index of its distinct point: int64 [n]."""
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
    first, group = _distinct(p, diag)
    u = p[first]
    if u.shape[0] < 4:
        raise TetRigInputError(
            f"The mesh has {u.shape[0]} distinct vertices; a tetrahedral cage needs at least 4."
        )
    centred = u - u.mean(0)
    singular = np.linalg.svd(centred, compute_uv=False) / np.sqrt(u.shape[0])
    if singular[1] < FLAT_TOLERANCE * diag:
        raise TetRigInputError("All vertices lie on one line, so there is no volume to fill with tets.")
    return u, group


def _distinct(p: np.ndarray, diag: float) -> tuple[np.ndarray, np.ndarray]:
    """The first of each group of points closer than ``DUPLICATE_TOLERANCE`` of ``diag`` [m]:
    (their indices into ``p`` int64 [u], ascending; the index among them of each point's group
    int64 [n])."""
    # Quantize relative to the diagonal so nearly identical points collapse to one; a stable sort
    # of the rows puts each group's first point first (np.unique on rows is several times slower).
    key = np.round((p - p.min(0)) / (diag * DUPLICATE_TOLERANCE)).astype(np.int64)
    order = np.lexsort(key.T[::-1])
    ordered = key[order]
    starts = np.ones(p.shape[0], dtype=bool)
    starts[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    first = order[starts]
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.shape[0])
    group = np.empty(p.shape[0], dtype=np.int64)
    group[order] = rank[np.cumsum(starts) - 1]
    return np.sort(first), group


def _pieces(cage: Cage) -> int:
    """How many separate bodies the cage's tets make (points joined by a tet are one body)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = cage.control_points.shape[0]
    tets = cage.tets.astype(np.int64)
    graph = coo_matrix((np.ones(3 * tets.shape[0]), (np.repeat(tets[:, 0], 3), tets[:, 1:].ravel())), shape=(n, n))
    return int(connected_components(graph, directed=False)[0])


def _joined(*notes: str) -> str:
    """The build's notes for the user, in one line ('' for none)."""
    return "; ".join(n for n in notes if n)


def _length(metres: float) -> str:
    """A length for a message: '4.8 cm', '1.2 m'."""
    return f"{100.0 * metres:.3g} cm" if metres < 1.0 else f"{metres:.3g} m"


def build_cage(
    points: np.ndarray,
    resolution: int = DEFAULT_RESOLUTION,
    max_control_points: int = DEFAULT_MAX_CONTROL_POINTS,
    triangles: np.ndarray | None = None,
    method: str = METHOD_HULL,
) -> Cage:
    """Build a tetrahedral cage around ``points``.

    ``METHOD_HULL`` (seed 000): the convex hull, resampled, filled with a BCC lattice, Delaunay
    tets. ``METHOD_FIT`` (needs ``triangles``): tets inside the mesh and a thin margin around it
    only (``fit.build_fit``), so limbs and parts get their own tets; a mesh with no inside to tell
    (an open shell, a flat figure, ``inside``) falls back to the hull and says why in ``note``.

    Args:
        points: float [point_count, 3] [m], the mesh's rest vertices (object space).
        resolution: lattice cells across the longest side of the bounding box (≥ 1); higher gives
            more, smaller tets.
        max_control_points: cap on the control-point count (≥ 8); the spacing grows until it fits.
        triangles: int [triangle_count, 3], the mesh's faces as triangles (``METHOD_FIT``).
        method: ``METHOD_FIT`` or ``METHOD_HULL``.

    Returns:
        A ``Cage`` whose tets are positively oriented, have quality ≥ ``SLIVER_QUALITY`` and hold
        every point of ``points`` (the hull: cover its convex hull). A cloud thinner than one
        lattice spacing (a planar mesh) is thickened to ``THIN_SLAB_SPACINGS`` spacings first.

    Raises:
        TetRigInputError: see ``validate_points``; a resolution/cap out of range; an unknown method; a
            mesh too thin for any Hull cage under the cap (every tet a sliver).
    """
    if resolution < 1:
        raise TetRigInputError(f"Resolution must be at least 1, got {resolution}.")
    if max_control_points < 8:
        raise TetRigInputError(f"The control-point cap must be at least 8, got {max_control_points}.")
    if method not in METHODS:
        raise TetRigInputError(f"Unknown cage method {method!r}; use one of {METHODS}.")
    pts, group = _validated(points)
    size = float((pts.max(0) - pts.min(0)).max())
    spacing = size / resolution
    note = ""
    if method == METHOD_FIT:
        if triangles is None or len(triangles) == 0:
            note = "the mesh has no faces, so the cage fills its hull"
        else:
            solid = inside.voxelize(points, triangles, spacing / FIT_VOXELS_PER_SPACING)
            if solid.solid_share < FIT_MIN_SOLID_SHARE:
                note = "the mesh has no closed inside (an open or flat surface), so the cage fills its hull"
            else:
                vertices, tris = np.asarray(points, dtype=np.float64), np.asarray(triangles, dtype=np.int64)
                normals = point_normals(vertices, tris, group, pts.shape[0])
                return build_fit(pts, normals, vertices, tris, spacing, max_control_points, solid)
    asked, refined, first = spacing, 0, None
    for _ in range(32):
        cage = build_hull(pts, spacing)
        if cage.control_point_count > max_control_points:
            spacing *= 1.1 * (cage.control_point_count / max_control_points) ** (1.0 / 3.0)
            continue
        pieces = _pieces(cage) if cage.tet_count else 0
        if pieces == 1:
            if spacing < asked * (1.0 - 1e-9):
                note = _joined(note, f"cells of {_length(spacing)} instead of {_length(asked)}, so the cage of this "
                                     "thin mesh holds together")
            return Cage(cage.control_points, cage.tets, cage.dropped_slivers, METHOD_HULL, note)
        first = first or (cage, pieces)
        if refined == HULL_REFINE_PASSES:
            break
        # slivers dropped cut a thin part through: a finer lattice (see the constant)
        spacing *= HULL_REFINE_FACTOR
        refined += 1
    if first is not None:  # no finer lattice under the cap held together: the first cage, and why
        cage, pieces = first
        remedy = "a higher Resolution or Max Points" + (", or the Fit cage," if method == METHOD_HULL else "")
        if pieces == 0:
            raise TetRigInputError(f"The mesh is too thin for a Hull cage at this Resolution (every tet would be a "
                                   f"sliver): {remedy} may give it one.")
        if pieces > 1:
            note = _joined(note, f"the cage is in {pieces} pieces (the mesh is thin for its cells): {remedy} may "
                                 "hold it together")
        return Cage(cage.control_points, cage.tets, cage.dropped_slivers, METHOD_HULL, note)
    raise TetRigInputError(f"Could not fit the cage under {max_control_points} control points.")
