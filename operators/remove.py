"""Remove the soft body."""

from __future__ import annotations

import bpy

from ..runtime import rig
from ._context import OperatorResult, soft_body


class TETRIG_OT_remove(bpy.types.Operator):
    """Remove the cage, binding and modifier; the mesh is exactly as it was before Build Cage"""

    bl_idname = "tetrig.remove"
    bl_label = "Remove Soft Body"
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
        name = obj.name
        rig.remove(obj)
        if context.view_layer.objects.get(name) is not None:
            context.view_layer.objects.active = obj
        self.report({"INFO"}, f"{name}: TetRig removed")
        return {"FINISHED"}
