"""Remove the soft body."""

from __future__ import annotations

import bpy

from ..runtime.common import rig
from ._context import OperatorResult, SoftBodyOperator, soft_body


class TETRIG_OT_remove(SoftBodyOperator):
    """Remove the cage, binding, bake and modifier; the mesh is exactly as it was before Build Cage, the settings stay"""

    bl_idname = "tetrig.remove"
    bl_label = "Remove Soft Body"
    bl_options = {"REGISTER", "UNDO"}

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> OperatorResult:
        obj = soft_body(context)
        if obj is None:
            return {"CANCELLED"}
        # A click in the UI asks first (the bake goes with the cage); scripts call execute directly.
        return context.window_manager.invoke_confirm(
            self, event, title=f"Remove the soft body from {obj.name}?",
            message="Deletes its cage, binding and bake. The settings stay for the next Build Cage.",
            confirm_text="Remove", icon="WARNING")

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj = soft_body(context)
        if obj is None:
            return {"CANCELLED"}
        name = obj.name
        rig.remove(obj)
        if context.view_layer.objects.get(name) is not None:
            context.view_layer.objects.active = obj
        self.report({"INFO"}, f"{name}: TetRig removed (settings kept)")
        return {"FINISHED"}
