"""Bake Jiggle: simulate the frame range once and keep each bone's jiggle in the .blend."""

from __future__ import annotations

import bpy

from ..runtime.jiggle import bake as jiggle_bake
from ..runtime.app import render_guard
from ._context import OperatorResult
from ._jiggle import JiggleRigOperator


class TETRIG_OT_jiggle_bake(JiggleRigOperator):
    """Simulate the armature's jiggle bones over the frame range once and keep them in the .blend: playback and renders then read the bake"""

    bl_idname = "tetrig.jiggle_bake"
    bl_label = "Bake Jiggle"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene = context.active_object, context.scene
        problem = jiggle_bake.bake_problem(obj)
        if problem or obj is None or scene is None:
            self.report({"ERROR"}, problem or "No scene")
            return {"CANCELLED"}
        wm = context.window_manager
        wm.progress_begin(scene.frame_start, scene.frame_end)
        try:
            result = jiggle_bake.bake(obj, scene, context.evaluated_depsgraph_get(),
                                      progress=lambda _name, f, _last: wm.progress_update(f))
        except jiggle_bake.JiggleBakeError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        render_guard.update_all(scene, context.evaluated_depsgraph_get())
        self.report({"INFO"}, result.message())
        return {"FINISHED"}
