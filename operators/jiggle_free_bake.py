"""Free Jiggle Bake: back to live jiggle (and the original action after Bake to Action)."""

from __future__ import annotations

import bpy

from ..runtime.jiggle import bake as jiggle_bake, rig as jiggle_rig
from ..runtime.app import render_guard
from ._context import OperatorResult
from ._jiggle import JiggleRigOperator


class TETRIG_OT_jiggle_free_bake(JiggleRigOperator):
    """Delete the armature's jiggle bake and undo Bake to Action (the original action comes back): the jiggle is simulated live again"""

    bl_idname = "tetrig.jiggle_free_bake"
    bl_label = "Free Bake"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj = context.active_object
        problem = jiggle_rig.rig_problem(obj)
        if problem or obj is None or context.scene is None:
            self.report({"ERROR"}, problem or "No scene")
            return {"CANCELLED"}
        if not jiggle_bake.free(obj):
            self.report({"WARNING"}, f"{obj.name}: nothing to free, no jiggle bake")
            return {"CANCELLED"}
        render_guard.update_all(context.scene, context.evaluated_depsgraph_get())
        self.report({"INFO"}, f"{obj.name}: jiggle bake freed, simulated live")
        return {"FINISHED"}
