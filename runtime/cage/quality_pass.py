"""The quality pass in Blender (``tetrig_addon.quality``, seed 003): its settings, its plan from the
mesh, and the vertex offsets every path shows.

``vertex_offsets`` is the one place the offsets a frame shows are computed: the frame handler's
write-back (playback, bake playback, renders, and so Blender's Alembic exporter, which reads the
evaluated mesh) and the PC2 exporter call it; the animation JSON carries the pass's settings and
the mesh's edges for its readers (``animation_export``). The pass works on the displacement of a
shown frame, so a bake (which stores control points) plays back through it too, and changing its
settings needs no new bake.

A posed mesh (``stack``: an armature, shape keys or other modifiers before TetRig) is repaired
against its input of that frame: the edges keep the lengths the pose gives them, and only what the
simulation adds is clamped and smoothed. The smoothing's expected Laplacian stays the one of the
binding's rest shape: a pose that moves a part rigidly turns that part's Laplacians and its tets'
displacement gradients alike, so the product is the same (exact for rigid parts, close for the
bends of a joint). An input of new vertices (Mirror, Array before TetRig) is bound on a points
object, which has no edges: the pass leaves it as the blend gives it. Its Numba kernel compiles when a soft body first uses the pass, not
when the add-on starts (the pass is off by default).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import bpy
import numpy as np

from ...tetrig_addon import quality
from ...tetrig_addon.quality import backend as quality_backend
from ..common import binding_store, mesh_io
from ..common.properties import object_settings

@dataclass(frozen=True)
class SurfacePass:
    """The pass's plan for one soft body, built once per model (``model.prepare``).

    Attributes:
        plan: ``quality.QualityPlan`` of the mesh's rest shape (object space), edges, open border
            and fixed vertices.
        laplacian: scipy.sparse float64 [vertex_count, control_point_count],
            ``quality.affine_laplacian_matrix``: the smoothing keeps each tet's own motion.
        edges: int32 [edge_count, 2], the mesh's edges.
        boundary: bool [vertex_count], vertices on an edge of one face.
        fixed: bool [vertex_count], pinned vertices and vertices of goal weight 1.
    """

    plan: quality.QualityPlan
    laplacian: Any
    edges: np.ndarray
    boundary: np.ndarray
    fixed: np.ndarray


def settings(obj: bpy.types.Object) -> quality.QualitySettings | None:
    """The pass's settings of a soft body, or ``None`` when it is off.

    Raises:
        TetRigInputError: a setting out of range (set from Python past the UI's limits).
    """
    s = object_settings(obj)
    if not s.use_quality:
        return None
    return quality.QualitySettings(
        max_stretch=s.quality_max_stretch, max_compression=s.quality_max_compression,
        constraint_iterations=s.quality_clamp_iterations, smoothing_weight=s.quality_smoothing,
        smoothing_iterations=s.quality_smoothing_iterations).validated()


def build(mesh: bpy.types.Mesh, rest_control_points: np.ndarray, indices: np.ndarray,
          fixed: np.ndarray) -> SurfacePass:
    """The pass's plan from the mesh's rest vertices, edges and faces.

    Args:
        rest_control_points: float64 [Q, 3], the cage at rest, object space.
        indices: int [N, 4], each vertex's control points (its tet).
        fixed: bool [N], vertices the pass never moves.
    """
    rest = mesh_io.vertex_positions(mesh)
    edges = mesh_io.edge_vertices(mesh)
    boundary = quality.boundary_vertices(len(rest), mesh_io.polygon_corners(mesh), mesh_io.polygon_sizes(mesh))
    plan = quality.build_plan(rest, edges, boundary, fixed)
    return SurfacePass(plan=plan, laplacian=quality.affine_laplacian_matrix(plan, rest_control_points, indices),
                       edges=edges, boundary=boundary, fixed=np.asarray(fixed, dtype=bool))


class Bound(Protocol):
    """What the pass reads of a cage body's model (``model.Prepared``, which holds the pass's plan)."""

    indices: np.ndarray  # int [N, 4]: each vertex's control points
    rest_local: np.ndarray  # float64 [Q, 3]: the cage at rest, object space
    fixed: np.ndarray | None  # bool [N]: vertices the pass never moves
    blend: Any  # scipy.sparse [N, Q]: offsets = blend @ displacements
    surface: SurfacePass | None  # the plan, once built


def surface(obj: bpy.types.Object, prepared: Bound) -> SurfacePass:
    """The pass's plan of a prepared soft body (from the mesh holding its binding), built at its
    first use and kept with the model."""
    if prepared.surface is None:
        fixed = np.zeros(prepared.indices.shape[0], dtype=bool) if prepared.fixed is None else prepared.fixed
        prepared.surface = build(binding_store.holder(obj), prepared.rest_local, prepared.indices, fixed)
    return prepared.surface


def vertex_offsets(obj: bpy.types.Object, prepared: Bound, displacements: np.ndarray,
                   input_positions: np.ndarray | None = None) -> np.ndarray:
    """The offset of every vertex as TetRig shows it: the seed's blend of the control points'
    displacements, repaired by the quality pass when it is on.

    Args:
        displacements: float64 [Q, 3], control-point displacements in object space, from where
            the control points rest this frame.
        input_positions: float [N, 3], object space: a posed mesh's input this frame (the rest the
            offsets are added to); ``None``: the mesh's rest shape.

    Returns:
        float64 [N, 3], object space (what the ``tetrig_offset`` attribute holds).

    Raises:
        TetRigInputError: a quality setting out of range (``settings``).
    """
    offsets = prepared.blend @ displacements
    chosen = settings(obj)
    if chosen is None:
        return offsets
    # compiled at the first use, in the background (into the solver's Numba cache); the NumPy
    # reference gives the same offsets meanwhile
    quality_backend.warm_up(background=True)
    repair = surface(obj, prepared)
    return quality.improve(repair.plan, offsets, chosen, repair.laplacian @ displacements,
                           rest_positions=input_positions).displacements
