"""Reset to Rest."""

from __future__ import annotations

import bpy

from ..runtime import simulation
from ._context import OperatorResult, soft_body


class TETRIG_OT_reset_to_rest(bpy.types.Operator):
    """Go to the start frame and show the rest shape, dropping every cached frame of this soft body"""

    bl_idname = "tetrig.reset_to_rest"
    bl_label = "Reset to Rest"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if soft_body(context) is None:
            cls.poll_message_set("Select a TetRig soft body or its cage")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj = soft_body(context)
        if obj is None:
            return {"CANCELLED"}
        simulation.free(obj)
        context.scene.frame_set(context.scene.frame_start)
        self.report({"INFO"}, f"{obj.name}: back at rest (frame {context.scene.frame_start})")
        return {"FINISHED"}
