"""The cage as a mesh object: vertices are the control points, faces are the tets, edges the springs.

Each tet is stored as one four-corner face whose corners are the tet's control points in
positive orientation, so ``tets`` is exactly the face-corner list, saved with the .blend. The two
tet edges a quad face does not have (its diagonals) are added as loose edges, so the mesh's edges
are exactly the unique tet edges. The object never renders.

Display: the cage object itself is always hidden in the viewports (``Object.hide_viewport``):
Blender would draw its wire in the theme's Wire colour, black by default, a dense tangle that
hides the mesh. The panel's Show Cage sets a flag saved on the cage object (``cage_shown`` of its
TetRig settings) instead, and ``cage_overlay`` draws the cage's edges over the viewport as thin,
see-through light-blue lines at the simulated positions.
"""

from __future__ import annotations


import bpy
import numpy as np

from ...tetrig_addon.cage import Cage
from ...tetrig_addon.geometry import unique_edges
from ..common import mesh_io
from ..common.properties import show_cage

CAGE_SUFFIX = "_TetRigCage"
# Colour of the cage: the overlay's lines (``cage_overlay``), and the object's colour for anyone who
# unhides the object itself with Wireframe Color set to Object.
CAGE_COLOR = (0.55, 0.8, 1.0, 1.0)


def _diagonal_edges(tets: np.ndarray) -> list[tuple[int, int]]:
    """Tet edges not on the tet's own quad face (a-b-c-d-a): (a, c) and (b, d), deduplicated."""
    ring = np.sort(np.concatenate([tets[:, [0, 1]], tets[:, [1, 2]], tets[:, [2, 3]], tets[:, [3, 0]]]),
                   axis=1).astype(np.int64)
    edges = unique_edges(tets)
    n = int(edges.max()) + 1 if edges.shape[0] else 1
    diagonal = ~np.isin(edges[:, 0].astype(np.int64) * n + edges[:, 1], ring[:, 0] * n + ring[:, 1])
    return list(map(tuple, edges[diagonal].tolist()))


def create(source: bpy.types.Object, cage: Cage, collection: bpy.types.Collection,
           visible: bool = False) -> bpy.types.Object:
    """Make the cage object for ``source``, parented to it with an identity parent inverse so its
    local space is the source's object space; hidden in viewports, its overlay shown if ``visible``."""
    name = source.name + CAGE_SUFFIX
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(cage.control_points.tolist(), _diagonal_edges(cage.tets), cage.tets.tolist())
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    obj.display_type = "WIRE"
    obj.show_in_front = False
    obj.color = CAGE_COLOR  # type: ignore[assignment]  # (a 4-float array)
    obj.hide_viewport = True
    obj.hide_render = True
    obj.parent = source
    obj.matrix_parent_inverse.identity()
    collection.objects.link(obj)
    show_cage(obj, visible)
    return obj


def world_matrix(cage_obj: bpy.types.Object) -> np.ndarray:
    """The cage's world matrix, float64 [4, 4], from its parent's. A hidden object is left out of the
    viewport's evaluation, so its own ``matrix_world`` is not updated when the soft body moves."""
    parent = np.array(cage_obj.parent.matrix_world) if cage_obj.parent is not None else np.eye(4)
    return parent @ np.array(cage_obj.matrix_parent_inverse) @ np.array(cage_obj.matrix_basis)


def read(cage_obj: bpy.types.Object) -> tuple[np.ndarray, np.ndarray] | None:
    """(control points float64 [Q, 3] object space, tets int32 [M, 4]) or ``None`` when the cage
    mesh was edited into something that is no longer a tet mesh."""
    mesh = mesh_io.mesh_of(cage_obj)
    totals = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", totals)
    if totals.size == 0 or np.any(totals != 4):
        return None
    return mesh_io.vertex_positions(mesh), mesh_io.polygon_corners(mesh).reshape(-1, 4)
