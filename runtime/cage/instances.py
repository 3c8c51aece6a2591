"""Linked duplicates (Alt+D) of a cage soft body: instances of one soft body, each simulated from
where it stands, baked and rendered on its own; and tidying up what a deleted soft body leaves.

An Alt+D copy shares its original's mesh, and so the binding stored on it (``binding_store``) and,
through the copied settings, its cage and points object. Modifiers and settings are per object, so
each instance gets what holds its own motion, as objects of its own:

- its cage (``cage_object``): a copy of the original's (the same control points and tets; none of
  its bake), parented to it: its frames are drawn and baked there;
- its offsets object (``points_object.create_offsets``): one offset per input vertex, which its
  TetRig modifier reads by index, as it reads a points object's. The mesh's own ``tetrig_offset``
  is shared by every instance, so it stays zero once the mesh has several.

A Shift+D copy has a mesh of its own: it is not an instance, and its panel says to press Build
Cage (its cage pointer is still the original's) as before.

``adopt`` runs from the depsgraph update after Alt+D and from the scene driver's frames (a copy
made by a script, a file saved by an older TetRig); ``rebuilt`` gives every instance the cage a
Build Cage made for one; ``tidy`` removes the cage, offsets and points objects whose soft body was
deleted (X), after Blender's undo step of the delete: Ctrl+Z brings both back.
"""

from __future__ import annotations

from typing import cast

import bpy
import numpy as np

from ..common import bake_store, binding_store, frames, mesh_io, offset_modifier, points_object
from ..common.properties import (ROLE_CAGE, ROLE_OFFSETS, ROLE_POINTS, ROLE_SOURCE, is_surface,
                                 object_settings)
from ..common.soft_body import in_scene
from .cage_object import CAGE_SUFFIX


def _cage_body(obj: bpy.types.Object) -> bool:
    return obj.type == "MESH" and object_settings(obj).role == ROLE_SOURCE and not is_surface(obj)


def instances(obj: bpy.types.Object) -> list[bpy.types.Object]:
    """The cage soft bodies showing the mesh of ``obj`` (``obj`` among them), in ``bpy.data``'s order."""
    mesh = obj.data
    return [o for o in bpy.data.objects if o.data == mesh and _cage_body(o) and in_scene(o)]


def original_of(obj: bpy.types.Object) -> bpy.types.Object | None:
    """The soft body an Alt+D copy ``obj`` shares its mesh and cage with, when it has no cage of
    its own yet; ``None`` otherwise (its own cage, or a Shift+D copy with a mesh of its own)."""
    if not _cage_body(obj):
        return None
    cage = object_settings(obj).cage
    owner = object_settings(cage).source if cage is not None else None
    if owner is None or owner == obj or owner.data != obj.data or object_settings(owner).cage != cage:
        return None
    return owner


def _collection(obj: bpy.types.Object) -> bpy.types.Collection:
    found = obj.users_collection
    return found[0] if found else bpy.context.scene.collection


def _copy_cage(cage: bpy.types.Object, owner: bpy.types.Object) -> bpy.types.Object:
    """A copy of ``cage`` for the instance ``owner``: the same control points and tets, at rest,
    without the bake, parented to ``owner``."""
    copy = cast(bpy.types.Object, cage.copy())
    copy.data = cast(bpy.types.Mesh, cage.data).copy()
    copy.name = copy.data.name = owner.name + CAGE_SUFFIX
    _collection(owner).objects.link(copy)
    copy.parent = owner
    copy.matrix_parent_inverse.identity()
    object_settings(copy).source = owner
    bake_store.clear(copy)
    mesh = mesh_io.mesh_of(copy)
    mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", np.zeros((len(mesh.vertices), 3)))
    return copy


