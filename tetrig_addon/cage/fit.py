"""The fit cage (``METHOD_FIT``): tets inside the mesh and a thin margin around it only, so limbs and
parts get their own tets (``build_fit``; the module's functions say how).

Sources: Müller's tetrahedralizer (Ten Minute Physics 10/11) keeps the tets inside the surface the
same way; Labelle & Shewchuk 2007 (the BCC lattice); SciPy's Qhull wrappers (``Delaunay``).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import Delaunay, QhullError

from ..errors import TetRigInputError
from ..geometry import tet_quality, tet_volumes
from . import inside
from .locate import TetSearch
from .tets import METHOD_FIT, SLIVER_QUALITY, Cage, bcc_lattice, delaunay_cage, farthest_point_sample

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

    ``normals`` are the unit vertex normals at ``points`` (float64 [n, 3], ``point_normals``).
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
    lattice = bcc_lattice(lo, hi, spacing)
    lattice = lattice[signed(lattice) < FIT_LATTICE_OUT_SPACINGS * spacing]
    # thin the vertices to one per quarter-spacing cell first: the farthest-point sampling then
    # runs over a few thousand points, not every vertex of a scan
    thinned = _one_per_cell(points, 0.25 * spacing)
    chosen = thinned[farthest_point_sample(points[thinned], FIT_SAMPLE_SPACINGS * spacing)]
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
        lost = lost[farthest_point_sample(probe[lost], FIT_REFINE_SPACINGS * spacing)]
        added = np.concatenate([probe[lost], probe[lost] + FIT_OUTER_LAYER_SPACINGS * spacing * probe_normals[lost]])
        distance, _ = cKDTree(control_points).query(added)
        control_points = np.concatenate([control_points, added[distance > FIT_LAYER_CLEARANCE * spacing]])
    return delaunay_cage(control_points, simplices, keep, METHOD_FIT)


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


def point_normals(vertices: np.ndarray, triangles: np.ndarray, group: np.ndarray, count: int) -> np.ndarray:
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


def build_fit(pts: np.ndarray, normals: np.ndarray, vertices: np.ndarray, triangles: np.ndarray,
              spacing: float, max_control_points: int, solid: inside.Solid) -> Cage:
    """The fit cage (``_build_fit``) at ``spacing`` [m], coarsened until it fits under the cap.

    Args:
        pts: float64 [n, 3] [m], the mesh's distinct points; normals: float64 [n, 3], their unit
            normals (``point_normals``).
        vertices: float64 [vertex_count, 3] [m]; triangles: int64 [triangle_count, 3], the mesh.
        max_control_points: the cap on the control points.
        solid: the mesh voxelized for ``spacing`` (``inside.voxelize``).

    Raises:
        TetRigInputError: no spacing fits under the cap; Qhull cannot tetrahedralize the points.
    """
    for attempt in range(32):
        if attempt:
            solid = inside.voxelize(vertices, triangles, spacing / FIT_VOXELS_PER_SPACING)
        cage = _build_fit(pts, normals, vertices, triangles, solid, spacing)
        if cage.control_point_count <= max_control_points:
            return cage
        spacing *= 1.1 * (cage.control_point_count / max_control_points) ** (1.0 / 3.0)
    raise TetRigInputError(f"Could not fit the cage under {max_control_points} control points.")
