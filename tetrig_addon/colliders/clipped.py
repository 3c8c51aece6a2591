"""A deforming surface as a collider of a few points (``ClippedSurface``): a soft body's shown mesh
at one frame, which jiggle tails stay out of (issue 21).

Building the exact ``Collider`` of a whole surface costs about 0.4 s for the Stanford bunny's
69,451 triangles (k-d trees, pseudonormals, the triangle table), every frame again since the
surface deforms, while a tail asks about a few points. ``around`` builds it from the triangles
near the points only, once per region (``REGION_GROWTH``; a region grows to hold the points of
later calls, as a chain's bones are asked about level by level): a triangle that comes within ``reach``
of a point meets the points' box grown by ``reach``, so all its corners lie within its longest
edge (``edge``, at most) of that box; they and every triangle sharing a corner with them are kept,
so each kept vertex and edge has the pseudonormal of the whole surface and the signed distance
within ``reach`` is exactly the whole surface's (``distance.signed_distance``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import TetRigInputError
from .collider import Collider, mesh_collider

# A region is the points' box grown by this many times the reach asked for, so the points of the
# next steps, which move a little, are still inside it and the collider is not built again.
REGION_GROWTH = 0.5


@dataclass(eq=False)  # eq=False: arrays have no single truth value; compare by identity
class ClippedSurface:
    """One frame of a deforming closed surface, world space.

    Attributes:
        vertices: float64 [vertex_count, 3] [m], read-only.
        triangles: int32 [triangle_count, 3], counterclockwise seen from outside.
        edge: [m] an upper bound of the longest triangle edge.
        thickness_outer: [m] points closer than this outside the surface are pushed out to it.
        bounds_min, bounds_max: float64 [3] [m], the box of the vertices.
        region: float64 [2, 3] [m], the box the last collider was built for (``around``), or ``None``.
        collider: that collider (``None``: no triangle near the region).
    """

    vertices: np.ndarray
    triangles: np.ndarray
    edge: float
    thickness_outer: float
    bounds_min: np.ndarray
    bounds_max: np.ndarray
    region: np.ndarray | None = field(default=None)
    collider: Collider | None = field(default=None)


def clipped_surface(vertices: np.ndarray, triangles: np.ndarray, edge: float,
                    thickness_outer: float = 0.0) -> ClippedSurface:
    """A surface to build colliders from around points (``around``).

    Args:
        vertices: float [vertex_count, 3] [m], world space (kept, not copied: do not modify).
        triangles: int [triangle_count, 3], vertex indices, counterclockwise seen from outside.
        edge: [m] > 0, at least the longest edge of any triangle: a longer one that crosses a
            region with no corner near it is missed.
        thickness_outer: [m], ≥ 0.

    Raises:
        TetRigInputError: vertices not [n, 3] or not finite, triangles not [m, 3] indices into
            them, ``edge`` not above 0 or a thickness below 0.
    """
    verts = np.asarray(vertices, dtype=np.float64)
    tris = np.asarray(triangles)
    if verts.ndim != 2 or verts.shape[1] != 3 or verts.shape[0] == 0 or not np.all(np.isfinite(verts)):
        raise TetRigInputError("A soft body's surface has no vertices, or vertices that are not finite.")
    if (tris.ndim != 2 or tris.shape[1] != 3 or tris.shape[0] == 0 or tris.dtype.kind not in "iu"
            or tris.min() < 0 or tris.max() >= verts.shape[0]):
        raise TetRigInputError("A soft body's surface has no triangles, or triangles that are not its vertices.")
    if not (np.isfinite(edge) and edge > 0.0) or not (np.isfinite(thickness_outer) and thickness_outer >= 0.0):
        raise TetRigInputError(f"A soft body's surface needs an edge length above 0 and a thickness of 0 or "
                               f"more, not {edge} and {thickness_outer}.")
    return ClippedSurface(verts, tris.astype(np.int32, copy=False), float(edge), float(thickness_outer),
                          verts.min(axis=0), verts.max(axis=0))


def around(surface: ClippedSurface, points: np.ndarray, reach: float) -> Collider | None:
    """The exact collider of the surface's triangles within ``reach`` of ``points`` and their
    neighbours (the module docstring), or ``None`` when no triangle is that near. It is kept on
    ``surface`` and returned again while the points' box grown by ``reach`` stays in its region;
    points outside it grow the region to hold both, and the collider is built again.

    Args:
        points: float [point_count, 3] [m], world space.
        reach: [m], ≥ 0: how far from the points the distance must be the whole surface's.
    """
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    lo, hi = pts.min(axis=0) - reach, pts.max(axis=0) + reach
    if np.any(lo > surface.bounds_max + surface.thickness_outer) or np.any(hi < surface.bounds_min
                                                                           - surface.thickness_outer):
        return None
    if surface.region is not None and np.all(lo >= surface.region[0]) and np.all(hi <= surface.region[1]):
        return surface.collider
    grow = REGION_GROWTH * reach
    region = np.stack([lo - grow, hi + grow])
    if surface.region is not None:  # the chain's next bone, or a tail that moved on: both are kept
        region = np.stack([np.minimum(region[0], surface.region[0]), np.maximum(region[1], surface.region[1])])
    surface.region = region
    surface.collider = _build(surface, surface.region[0] - surface.edge, surface.region[1] + surface.edge)
    return surface.collider


def _build(surface: ClippedSurface, lo: np.ndarray, hi: np.ndarray) -> Collider | None:
    """The collider of the triangles with a corner in the box [lo, hi] and of their neighbours."""
    inside = np.all((surface.vertices >= lo) & (surface.vertices <= hi), axis=1)
    tris = surface.triangles
    near = inside[tris].any(axis=1)
    if not np.any(near):
        return None
    corner = np.zeros(surface.vertices.shape[0], dtype=bool)
    corner[tris[near].ravel()] = True
    kept = tris[corner[tris].any(axis=1)]
    used, compact = np.unique(kept, return_inverse=True)
    try:
        return mesh_collider(surface.vertices[used], compact.reshape(-1, 3).astype(np.int32),
                             thickness_outer=surface.thickness_outer, thickness_inner=0.0)
    except TetRigInputError:  # only degenerate triangles there: nothing to collide with
        return None
