"""Apply to Chain: the active bone's jiggle settings on every bone below it."""

from __future__ import annotations

import bpy

from ..runtime.jiggle import rig as jiggle_rig
from ._context import OperatorResult
from ._jiggle import JiggleRigOperator, active_bone


class TETRIG_OT_jiggle_apply_chain(JiggleRigOperator):
    """Turn Jiggle on for the active bone and every bone below it, with the active bone's settings"""

    bl_idname = "tetrig.jiggle_apply_chain"
    bl_label = "Apply to Chain"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj = self.rig_or_report(context)
        if obj is None or context.scene is None:
            return {"CANCELLED"}
        root = active_bone(context)
        if root is None:
            self.report({"ERROR"}, f"Select the chain's first bone of {obj.name} in Pose Mode")
            return {"CANCELLED"}
        chain = [root] + list(root.children_recursive)
        short = [pb.name for pb in chain if pb.bone.length < 1e-6]
        if short:
            self.report({"ERROR"}, f"{obj.name}: the bone {short[0]} has zero length; nothing changed")
            return {"CANCELLED"}
        jiggle_rig.apply_to_chain(root)
        if self.set_up(context, obj) is None:
            return {"CANCELLED"}
        self.report({"INFO"}, f"{obj.name}: jiggle on {len(chain)} bones from {root.name}")
        return {"FINISHED"}
