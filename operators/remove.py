"""Remove the soft body."""

from __future__ import annotations

import bpy

from ..runtime import rig
from ._context import OperatorResult, SoftBodyOperator, soft_body


class TETRIG_OT_remove(SoftBodyOperator):
    """Remove the cage, binding and modifier; the mesh is exactly as it was before Build Cage"""

    bl_idname = "tetrig.remove"
    bl_label = "Remove Soft Body"
    bl_options = {"REGISTER", "UNDO"}

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
