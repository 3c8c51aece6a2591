"""Bake to Action: key the jiggle into a copy of the armature's action, for exporters."""

from __future__ import annotations

import bpy

from ..runtime.jiggle import bake as jiggle_bake
from ..runtime.app import render_guard
from ._context import OperatorResult
from ._jiggle import JiggleRigOperator


class TETRIG_OT_jiggle_bake_action(JiggleRigOperator):
    """Key every jiggle bone's rotation (and scale with Stretch) on each frame into a copy of the armature's action and turn the live jiggle off, so FBX and glTF exports carry it; Free Bake undoes it"""

    bl_idname = "tetrig.jiggle_bake_action"
    bl_label = "Bake to Action"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene = context.active_object, context.scene
        if obj is None or scene is None:
            return {"CANCELLED"}
        try:
            action, keys, warnings = jiggle_bake.bake_to_action(obj, scene)
        except jiggle_bake.JiggleBakeError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        render_guard.update_all(scene, context.evaluated_depsgraph_get())
        for warning in warnings:
            self.report({"WARNING"}, warning)
        self.report({"INFO"}, f"{obj.name}: {keys} keys in the action {action.name}; live jiggle off")
        return {"FINISHED"}
