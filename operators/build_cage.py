"""Build Cage & Bind."""

from __future__ import annotations

import bpy

from ..tetrig_addon.errors import TetRigInputError
from ..runtime.properties import object_settings
from ..runtime import rig, simulation
from ._context import OperatorResult


class TETRIG_OT_build_cage(bpy.types.Operator):
    """Build a tetrahedral cage around the active mesh and bind its vertices to it"""

    bl_idname = "tetrig.build_cage"
    bl_label = "Build Cage & Bind"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or obj.type != "MESH" or obj.mode != "OBJECT" or object_settings(obj).role == "CAGE":
            cls.poll_message_set("Select a mesh object in Object Mode")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene, collection = context.active_object, context.scene, context.collection
        if obj is None or scene is None or collection is None:
            return {"CANCELLED"}
        try:
            report = rig.build(obj, collection)
        except TetRigInputError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        simulation.update_scene(scene, context.evaluated_depsgraph_get())
        self.report({"INFO"}, report.message(obj.name))
        return {"FINISHED"}
