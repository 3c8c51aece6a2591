"""Free Bake: back to live simulation."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty

from ..runtime import bake
from ..runtime import scene as driver
from ._context import OperatorResult, soft_body


class TETRIG_OT_free_bake(bpy.types.Operator):
    """Delete the bake: frames are simulated live again"""

    bl_idname = "tetrig.free_bake"
    bl_label = "Free Bake"
    bl_options = {"REGISTER", "UNDO"}

    all_soft_bodies: BoolProperty(  # type: ignore[valid-type]
        name="All Soft Bodies", default=False, options={"SKIP_SAVE"},
        description="Free the bakes of every soft body of the scene, not only the active one")

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.scene is None or not bake.baked_soft_bodies(context.scene):
            cls.poll_message_set("No soft body of the scene is baked")
            return False
        if context.mode == "EDIT_MESH":
            cls.poll_message_set("Leave Edit Mode first")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene = soft_body(context), context.scene
        if scene is None:
            return {"CANCELLED"}
        objects = bake.baked_soft_bodies(scene) if self.all_soft_bodies else ([obj] if obj else [])
        freed = [o.name for o in objects if bake.free(o)]
        if not freed:
            self.report({"WARNING"}, "Nothing to free: no bake")
            return {"CANCELLED"}
        driver.update(scene, context.evaluated_depsgraph_get())
        self.report({"INFO"}, f"Freed the bake of {', '.join(freed)}: frames are simulated live")
        return {"FINISHED"}
