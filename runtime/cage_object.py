"""The cage as a mesh object: vertices are the control points, faces are the tets, edges the springs.

Each tet is stored as one four-corner face whose corners are the tet's control points in
positive orientation, so ``tets`` is exactly the face-corner list, saved with the .blend. The two
tet edges a quad face does not have (its diagonals) are added as loose edges, so the mesh's edges
are exactly the unique tet edges. The object displays as wire and never renders.

Display: the cage is hidden when built (``Object.hide_viewport``; the panel's Show Cage toggles it).
Shown, it is a thin wire drawn behind the mesh's surface (In Front off), so the edges inside the
mesh never cover it and the mesh stays readable. Blender draws an unselected wire in the theme's
Wire colour (black in the default theme); the object's colour, a light blue, is used when the
viewport's Wireframe Color is set to Object.
"""

from __future__ import annotations

import bpy
import numpy as np

from ..tetrig_addon.cage import Cage, unique_edges
from . import mesh_io

CAGE_SUFFIX = "_TetRigCage"
# Object colour of the cage: shown by viewports whose Wireframe Color is Object.
CAGE_COLOR = (0.55, 0.8, 1.0, 1.0)


def _diagonal_edges(tets: np.ndarray) -> list[tuple[int, int]]:
    """Tet edges not on the tet's own quad face (a-b-c-d-a): (a, c) and (b, d), deduplicated."""
    ring = np.concatenate([tets[:, [0, 1]], tets[:, [1, 2]], tets[:, [2, 3]], tets[:, [3, 0]]])
    ring_set = set(map(tuple, np.sort(ring, axis=1).tolist()))
    return [e for e in map(tuple, unique_edges(tets).tolist()) if e not in ring_set]


def create(source: bpy.types.Object, cage: Cage, collection: bpy.types.Collection,
           visible: bool = False) -> bpy.types.Object:
    """Make the cage object for ``source``, parented to it with an identity parent inverse so its
    local space is the source's object space; hidden in viewports unless ``visible``."""
    name = source.name + CAGE_SUFFIX
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(cage.control_points.tolist(), _diagonal_edges(cage.tets), cage.tets.tolist())
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    obj.display_type = "WIRE"
    obj.show_in_front = False
    obj.color = CAGE_COLOR  # type: ignore[assignment]  # (a 4-float array)
    obj.hide_viewport = not visible
    obj.hide_render = True
    obj.parent = source
    obj.matrix_parent_inverse.identity()
    collection.objects.link(obj)
    return obj


def is_shown(cage_obj: bpy.types.Object) -> bool:
    """Whether viewports draw the cage (its Disable in Viewports is off)."""
    return not cage_obj.hide_viewport


def show(cage_obj: bpy.types.Object, visible: bool) -> None:
    """Show or hide the cage in every viewport; also reveals a cage hidden with H in this view layer.
    A shown cage is drawn behind the mesh surface (cages built before TetRig hid them were In Front)."""
    cage_obj.hide_viewport = not visible
    if visible:
        cage_obj.show_in_front = False
    view_layer = bpy.context.view_layer
    if visible and view_layer is not None and view_layer.objects.get(cage_obj.name) is not None:
        cage_obj.hide_set(False, view_layer=view_layer)


def read(cage_obj: bpy.types.Object) -> tuple[np.ndarray, np.ndarray] | None:
    """(control points float64 [Q, 3] object space, tets int32 [M, 4]) or ``None`` when the cage
    mesh was edited into something that is no longer a tet mesh."""
    mesh = mesh_io.mesh_of(cage_obj)
    totals = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", totals)
    if totals.size == 0 or np.any(totals != 4):
        return None
    return mesh_io.vertex_positions(mesh), mesh_io.polygon_corners(mesh).reshape(-1, 4)


def remove(cage_obj: bpy.types.Object) -> None:
    """Delete the cage object and its mesh."""
    mesh = mesh_io.mesh_of(cage_obj)
    bpy.data.objects.remove(cage_obj, do_unlink=True)
    if mesh is not None and mesh.users == 0:
        bpy.data.meshes.remove(mesh)
