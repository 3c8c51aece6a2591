"""Reset to Rest."""

from __future__ import annotations

import bpy

from ..runtime import scene as driver
from ._context import OperatorResult, SoftBodyOperator, soft_body


class TETRIG_OT_reset_to_rest(SoftBodyOperator):
    """Go to the start frame and show the rest shape, dropping every cached frame of this soft body"""

    bl_idname = "tetrig.reset_to_rest"
    bl_label = "Reset to Rest"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj = soft_body(context)
        if obj is None:
            return {"CANCELLED"}
        driver.free(obj)
        context.scene.frame_set(context.scene.frame_start)
        self.report({"INFO"}, f"{obj.name}: back at rest (frame {context.scene.frame_start})")
        return {"FINISHED"}
