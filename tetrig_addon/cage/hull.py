"""The hull cage (``METHOD_HULL``): convex hull + interior lattice → Delaunay tets.

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

import numpy as np
from scipy.spatial import ConvexHull, Delaunay, QhullError

from ..errors import TetRigInputError
from .tets import METHOD_HULL, Cage, bcc_lattice, delaunay_cage, farthest_point_sample

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
    sample = hull_pts[farthest_point_sample(hull_pts, spacing * HULL_SPACING_FACTOR)]
    if sample.shape[0] < 4:
        sample = hull_pts
    try:
        small = ConvexHull(sample)
    except QhullError:  # the sample is flat (a thin box's corners along one face): the whole hull
        sample, small = points, hull  # (``hull.vertices`` index ``points``, not ``hull_pts``)
    centre = sample[small.vertices].mean(0)
    normals, offsets = small.equations[:, :3], small.equations[:, 3]
    # Gauge of each original hull vertex w.r.t. the resampled hull around ``centre``: the factor by
    # which the resampled hull must grow to contain it. Convexity makes hull vertices sufficient.
    room = -(normals @ centre + offsets)  # distance from centre to each face, > 0
    gauge = ((hull_pts - centre) @ normals.T) / room
    scale = max(1.0, float(gauge.max())) * (1.0 + ENCLOSE_MARGIN)
    result = centre + (sample[small.vertices] - centre) * scale
    return result


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


def build_hull(points: np.ndarray, spacing: float) -> Cage:
    """The hull cage of ``points`` (float64 [n, 3] [m], distinct, not all on one line) at lattice
    spacing ``spacing`` [m] (see the module docstring).

    Raises:
        TetRigInputError: Qhull cannot build the hull or its tets (degenerate points).
    """
    points = _thicken(points, spacing)
    boundary = _enclosing_hull_points(points, spacing)
    hull = _hull(boundary)
    lo, hi = boundary.min(0), boundary.max(0)
    # Centre the lattice in the box so it sits symmetrically inside the hull.
    extent = hi - lo
    offset = lo + 0.5 * (extent - spacing * np.floor(extent / spacing))
    lattice = bcc_lattice(offset - spacing, hi, spacing)
    normals, offsets = hull.equations[:, :3], hull.equations[:, 3]
    depth = -(lattice @ normals.T + offsets).max(axis=1)  # distance inside the hull (>0 inside)
    interior = lattice[depth >= BOUNDARY_CLEARANCE * spacing]
    control_points = np.concatenate([boundary, interior])
    try:
        tri = Delaunay(control_points)
    except QhullError as exc:
        raise TetRigInputError("Qhull could not tetrahedralize the hull: " + str(exc).splitlines()[0]) from exc
    return delaunay_cage(control_points, tri.simplices, np.ones(tri.simplices.shape[0], dtype=bool), METHOD_HULL)
