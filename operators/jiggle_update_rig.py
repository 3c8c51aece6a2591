"""Update Jiggle Rig: give every jiggle bone its constraint, last in its stack."""

from __future__ import annotations

import bpy

from ._context import OperatorResult
from ._jiggle import JiggleRigOperator


class TETRIG_OT_jiggle_update_rig(JiggleRigOperator):
    """Give every jiggle bone of the armature its jiggle constraint (last in its stack, after your own constraints and IK) and take it off the others"""

    bl_idname = "tetrig.jiggle_update_rig"
    bl_label = "Update Jiggle Rig"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj = self.rig_or_report(context)
        if obj is None or context.scene is None:
            return {"CANCELLED"}
        count = self.set_up(context, obj)
        if count is None:
            return {"CANCELLED"}
        self.report({"INFO"}, f"{obj.name}: {count} jiggle bones")
        return {"FINISHED"}
