"""The points object: one vertex per vertex of TetRig's input, when the modifiers before TetRig
make vertices the mesh does not have (Mirror, Array: ``stack``). It holds their binding and
offsets (the attributes ``binding_store`` names), which the node group reads by index. Hidden,
never rendered, and not a child of anything: the node group reads it in its own space.

An offsets object is the same kind of point mesh holding only the offsets one soft body shows,
when its mesh (and so the binding) is shared with other soft bodies (Alt+D, ``cage/instances``)."""

from __future__ import annotations

import bpy
import numpy as np

from . import mesh_io
from .binding_store import OFFSET_ATTRIBUTE
from .properties import ROLE_OFFSETS, ROLE_POINTS, object_settings

# The mesh vertex each input vertex comes from (its vertex group weights), −1 for none.
SOURCE_ATTRIBUTE = "tetrig_source_index"

POINTS_SUFFIX = "_TetRigPoints"
OFFSETS_SUFFIX = "_TetRigOffsets"


def create(source: bpy.types.Object, positions: np.ndarray, source_index: np.ndarray,
           collection: bpy.types.Collection) -> bpy.types.Object:
    """A hidden point mesh at ``positions`` float [n, 3] (the input at binding, object space),
    with ``source_index`` int [n] (the mesh vertex each comes from, −1 for none: its Pin and Goal
    group weights) as the attribute ``SOURCE_ATTRIBUTE``."""
    name = source.name + POINTS_SUFFIX
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(positions.shape[0])
    mesh.vertices.foreach_set("co", np.ascontiguousarray(positions, dtype=np.float32).ravel())
    mesh_io.write_attribute(mesh, SOURCE_ATTRIBUTE, "INT", source_index)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    obj.hide_viewport = True
    obj.hide_render = True
    obj.hide_select = True
    collection.objects.link(obj)
    settings = object_settings(obj)
    settings.role = ROLE_POINTS
    settings.source = source
    return obj


def create_offsets(source: bpy.types.Object, count: int, collection: bpy.types.Collection) -> bpy.types.Object:
    """A hidden point mesh of ``count`` vertices (their positions unused) holding the offsets
    ``source`` shows, zero to start with (``binding_store.shown_holder``)."""
    name = source.name + OFFSETS_SUFFIX
    mesh = bpy.data.meshes.new(name)
    mesh.vertices.add(count)
    mesh_io.write_attribute(mesh, OFFSET_ATTRIBUTE, "FLOAT_VECTOR", np.zeros((count, 3)))
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    obj.hide_viewport = True
    obj.hide_render = True
    obj.hide_select = True
    obj.parent = source  # listed under its soft body (the node group reads it by index, in no space)
    collection.objects.link(obj)
    settings = object_settings(obj)
    settings.role = ROLE_OFFSETS
    settings.source = source
    return obj


def remove(points: bpy.types.Object) -> None:
    """Delete the points object and its mesh."""
    mesh = points.data
    bpy.data.objects.remove(points, do_unlink=True)
    if isinstance(mesh, bpy.types.Mesh) and mesh.users == 0:
        bpy.data.meshes.remove(mesh)


def source_index(points: bpy.types.Object) -> np.ndarray | None:
    """The ``source_index`` given to ``create``, int32 [n], or ``None`` when it is gone."""
    return mesh_io.read_attribute(mesh_io.mesh_of(points), SOURCE_ATTRIBUTE, np.int32)
