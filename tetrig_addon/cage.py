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

from . import inside
from .binding import TetSearch
from .errors import TetRigInputError
from .geometry import tet_quality, tet_volumes

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

# How a cage is shaped: FIT follows the mesh (tets inside it and a margin around it), HULL fills
# the convex hull (the seed's cage: parts close together share tets).
METHOD_FIT = "FIT"
METHOD_HULL = "HULL"
METHODS = (METHOD_FIT, METHOD_HULL)
# Inside test voxels per lattice spacing (``inside.voxelize``).
FIT_VOXELS_PER_SPACING = 3
# A fit cage's tets reach at most this many lattice spacings out of the mesh (every point along
# their edges): so two parts farther apart than twice this get their own tets.
FIT_MARGIN_SPACINGS = 0.5
# Lattice points up to this many spacings out of the mesh are control points.
FIT_LATTICE_OUT_SPACINGS = 0.45
# Tets whose centre is up to this many spacings out of the mesh are kept (those between the surface
# samples and the outer layer hold the vertices).
FIT_CENTRE_OUT_SPACINGS = 0.3
# The fit cage's surface samples: the mesh's vertices thinned to about one per this many spacings.
FIT_SAMPLE_SPACINGS = 0.7
# The fit cage's outer layer: the surface samples moved out along their normals by this many
# lattice spacings.
FIT_OUTER_LAYER_SPACINGS = 0.4
# The fit cage's signed distance near the surface: samples this many spacings apart on the faces.
# (0.15 measured 99 % of distances within 0.04 spacings of the exact one, against 0.02, with a
# third of the samples on the bunny, and built its cage 0.2 s faster; but the slightly different
# cages failed two quality-pass tests, test_blender_quality's posed mesh at 1.35004 > 1.35 and
# the bunny's landing with 2 flipped triangles, so the cages stay as they were.)
FIT_SURFACE_STEP_SPACINGS = 0.1
# Lattice points closer than this many spacings to a layer point are dropped (they would make
# slivers with it); fewer than the hull's clearance, so that the margin keeps points around bulges.
FIT_LAYER_CLEARANCE = 0.25
# The vertices checked to be in a tet: one per cell this many spacings wide.
FIT_PROBE_SPACINGS = 0.15
# Vertices left in no tet get control points of their own, about this many spacings apart, and the
# mesh is tetrahedralized again, at most this many times.
FIT_REFINE_SPACINGS = 0.3
FIT_REFINE_PASSES = 2
# The signed distance near the surface is measured up to this many spacings out (beyond it, +inf):
# more than any test compares it with (the margin), and than a surface voxel's diagonal (plus the
# samples' step), so no point inside the mesh is ever told to be beyond it.
FIT_SIGNED_BEYOND_SPACINGS = 1.0
# Below this share of solid (not surface) voxels the mesh has no inside to fit (an open shell, a
# flat figure): the cage falls back to the hull.
FIT_MIN_SOLID_SHARE = 0.2


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
        note: why a fit was asked for but the hull was built ("" otherwise), for the user.
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


def _farthest_point_sample(points: np.ndarray, spacing: float) -> np.ndarray:
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
    return _cage(control_points, tri.simplices, np.ones(tri.simplices.shape[0], dtype=bool), METHOD_HULL)


