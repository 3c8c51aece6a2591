"""Surface soft bodies: the mesh's own vertices are the particles, no cage (seed 004).

``mesh`` turns a polygon mesh into springs, hinges and volume triangles by face corner; ``tearing``
gives every corner its particle for a set of torn edges; ``model`` builds the solver model; ``body``
steps a body frame by frame (plasticity and tearing included) for the Blender layer, and its
``SurfaceSim`` is a body with its settings in the one body lifecycle (``body.Body``).

The Blender layer's calls::

    body = surface.build_body(vertices, corner_vertices, face_sizes, areal_density, pinned=...)
    state = body.rest_state()
    state = body.advance(state, settings, material, frame_dt, goals=..., colliders=...,
                         plastic=..., tear=...)          # once per frame (timeline.FrameCache)
    shown = body.split_mesh(state)                        # positions + corners after tearing
"""

from __future__ import annotations

import numpy as np

from .body import SplitMesh, SurfaceBody, SurfaceSim, SurfaceState
from .mesh import SurfaceMesh, surface_mesh
from .tearing import TearSettings


def build_body(vertices: np.ndarray, corner_vertices: np.ndarray, face_sizes: np.ndarray,
               areal_density: float, pinned: np.ndarray | None = None,
               goal_weights: np.ndarray | None = None, edges: np.ndarray | None = None,
               corner_edges: np.ndarray | None = None, name: str = "The mesh") -> SurfaceBody:
    """A surface body from a polygon mesh (Blender's arrays, world space).

    Args:
        vertices: float [vertex_count, 3] [m], the rest positions in world space.
        corner_vertices: int [corner_count], the vertex of every face corner, face after face
            (``Mesh.loops``' ``vertex_index``).
        face_sizes: int [face_count], each face's corner count (``Mesh.polygons``' ``loop_total``).
        areal_density: mass per area [kg/m²] (density [kg/m³] × thickness [m]), > 0.
        pinned: bool [vertex_count] or ``None``: vertices that follow their goal exactly.
        goal_weights: float [vertex_count] in [0, 1] or ``None`` (``solver.build_model``).
        edges, corner_edges: the mesh's own edges int [edge_count, 2] and the edge of every corner
            int [corner_count] (``Mesh.loops``' ``edge_index``), so torn edges are Blender's;
            ``None``: made here.
        name: the object's name, for messages.

    Returns:
        A ``SurfaceBody``.

    Raises:
        TetRigInputError: no faces, a face with fewer than three corners, loose vertices, or a
            density that is not positive (``mesh.surface_mesh``, ``body.SurfaceBody``).
    """
    mesh = surface_mesh(vertices, corner_vertices, face_sizes, edges, corner_edges, name=name)
    return SurfaceBody(mesh, vertices, areal_density, pinned=pinned, goal_weights=goal_weights, name=name)


__all__ = ["SplitMesh", "SurfaceBody", "SurfaceMesh", "SurfaceSim", "SurfaceState", "TearSettings", "build_body",
           "surface_mesh"]
