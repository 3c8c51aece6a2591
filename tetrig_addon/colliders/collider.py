"""A collision object as the queries need it (``Collider``): one Blender object with Collision
physics, its world-space triangles for one frame, their table, pseudonormals and k-d trees,
built once per frame by ``mesh_collider``; ``distance`` measures points against it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from ..errors import TetRigInputError

# Blender's defaults for a new Collision modifier (BKE_partdeflect_new: pdef_sboft, pdef_sbift).
DEFAULT_THICKNESS_OUTER = 0.02
DEFAULT_THICKNESS_INNER = 0.2
# Coulomb coefficients of a collider whose settings give none.
DEFAULT_STATIC_FRICTION = 0.6
DEFAULT_KINETIC_FRICTION = 0.5

# A triangle whose |AB × AC| is below this fraction of its longest edge squared (sine of its
# largest angle, roughly) has no reliable normal: it is dropped as degenerate.
DEGENERATE_TRIANGLE_RELATIVE = 1e-12
# A pseudonormal sum shorter than this (two faces folded back to back, so their normals cancel)
# has no direction; the face normal of the triangle is used instead.
PSEUDONORMAL_MIN_LENGTH = 1e-12
# Points closer to the surface than this fraction of the collider's bounding-box diagonal are on
# the surface: their direction to the closest point is round-off, so the pseudonormal is returned.
SURFACE_TOLERANCE_RELATIVE = 1e-10
# Triangles are grouped into size classes whose enclosing-ball radii differ by at most this factor,
# so a mesh of large and small triangles does not give its small ones the large ones' search radius.
SIZE_CLASS_RATIO = 2.0

# Rows of Collider.triangle_table (one column per triangle): corner A, edges AB, AC, BC, unit
# normal N [m, m, m, m, 1], then AB·AB, AB·AC, AC·AC, BC·BC, |AB × AC|² [m²].
ROWS_A, ROWS_AB, ROWS_AC, ROWS_BC, ROWS_N = (slice(i, i + 3) for i in range(0, 15, 3))
ROW_AB_AB, ROW_AB_AC, ROW_AC_AC, ROW_BC_BC, ROW_AREA_SQ = range(15, 20)
TABLE_ROWS = 20

# Features of a triangle ABC, the index into Collider.feature_normals[:, feature].
FACE, VERTEX_A, VERTEX_B, VERTEX_C, EDGE_AB, EDGE_BC, EDGE_CA = range(7)
FEATURE_COUNT = 7


@dataclass(frozen=True, eq=False)  # eq=False: arrays have no single truth value; compare by identity
class SizeClass:
    """Triangles of similar size, searched together with one radius.

    Attributes:
        triangles: int64 [class_count], indices into ``Collider.triangles``.
        tree: cKDTree over the centres of their smallest enclosing balls.
        reach: [m] the largest of their enclosing-ball radii.
    """

    triangles: np.ndarray
    tree: cKDTree
    reach: float


@dataclass(frozen=True, eq=False)  # eq=False: arrays have no single truth value; compare by identity
class Collider:
    """One collision object for one frame, world space, with the data the queries need.

    Attributes:
        vertices: float64 [vertex_count, 3] [m], world space.
        triangles: int32 [triangle_count, 3], the non-degenerate input triangles, counterclockwise
            seen from outside (Blender's winding), so face normals point out.
        thickness_outer: [m] points closer than this outside the surface are pushed out to it.
        thickness_inner: [m] how deep below an open surface a point may be and still be pushed out.
        static_friction: μ_s ≥ kinetic_friction, Coulomb's static coefficient.
        kinetic_friction: μ_k ≥ 0, Coulomb's sliding coefficient.
        closed: every edge is shared by exactly two triangles that traverse it in opposite
            directions (watertight and consistently oriented): inside means any depth.
        corners: float64 [triangle_count, 3, 3] [m], corners A, B, C of each triangle.
        triangle_table: float64 [TABLE_ROWS, triangle_count], per triangle (one column each, so
            one ``take`` gathers a batch): A, AB, AC, BC [m], unit normal N, AB·AB, AB·AC, AC·AC,
            BC·BC, |AB × AC|² [m²]; rows named by ROWS_* and ROW_*.
        feature_normals: float64 [triangle_count, FEATURE_COUNT, 3], unit pseudonormal of each
            feature (FACE, VERTEX_A..C, EDGE_AB, EDGE_BC, EDGE_CA); a shared edge or vertex has
            the same pseudonormal in every triangle that holds it.
        center_tree: cKDTree over every triangle's enclosing-ball centre.
        max_reach: [m] the largest enclosing-ball radius.
        size_classes: the triangles grouped by size, each with a k-d tree of ball centres.
        bounds_min, bounds_max: float64 [3] [m], bounding box of the triangles' vertices.
        surface_tolerance: [m] distance below which a point counts as on the surface.
    """

    vertices: np.ndarray
    triangles: np.ndarray
    thickness_outer: float
    thickness_inner: float
    static_friction: float
    kinetic_friction: float
    closed: bool
    corners: np.ndarray
    triangle_table: np.ndarray
    feature_normals: np.ndarray
    center_tree: cKDTree
    max_reach: float
    size_classes: tuple[SizeClass, ...]
    bounds_min: np.ndarray
    bounds_max: np.ndarray
    surface_tolerance: float

    @property
    def contact_reach(self) -> float:
        """[m] how far outside the bounding box a point can still be in contact.

        Outside the surface contact ends at ``thickness_outer``; below an open surface it ends at
        ``thickness_inner``, and that side may stick out of the box (a plane's box is flat).
        """
        if self.closed:
            return self.thickness_outer
        return max(self.thickness_outer, self.thickness_inner)


def mesh_collider(vertices: np.ndarray, triangles: np.ndarray,
                  thickness_outer: float = DEFAULT_THICKNESS_OUTER,
                  thickness_inner: float = DEFAULT_THICKNESS_INNER,
                  static_friction: float = DEFAULT_STATIC_FRICTION,
                  kinetic_friction: float = DEFAULT_KINETIC_FRICTION) -> Collider:
    """Build a collider from a world-space triangle mesh.

    Args:
        vertices: float [vertex_count, 3] [m], world space.
        triangles: int [triangle_count, 3], vertex indices, counterclockwise seen from outside.
        thickness_outer: [m], ≥ 0.
        thickness_inner: [m], ≥ 0.
        static_friction, kinetic_friction: Coulomb coefficients, 0 ≤ μ_k ≤ μ_s.

    Returns:
        A ``Collider``; degenerate (zero-area) triangles are dropped first, and ``closed`` is
        judged on the triangles kept. Its arrays are copies, read-only.

    Raises:
        TetRigInputError: vertices not [n, 3] or not finite; triangles not [m, 3] integers or an
            index out of range; no triangle with an area; a thickness negative or not finite;
            friction coefficients negative, not finite, or static below kinetic.
    """
    verts = np.array(vertices, dtype=np.float64)  # a copy: it is made read-only below
    if verts.ndim != 2 or verts.shape[1] != 3 or verts.shape[0] == 0:
        raise TetRigInputError("The collision mesh has no vertices.")
    if not np.all(np.isfinite(verts)):
        raise TetRigInputError("The collision mesh has vertices with NaN or infinite coordinates.")
    tris = _validated_triangles(triangles, verts.shape[0])
    for name, value in (("Outer thickness", thickness_outer), ("Inner thickness", thickness_inner)):
        if not np.isfinite(value) or value < 0.0:
            raise TetRigInputError(f"{name} of a collision object must be 0 or more, not {value}.")
    if not (np.isfinite(static_friction) and np.isfinite(kinetic_friction)
            and 0.0 <= kinetic_friction <= static_friction):
        raise TetRigInputError(f"Collision friction must be 0 or more, static at least sliding; got "
                               f"{static_friction} static, {kinetic_friction} sliding.")

    corners = verts[tris]
    cross = np.cross(corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0])
    cross_length = np.linalg.norm(cross, axis=1)
    edge_sq = np.stack([squared_norm(corners[:, (i + 1) % 3] - corners[:, i]) for i in range(3)], axis=1)
    keep = cross_length > DEGENERATE_TRIANGLE_RELATIVE * edge_sq.max(axis=1)
    if not np.any(keep):
        raise TetRigInputError("The collision mesh has no triangle with an area (all are degenerate).")
    tris, corners = tris[keep], corners[keep]
    face_normals = cross[keep] / cross_length[keep, None]

    used = verts[np.unique(tris)]
    bounds_min, bounds_max = used.min(axis=0), used.max(axis=0)
    diagonal = float(np.linalg.norm(bounds_max - bounds_min))
    centers, reaches = _enclosing_balls(corners)
    ab, ac = corners[:, 1] - corners[:, 0], corners[:, 2] - corners[:, 0]
    bc = ac - ab
    products = [squared_norm(ab), np.einsum("ij,ij->i", ab, ac), squared_norm(ac), squared_norm(bc),
                cross_length[keep] ** 2]
    table = np.concatenate([corners[:, 0].T, ab.T, ac.T, bc.T, face_normals.T, np.stack(products)])

    feature_normals = _feature_normals(tris, corners, face_normals, verts.shape[0])
    for arr in (verts, tris, corners, table, feature_normals, bounds_min, bounds_max):
        arr.setflags(write=False)
    return Collider(vertices=verts, triangles=tris, thickness_outer=float(thickness_outer),
                    thickness_inner=float(thickness_inner), static_friction=float(static_friction),
                    kinetic_friction=float(kinetic_friction),
                    closed=is_closed(tris, verts.shape[0]), corners=corners,
                    triangle_table=np.ascontiguousarray(table), feature_normals=feature_normals,
                    center_tree=cKDTree(centers), max_reach=float(reaches.max()),
                    size_classes=_size_classes(centers, reaches),
                    bounds_min=bounds_min, bounds_max=bounds_max,
                    surface_tolerance=SURFACE_TOLERANCE_RELATIVE * diagonal)


def squared_norm(v: np.ndarray) -> np.ndarray:
    """|v|² over the last axis: float64 [...]."""
    return np.einsum("...i,...i->...", v, v)


def _validated_triangles(triangles: np.ndarray, vertex_count: int) -> np.ndarray:
    """int32 [triangle_count, 3] copy of ``triangles``; raises TetRigInputError if unusable."""
    raw = np.asarray(triangles)
    if raw.ndim != 2 or raw.shape[1] != 3 or raw.shape[0] == 0:
        raise TetRigInputError("The collision mesh has no triangles.")
    if raw.dtype.kind not in "iu":
        if raw.dtype.kind != "f" or not np.all(np.isfinite(raw)) or np.any(raw != np.round(raw)):
            raise TetRigInputError("The collision mesh's triangles must be integer vertex indices.")
    if raw.min() < 0 or raw.max() >= vertex_count:
        raise TetRigInputError(
            f"The collision mesh has a triangle index out of range (indices must be 0 to "
            f"{vertex_count - 1}, found {int(raw.min())} to {int(raw.max())}).")
    return raw.astype(np.int32)


def _edge_keys(tris: np.ndarray, vertex_count: int) -> tuple[np.ndarray, np.ndarray]:
    """int64 [triangle_count * 3] keys of the edges AB, BC, CA of every triangle, in that order:
    (directed: from·V + to, undirected: min·V + max)."""
    start = tris.astype(np.int64).reshape(-1)
    end = tris[:, [1, 2, 0]].astype(np.int64).reshape(-1)
    return start * vertex_count + end, np.minimum(start, end) * vertex_count + np.maximum(start, end)


def is_closed(tris: np.ndarray, vertex_count: int) -> bool:
    """Whether every edge of ``tris`` (int [T, 3]) is in exactly two triangles, traversed once each
    way (watertight, consistently oriented)."""
    directed, undirected = _edge_keys(tris, vertex_count)
    _, counts = np.unique(undirected, return_counts=True)
    return bool(np.all(counts == 2) and np.unique(directed).size == directed.size)


def _feature_normals(tris: np.ndarray, corners: np.ndarray, face_normals: np.ndarray,
                     vertex_count: int) -> np.ndarray:
    """float64 [triangle_count, FEATURE_COUNT, 3]: unit pseudonormals of every triangle's features.

    Vertex: Σ α_i n_i over incident faces, α_i the corner angle (Thürmer & Wüthrich 1998, as used by
    Bærentzen & Aanæs 2005). Edge: the sum of the incident face normals (each weighted π).
    """
    triangle_count = tris.shape[0]
    # Corner angles from atan2(|e1 × e2|, e1 · e2): accurate for angles near 0 and π.
    e1 = corners[:, [1, 2, 0]] - corners
    e2 = corners[:, [2, 0, 1]] - corners
    angles = np.arctan2(np.linalg.norm(np.cross(e1, e2), axis=2), np.einsum("tci,tci->tc", e1, e2))
    weighted = angles[:, :, None] * face_normals[:, None, :]  # [T, 3 corners, 3]
    vertex_sum = np.stack([np.bincount(tris.reshape(-1), weighted[:, :, i].reshape(-1),
                                       minlength=vertex_count) for i in range(3)], axis=1)
    vertex_normals = vertex_sum[tris]  # [T, 3 corners, 3]

    _, undirected = _edge_keys(tris, vertex_count)
    _, edge_of = np.unique(undirected, return_inverse=True)
    repeated = np.repeat(face_normals, 3, axis=0)  # one row per (triangle, edge)
    edge_sum = np.stack([np.bincount(edge_of, repeated[:, i]) for i in range(3)], axis=1)
    edge_normals = edge_sum[edge_of].reshape(triangle_count, 3, 3)  # edges AB, BC, CA

    normals = np.concatenate([face_normals[:, None, :], vertex_normals, edge_normals], axis=1)
    length = np.linalg.norm(normals, axis=2)
    fallback = np.broadcast_to(face_normals[:, None, :], normals.shape)
    with np.errstate(invalid="ignore", divide="ignore"):  # short sums take the face normal
        unit = normals / length[:, :, None]
    return np.where((length > PSEUDONORMAL_MIN_LENGTH)[:, :, None], unit, fallback)


def _enclosing_balls(corners: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest ball enclosing each triangle: (centre float64 [T, 3] [m], radius float64 [T] [m]).

    A right or obtuse triangle's ball is centred on its longest edge; an acute one's is its
    circumscribed ball, centre A + ((|AB|²·AC − |AC|²·AB) × (AB × AC)) / (2·|AB × AC|²)
    (Ericson 2005, §4.3.4). The radius is the largest centre-to-corner distance as computed, so
    every corner, hence the whole triangle, is inside the ball whatever the round-off.
    """
    a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
    ab, ac, bc = b - a, c - a, c - b
    ab_sq, ac_sq, bc_sq = squared_norm(ab), squared_norm(ac), squared_norm(bc)
    normal = np.cross(ab, ac)
    circumcenter = a + np.cross(ab_sq[:, None] * ac - ac_sq[:, None] * ab, normal) / (
        2.0 * squared_norm(normal)[:, None])
    center = circumcenter
    for longest_sq, others_sq, midpoint in ((bc_sq, ab_sq + ac_sq, (b + c) / 2),
                                            (ac_sq, ab_sq + bc_sq, (a + c) / 2),
                                            (ab_sq, ac_sq + bc_sq, (a + b) / 2)):
        center = np.where((longest_sq >= others_sq)[:, None], midpoint, center)
    radius = np.sqrt(squared_norm(corners - center[:, None, :]).max(axis=1))
    return center, radius


def _size_classes(centers: np.ndarray, reaches: np.ndarray) -> tuple[SizeClass, ...]:
    """Triangles grouped so that reaches within a group differ by at most SIZE_CLASS_RATIO."""
    level = np.floor(np.log(reaches.max() / reaches) / np.log(SIZE_CLASS_RATIO)).astype(np.int64)
    classes = []
    for value in np.unique(level):  # a handful of size levels, not triangles
        members = np.flatnonzero(level == value)
        classes.append(SizeClass(triangles=members, tree=cKDTree(centers[members]),
                                 reach=float(reaches[members].max())))
    return tuple(classes)