def _cage(control_points: np.ndarray, simplices: np.ndarray, keep: np.ndarray, method: str,
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


def _build_fit(points: np.ndarray, normals: np.ndarray, vertices: np.ndarray, triangles: np.ndarray,
               solid: inside.Solid, spacing: float) -> Cage:
    """A cage that follows the mesh (Müller's tetrahedralizer keeps the tets inside the surface
    the same way, Ten Minute Physics 10/11):

    - control points: the BCC lattice inside the mesh and up to ``FIT_LATTICE_OUT_SPACINGS`` out
      of it, the vertices thinned to one per ``FIT_SAMPLE_SPACINGS`` and an outer layer over them
      (``FIT_OUTER_LAYER_SPACINGS`` out along the vertex normals);
    - tets: their Delaunay tets whose centre is inside (or just out of) the mesh, or that hold a
      vertex, less every tet with a point of an edge farther than ``FIT_MARGIN_SPACINGS`` out of
      the mesh (a tet bridging two legs);
    - vertices still in no tet get control points of their own, and the whole is tetrahedralized
      again (``FIT_REFINE_PASSES``).

    Deep inside and far outside are told by the voxels (``inside``); near the surface by the
    signed distance to points spread over its triangles (``inside.sample_surface``). So two parts
    farther apart than about 1.2 lattice spacings get their own tets.

    ``normals`` are the unit vertex normals at ``points`` (float64 [n, 3], ``_point_normals``).
    """
    from scipy.spatial import cKDTree

    samples = inside.sample_surface(vertices, triangles, FIT_SURFACE_STEP_SPACINGS * spacing)
    margin = FIT_MARGIN_SPACINGS * spacing
    near = int(np.ceil(margin / solid.voxel)) + 1
    # every test compares a distance with at most the margin, and a point in a surface voxel is
    # nearer than a voxel's diagonal (plus the samples' step) to the surface: farther is outside
    beyond = FIT_SIGNED_BEYOND_SPACINGS * spacing

    def signed(query: np.ndarray) -> np.ndarray:
        """Signed distance [m] where the voxels cannot tell (near the surface), ±inf elsewhere
        (+inf also beyond ``beyond`` out of it)."""
        zone = solid.zone(query, near)
        result = np.where(zone < 0, -np.inf, np.inf)
        ambiguous = zone == 0
        if ambiguous.any():
            result[ambiguous] = samples.signed_distance(query[ambiguous], beyond)
        return result

    lo, hi = points.min(0) - spacing, points.max(0) + spacing
    lattice = _bcc_lattice(lo, hi, spacing)
    lattice = lattice[signed(lattice) < FIT_LATTICE_OUT_SPACINGS * spacing]
    # thin the vertices to one per quarter-spacing cell first: the farthest-point sampling then
    # runs over a few thousand points, not every vertex of a scan
    thinned = _one_per_cell(points, 0.25 * spacing)
    chosen = thinned[_farthest_point_sample(points[thinned], FIT_SAMPLE_SPACINGS * spacing)]
    surface = points[chosen]
    # a second layer just outside the surface (along the vertex normals), so the tets between the
    # two layers hold the vertices between the samples
    outer = surface + FIT_OUTER_LAYER_SPACINGS * spacing * normals[chosen]
    layers = np.concatenate([surface, outer])
    # lattice points too close to a layer point would make slivers with it
    if lattice.shape[0]:
        distance, _ = cKDTree(layers).query(lattice)
        lattice = lattice[distance >= FIT_LAYER_CLEARANCE * spacing]
    # the vertices that must end up in a tet, one per small cell (a scan's 35,000 vertices are a
    # few thousand cells; a vertex shares its cell's tets, or is bound a hair outside them)
    probed = _one_per_cell(points, FIT_PROBE_SPACINGS * spacing)
    probe, probe_normals = points[probed], normals[probed]
    control_points = np.concatenate([layers, lattice])
    known: dict = {}
    for refine in range(FIT_REFINE_PASSES + 1):
        last = refine == FIT_REFINE_PASSES
        # the last pass gives every vertex, not only the probes, a tet holding it
        simplices, keep, search, searched = _fit_tets(control_points, points if last else probe, signed, spacing,
                                                      margin, known)
        if last:
            break
        # vertices in no kept tet (a sharp tip, a crease the samples missed): add them and their
        # outer points as control points, and tetrahedralize again
        final = keep & (tet_quality(control_points, _oriented(control_points, simplices)) >= SLIVER_QUALITY)
        lost = np.nonzero(search.containing(probe, final[searched]) < 0)[0]
        if lost.shape[0] == 0:
            simplices, keep, _, _ = _fit_tets(control_points, points, signed, spacing, margin, known)
            break
        lost = lost[_farthest_point_sample(probe[lost], FIT_REFINE_SPACINGS * spacing)]
        added = np.concatenate([probe[lost], probe[lost] + FIT_OUTER_LAYER_SPACINGS * spacing * probe_normals[lost]])
        distance, _ = cKDTree(control_points).query(added)
        control_points = np.concatenate([control_points, added[distance > FIT_LAYER_CLEARANCE * spacing]])
    return _cage(control_points, simplices, keep, METHOD_FIT)


def _one_per_cell(points: np.ndarray, cell: float) -> np.ndarray:
    """Indices (int64, ascending) of the first of ``points`` [n, 3] in each cube of side ``cell`` [m]."""
    ijk = np.floor((points - points.min(0)) / cell).astype(np.int64)
    dims = ijk.max(0) + 1
    _, first = np.unique((ijk[:, 0] * dims[1] + ijk[:, 1]) * dims[2] + ijk[:, 2], return_index=True)
    return np.sort(first)


def _oriented(control_points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """``tets`` with the negatively oriented ones' last two corners swapped."""
    flip = tet_volumes(control_points, tets) < 0
    out = tets.copy()
    out[flip] = out[flip][:, [0, 1, 3, 2]]
    return out


def _fit_tets(control_points: np.ndarray, points: np.ndarray, signed, spacing: float, margin: float,
              known: dict | None = None) -> tuple[np.ndarray, np.ndarray, TetSearch, np.ndarray]:
    """The Delaunay tets of ``control_points`` and which of them a fit cage keeps: the ones whose
    centre is inside the mesh (or just out of it) and the ones holding a vertex, less those
    reaching across empty space. Returns (simplices int [m, 4], keep bool [m], a search over
    the tets that may be kept, their indices int64 [s]).

    ``known`` carries what a refine pass measured to the next (control points are only appended,
    so indices stay valid): the signed distance at each control point and at each tet's centre,
    and the reach of each edge (most tets and edges survive a re-tetrahedralization; measuring them
    again was a third of the build)."""
    known = {} if known is None else known
    try:
        tri = Delaunay(control_points)
    except QhullError as exc:
        raise TetRigInputError("Qhull could not tetrahedralize the mesh: " + str(exc).splitlines()[0]) from exc
    simplices = tri.simplices
    if control_points.shape[0] <= 1 << 15:  # one int64 key per tet: most survive a refine pass
        corners = np.sort(simplices, axis=1).astype(np.int64)
        tet_keys = (((((corners[:, 0] << 15) + corners[:, 1]) << 15) + corners[:, 2]) << 15) + corners[:, 3]
        centre = _cached(known, "centre", tet_keys, lambda new: signed(control_points[simplices[new]].mean(1)))
    else:
        centre = signed(control_points[simplices].mean(1))
    keep = centre < FIT_CENTRE_OUT_SPACINGS * spacing
    # a vertex in none of them gets the tet that holds it (Qhull's flat tets between co-spherical
    # lattice points hold nothing, and ``_cage`` drops them; a tet centred beyond the margin would
    # not pass the margin test below)
    # one grid over the tets that may be kept (not flat, centred within the margin), searched
    # among the kept ones, then the others
    near = np.nonzero((np.abs(tet_volumes(control_points, simplices)) > 1e-9 * spacing ** 3) & (centre < margin))[0]
    search = TetSearch(control_points, simplices[near])
    lost = points[search.containing(points, keep[near]) < 0]
    holding = search.containing(lost, ~keep[near])
    keep[near[np.unique(holding[holding >= 0])]] = True
    # ... but no tet reaches across empty space: a tet from one leg to the next has an edge whose
    # middle part is farther out than the margin (its centre may still be inside a leg)
    candidates = np.nonzero(keep)[0]
    edges = np.sort(simplices[candidates][:, [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]], axis=2)
    n = np.int64(control_points.shape[0])
    keys, inverse = np.unique(edges[:, :, 0].astype(np.int64) * n + edges[:, :, 1], return_inverse=True)
    unique = np.stack([keys // n, keys % n], axis=1)
    # the distance grows at most as fast as one walks: an edge whose ends are near enough the
    # surface for its middle to stay within the margin needs no samples (most of them)
    at_point = known.get("at_point", np.zeros(0))
    if at_point.shape[0] < n:
        added = signed(control_points[at_point.shape[0]:])
        added[np.isneginf(added)] = 0.0  # deep inside: below zero, by how much is not known
        at_point = known["at_point"] = np.concatenate([at_point, added])
    a, b = control_points[unique[:, 0]], control_points[unique[:, 1]]
    bound = 0.5 * (at_point[unique[:, 0]] + at_point[unique[:, 1]] + np.linalg.norm(b - a, axis=1))
    edge_reach = np.full(unique.shape[0], -np.inf)
    check = np.nonzero(bound >= margin)[0]
    # global edge keys (the index space grows between passes, so not ``keys``)
    global_keys = unique[check, 0].astype(np.int64) * (1 << 32) + unique[check, 1]
    ends = unique[check]
    edge_reach[check] = _cached(known, "edge", global_keys, lambda new: _edge_reach(
        a[check[new]], b[check[new]], at_point[ends[new, 0]], at_point[ends[new, 1]], signed, margin))
    reach = edge_reach[inverse.ravel()].reshape(-1, 6).max(1)
    keep[candidates[reach >= margin]] = False
    return simplices, keep, search, near


def _cached(known: dict, name: str, keys: np.ndarray, measure) -> np.ndarray:
    """float64 [k]: a value for each of ``keys`` (distinct int64 [k]): the ones ``known[name]`` holds
    from a pass before, and ``measure(new)`` for the others (``new``: their positions in ``keys``),
    which are added to it."""
    old_keys, old_values = known.get(name, (np.zeros(0, np.int64), np.zeros(0)))
    values = np.empty(keys.shape[0])
    seen = np.zeros(keys.shape[0], dtype=bool)
    if old_keys.shape[0]:
        slot = np.searchsorted(old_keys, keys).clip(max=old_keys.shape[0] - 1)
        seen = old_keys[slot] == keys
        values[seen] = old_values[slot[seen]]
    new = np.nonzero(~seen)[0]
    if new.shape[0]:
        values[new] = measure(new)
    merged = np.concatenate([old_keys, keys[new]])
    order = np.argsort(merged, kind="stable")
    known[name] = (merged[order], np.concatenate([old_values, values[new]])[order])
    return values


# Where along a tet's edges the margin test looks (7 points, 1/8 apart), in the order it looks:
# the middle first, then each round halves the gaps.
_EDGE_ROUNDS = (np.array([0.5]), np.array([0.25, 0.75]), np.array([0.125, 0.375, 0.625, 0.875]))


def _edge_reach(a: np.ndarray, b: np.ndarray, at_a: np.ndarray, at_b: np.ndarray, signed,
                margin: float) -> np.ndarray:
    """How far out of the mesh the edges a→b (float [e, 3] each) reach: float64 [e] [m], the largest
    signed distance ``signed`` measured at the points of ``_EDGE_ROUNDS`` (−inf if none was).

    It is ≥ ``margin`` exactly when the largest over all seven points would be, as the distance to
    the samples grows at most as fast as one walks (a point deep inside counts as 0, as the ends do
    in ``_fit_tets``; the sign is left out, since it may flip between two samples): a point whose
    distance cannot reach the margin, given what is known around it (the ends' distances ``at_a``,
    ``at_b`` float [e] [m], and the points measured in the rounds before), is not measured, and an
    edge stops at its first point at or beyond the margin. Most edges need their middle point only.
    """
    length = np.linalg.norm(b - a, axis=1)
    known_t, known_s = [np.array([0.0, 1.0])], [np.abs(np.stack([at_a, at_b], axis=1))]
    reach = np.full(a.shape[0], -np.inf)
    for t in _EDGE_ROUNDS:
        kt, ks = np.concatenate(known_t), np.concatenate(known_s, axis=1)  # [k], [e, k]
        bound = (ks[:, None, :] + np.abs(t[:, None] - kt[None, :]) * length[:, None, None]).min(2)  # [e, r]
        look = (reach < margin)[:, None] & (bound >= margin)
        value = np.full(bound.shape, -np.inf)
        rows, cols = np.nonzero(look)
        if rows.shape[0]:
            value[rows, cols] = signed(a[rows] + t[cols, None] * (b - a)[rows])
        reach = np.maximum(reach, value.max(1))
        known_t.append(t)
        # deep inside: below zero, by how much is not known; not measured: at most its bound
        known_s.append(np.where(look, np.where(np.isneginf(value), 0.0, np.abs(value)), bound))
    return reach


def _point_normals(vertices: np.ndarray, triangles: np.ndarray, group: np.ndarray, count: int) -> np.ndarray:
    """Unit area-weighted normals of the mesh at its distinct points: the faces of every vertex of
    a point count (a seam's split vertices share one normal). ``group``: int [vertex_count], the
    point of each vertex (``_validated``). Returns float64 [count, 3]; a point of no face or of
    cancelling faces gets (0, 0, 0)."""
    corners = vertices[triangles]
    face = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    at = group[triangles].ravel()  # each face's three corners, in a row
    n = np.stack([np.bincount(at, weights=np.repeat(face[:, k], 3), minlength=count) for k in range(3)], axis=1)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return np.where(length > 0.0, n / np.where(length > 0.0, length, 1.0), 0.0)


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
    only (``_build_fit``), so limbs and parts get their own tets; a mesh with no inside to tell
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
        TetRigInputError: see ``validate_points``; a resolution/cap out of range; an unknown method.
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
                normals = _point_normals(vertices, tris, group, pts.shape[0])
                return _fit_under_cap(pts, normals, vertices, tris, spacing, max_control_points, solid)
    for _ in range(32):
        cage = _build_once(pts, spacing)
        if cage.control_point_count <= max_control_points:
            return Cage(cage.control_points, cage.tets, cage.dropped_slivers, METHOD_HULL, note)
        spacing *= 1.1 * (cage.control_point_count / max_control_points) ** (1.0 / 3.0)
    raise TetRigInputError(f"Could not fit the cage under {max_control_points} control points.")


def _fit_under_cap(pts: np.ndarray, normals: np.ndarray, vertices: np.ndarray, triangles: np.ndarray,
                   spacing: float, max_control_points: int, solid: inside.Solid) -> Cage:
    """``_build_fit`` at ``spacing`` (``solid`` voxelized for it), coarsened until the cage fits
    under the cap."""
    for attempt in range(32):
        if attempt:
            solid = inside.voxelize(vertices, triangles, spacing / FIT_VOXELS_PER_SPACING)
        cage = _build_fit(pts, normals, vertices, triangles, solid, spacing)
        if cage.control_point_count <= max_control_points:
            return cage
        spacing *= 1.1 * (cage.control_point_count / max_control_points) ** (1.0 / 3.0)
    raise TetRigInputError(f"Could not fit the cage under {max_control_points} control points.")
