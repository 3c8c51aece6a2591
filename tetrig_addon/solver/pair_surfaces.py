"""What a body's surface is, for contacts between bodies (``pairs``): its triangles turned to face
out, whether they close, their one-rings (``SurfaceFacts``, kept for the last few surfaces: they do
not change as the body moves), and the two sides of an open one (``two_sided``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import colliders as collision
from ..colliders import nearby


# What the last few surfaces asked about are (``facts``): a body's triangles do not change
# between frames, and telling costs a sort of their edges.
_CACHE_SIZE = 16
_cache: dict[int, tuple[np.ndarray, SurfaceFacts]] = {}


@dataclass(frozen=True, eq=False)
class SurfaceFacts:
    """What a body's surface is, whatever its pose (``facts``).

    Attributes:
        triangles: int64 [T, 3], facing out.
        closed: whether they are closed and consistently oriented (``colliders``' rule).
        rings: each vertex's triangles (``nearby.rings``).
    """

    triangles: np.ndarray
    closed: bool
    rings: tuple[np.ndarray, np.ndarray]


def facts(triangles: np.ndarray, points: np.ndarray) -> SurfaceFacts:
    """The ``SurfaceFacts`` of ``triangles`` on ``points`` (float64 [P, 3] [m]): a surface whose
    triangles enclose a negative volume (an imported mesh with its faces flipped, a mirrored one)
    is turned, so its normals point out as the contacts need."""
    cached = _cache.get(id(triangles))
    if cached is not None and cached[0] is triangles:
        return cached[1]
    tris = np.asarray(triangles, dtype=np.int64)
    corners = points[tris]
    volume = float(np.einsum("ij,ij->", corners[:, 0], np.cross(corners[:, 1], corners[:, 2])))
    if volume < 0.0:
        tris = np.ascontiguousarray(tris[:, [0, 2, 1]])
    found = SurfaceFacts(tris, collision.collider.is_closed(tris, points.shape[0]),
                         nearby.rings(tris, points.shape[0]))
    if len(_cache) >= _CACHE_SIZE:
        _cache.pop(next(iter(_cache)))
    _cache[id(triangles)] = (triangles, found)
    return found


def two_sided(distance: np.ndarray, normal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """An open surface (a Surface body's sheet, an open mesh) has two sides, as cloth does: each
    vertex's outside is the side it is on at the frame's start, its distance |d| and its normal
    turned to it (``nearby.closest``'s signed ``distance`` float64 [k] [m] and ``normal`` float64
    [k, 3]). One-sided, a vertex of another body under a sheet was pulled up through it (measured: a
    sheet dropped on a ball, the ball flew up with it at 2.7 m/s)."""
    side = np.where(distance < 0.0, -1.0, 1.0)
    return distance * side, normal * side[:, None]
