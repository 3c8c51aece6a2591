"""Persistent application handlers: update soft bodies on frame change (safely during renders, see
``render_guard``), reset caches on load/undo, announce renders, and the main-thread timer that
serves render threads."""

from __future__ import annotations

import bpy
from bpy.app.handlers import persistent

from .. import scene as driver
from . import cage_overlay
from ..common import edits, scene_inputs, versioning
from . import render_guard


@persistent
def on_frame_change_post(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    if scene_inputs.sampling():  # TetRig itself moves the frame to read another frame's inputs
        return
    render_guard.frame_changed(scene, depsgraph)


@persistent
def on_load_post(*_args: object) -> None:
    # New file: session ids now name other objects. Show the active scene's current frame (other
    # scenes update when their frame changes).
    driver.free()
    render_guard.forget()
    versioning.upgrade(bpy.data.objects)  # a file saved by an older TetRig steps as it did
    cage_overlay.show_old_wires_as_overlays()
    context = bpy.context
    if context.scene is not None:
        render_guard.update_all(context.scene, context.evaluated_depsgraph_get())


@persistent
def on_undo_redo(*_args: object) -> None:
    # Undo may restore an older cage, binding or rig under the same session id.
    driver.free()


@persistent
def on_depsgraph_update_post(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    # Frame changes do not come through here (checked: frame_set sends no depsgraph_update_post),
    # user edits do: an edited mesh's rest digest is made again when next needed (``edits``). A
    # painted Pin or Goal group changes the model: it is built again at the next frame.
    edits.notice(depsgraph)
    if not scene_inputs.sampling() and not render_guard.render_job_running():
        global _object_count
        count = len(bpy.data.objects)
        if count != _object_count or any(isinstance(u.id, bpy.types.Collection) for u in depsgraph.updates):
            _object_count = count  # added, deleted (X unlinks from collections) or linked objects
            versioning.upgrade(bpy.data.objects)  # appended from a file of an older TetRig
            driver.objects_changed(scene)
        driver.show_changed(scene, depsgraph)  # a setting set in the panel or by a script shows at once
    if bpy.context.mode not in _EDIT_MODES:
        return
    edited = {u.id.original for u in depsgraph.updates
              if isinstance(u.id, bpy.types.Mesh) and u.is_updated_geometry}
    for obj, _kind in driver.bodies(scene):
        if obj.type == "MESH" and obj.data in edited:
            driver.free(obj)


# The number of objects in the file at the last depsgraph update (a change: see ``objects_changed``).
_object_count = -1

# Modes in which a depsgraph update of a soft body's mesh is the user editing its weights or
# vertices (painting a Pin or Goal group, edit mode), not TetRig writing its offsets.
_EDIT_MODES = {"PAINT_WEIGHT", "EDIT_MESH"}


@persistent
def on_render_init(scene: bpy.types.Scene, *_args: object) -> None:
    render_guard.render_started(scene)


_HANDLERS = (
    (bpy.app.handlers.frame_change_post, on_frame_change_post),
    (bpy.app.handlers.load_post, on_load_post),
    (bpy.app.handlers.undo_post, on_undo_redo),
    (bpy.app.handlers.redo_post, on_undo_redo),
    (bpy.app.handlers.render_init, on_render_init),
    (bpy.app.handlers.depsgraph_update_post, on_depsgraph_update_post),
)


def register() -> None:
    for handler_list, fn in _HANDLERS:
        if fn not in handler_list:
            handler_list.append(fn)
    if not bpy.app.timers.is_registered(render_guard.poll_timer):
        bpy.app.timers.register(render_guard.poll_timer, first_interval=render_guard.IDLE_POLL_S,
                                persistent=True)


def unregister() -> None:
    for handler_list, fn in _HANDLERS:
        if fn in handler_list:
            handler_list.remove(fn)
    if bpy.app.timers.is_registered(render_guard.poll_timer):
        bpy.app.timers.unregister(render_guard.poll_timer)
    driver.free()
