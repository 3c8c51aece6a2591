"""Persistent application handlers: step soft bodies on frame change, reset caches on load/undo."""

from __future__ import annotations

import bpy
from bpy.app.handlers import persistent

from . import simulation


@persistent
def on_frame_change_post(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    simulation.update_scene(scene, depsgraph)


@persistent
def on_load_post(*_args: object) -> None:
    # New file: session ids now name other objects. Show the active scene's current frame (other
    # scenes update when their frame changes).
    simulation.free()
    context = bpy.context
    if context.scene is not None:
        simulation.update_scene(context.scene, context.evaluated_depsgraph_get())


@persistent
def on_undo_redo(*_args: object) -> None:
    # Undo may restore an older cage or binding under the same session id.
    simulation.free()


_HANDLERS = (
    (bpy.app.handlers.frame_change_post, on_frame_change_post),
    (bpy.app.handlers.load_post, on_load_post),
    (bpy.app.handlers.undo_post, on_undo_redo),
    (bpy.app.handlers.redo_post, on_undo_redo),
)


def register() -> None:
    for handler_list, fn in _HANDLERS:
        if fn not in handler_list:
            handler_list.append(fn)


def unregister() -> None:
    for handler_list, fn in _HANDLERS:
        if fn in handler_list:
            handler_list.remove(fn)
    simulation.free()