def _give_offsets(group: list[bpy.types.Object]) -> None:
    """Each instance of a shared mesh shows its own offsets object; the shared offsets go to zero."""
    for obj in group:
        s = object_settings(obj)
        offsets = s.offsets
        count = len(binding_store.holder(obj).vertices)
        if offsets is None or object_settings(offsets).source != obj or len(mesh_io.mesh_of(offsets).vertices) != count:
            if offsets is not None and object_settings(offsets).source == obj:
                points_object.remove(offsets)
            s.offsets = points_object.create_offsets(obj, count, _collection(obj))
        offset_modifier.ensure(obj, points=s.offsets)
        obj.update_tag()
    for mesh in {mesh_io.mesh_of(group[0]), binding_store.holder(group[0])}:
        offset = mesh.attributes.get(binding_store.OFFSET_ATTRIBUTE)
        if offset is not None and offset.domain == "POINT":
            mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR",
                                    np.zeros((len(mesh.vertices), 3)))
            mesh.update()


def adopt(obj: bpy.types.Object) -> bool:
    """Make the Alt+D copy ``obj`` an instance of its original (``original_of``): its own cage and,
    for every instance of the mesh, its own offsets object. Returns whether it was a copy to adopt."""
    original = original_of(obj)
    if original is None:
        return False
    object_settings(obj).cage = _copy_cage(object_settings(original).cage, obj)
    _give_offsets(instances(obj))
    frames.free(obj)
    return True


def adopt_all(objects: list[bpy.types.Object]) -> bool:
    """``adopt`` every Alt+D copy among ``objects`` (a scene's soft bodies); returns whether any was."""
    return sum(adopt(obj) for obj in objects) > 0


def rebuilt(obj: bpy.types.Object) -> None:
    """After Build Cage on ``obj``: every other instance of its mesh gets the new binding's settings
    and a copy of the new cage (its own old one goes, and with it its bake, made for the old cage)."""
    group = instances(obj)
    if len(group) < 2:
        return
    source = object_settings(obj)
    for other in group:
        if other == obj:
            continue
        s = object_settings(other)
        old = s.cage
        if old is not None and object_settings(old).source == other:
            _remove(old)
        for name in ("bind_id", "rest_fingerprint", "cage_note", "bound_vertex_count", "outside_count",
                     "points", "body_type"):
            setattr(s, name, getattr(source, name))
        s.has_rest_matrix = False
        s.cage = _copy_cage(source.cage, other)
        frames.free(other)
    _give_offsets(group)


def _remove(obj: bpy.types.Object) -> None:
    """Delete a helper object (cage, offsets, points) and its mesh when nothing else uses it."""
    mesh = obj.data
    bpy.data.objects.remove(obj, do_unlink=True)
    if isinstance(mesh, bpy.types.Mesh) and mesh.users == 0:
        bpy.data.meshes.remove(mesh)


def tidy() -> int:
    """Remove the cages, offsets objects and points objects whose soft body was deleted (it is in
    no collection any more, or no longer points at them), and then the deleted soft body itself
    when nothing refers to it any more (its cage's pointer kept it in ``bpy.data``). Returns how
    many objects were removed."""
    bodies = [o for o in bpy.data.objects if o.type == "MESH" and object_settings(o).role == ROLE_SOURCE
              and in_scene(o)]
    points_used = {object_settings(o).points for o in bodies}
    gone, orphans = [], set()
    for obj in bpy.data.objects:
        role = object_settings(obj).role
        source = object_settings(obj).source
        if role == ROLE_CAGE:
            dead = not in_scene(source) or object_settings(source).cage != obj
        elif role == ROLE_OFFSETS:
            dead = not in_scene(source) or object_settings(source).offsets != obj
        elif role == ROLE_POINTS:
            dead = obj not in points_used
        else:
            continue
        if dead:
            gone.append(obj)
            if source is not None and not in_scene(source):
                orphans.add(source.name)
    for obj in gone:
        _remove(obj)
    removed = len(gone)
    for name in orphans:  # the deleted soft body: X left it in bpy.data only for the cage's pointer
        body = bpy.data.objects.get(name)
        if body is not None and body.users == 0 and not in_scene(body):
            bpy.data.objects.remove(body)
            removed += 1
    return removed
