"""What building and removing any soft-body rig share: the check that an object can carry one,
and taking everything TetRig added off an object again (cage object, points object, attributes,
modifier, a Surface body's bake and tear). Operators and the batch script call these; they raise
``TetRigInputError`` with a user-facing message and change nothing when they refuse."""

from __future__ import annotations

import bpy

from ...tetrig_addon.errors import TetRigInputError
from . import bake_store, binding_store, frames, mesh_io, offset_modifier, points_object
from .offset_modifier import TEAR_OFFSET_ATTRIBUTE, TORN_ATTRIBUTE
from .properties import ROLE_CAGE, ROLE_NONE, object_settings
from .soft_body import others_sharing


def check_source(obj: bpy.types.Object | None, instances: int = 1) -> None:
    """Raise ``TetRigInputError`` unless ``obj`` can carry a cage. ``instances``: how many objects
    may share its mesh (the instances of a bound soft body, Alt+D, which a Build Cage rebuilds
    together: ``cage/instances``)."""
    if obj is None:
        raise TetRigInputError("Select a mesh object first.")
    if obj.type != "MESH":
        raise TetRigInputError(f"{obj.name} is not a mesh.")
    if object_settings(obj).role == ROLE_CAGE:
        raise TetRigInputError(f"{obj.name} is a TetRig cage; select the mesh it drives.")
    if obj.mode != "OBJECT":
        raise TetRigInputError("Leave Edit Mode first: Build Cage works on the saved mesh.")
    mesh = mesh_io.mesh_of(obj)
    sharing = mesh.users - int(mesh.use_fake_user)
    if sharing > max(instances, 1):
        # the binding lives on the mesh: a second object would overwrite or follow it
        raise TetRigInputError(
            f"{obj.name}'s mesh is shared by {sharing} objects; make it single-user first "
            "(Object > Relations > Make Single User > Object & Data).")


def remove(obj: bpy.types.Object) -> None:
    """Remove everything TetRig added to ``obj``: cage object, attributes, modifier. The mesh's own
    data was never written, so it is back to exactly what it was. The settings (resolution,
    material, steps per second, ...) stay on the object, so the next Build Cage uses them."""
    settings = object_settings(obj)
    cage = settings.cage
    # A duplicate of a soft body points at the original's cage: never delete a cage owned by
    # another object (it would take that object's bake with it).
    if cage is not None and object_settings(cage).source == obj:
        mesh = mesh_io.mesh_of(cage)
        bpy.data.objects.remove(cage, do_unlink=True)
        if mesh is not None and mesh.users == 0:
            bpy.data.meshes.remove(mesh)
    # the other instances of a shared mesh (Alt+D) keep the binding and the points object
    shared = bool(others_sharing(obj))
    points = settings.points
    if points is not None and object_settings(points).source == obj and not shared:
        points_object.remove(points)
    settings.points = None
    offsets = settings.offsets
    if offsets is not None and object_settings(offsets).source == obj:
        points_object.remove(offsets)
    settings.offsets = None
    if settings.surface_bound:  # a Surface body's bake and tear live on the object itself
        bake_store.clear(obj)
        mesh = mesh_io.mesh_of(obj)
        if not mesh.is_editmode:  # as the frame handler's tear display (its attributes go)
            for name in (TORN_ATTRIBUTE, TEAR_OFFSET_ATTRIBUTE):
                mesh_io.remove_attribute(mesh, name)
            mesh.update()
    settings.surface_bound = False
    offset_modifier.remove(obj)
    if not shared:
        binding_store.clear(mesh_io.mesh_of(obj))
    frames.free(obj)
    settings.cage = None
    settings.role = ROLE_NONE
    settings.bind_id = ""
    settings.bound_vertex_count = 0
    settings.outside_count = 0
    settings.rest_fingerprint = ""
    settings.cage_note = ""
