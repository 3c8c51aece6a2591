"""Critical: set a bone's damping to 2√k (no overshoot)."""

from __future__ import annotations

import bpy

from ..runtime.jiggle.properties import bone_settings
from ..tetrig_addon.jiggle import critical_damping
from ._context import OperatorResult
from ._jiggle import active_bone


class TETRIG_OT_jiggle_critical_damping(bpy.types.Operator):
    """Set the damping of the active (and selected) jiggle bones to 2√k: they return to the animation without overshoot"""

    bl_idname = "tetrig.jiggle_critical_damping"
    bl_label = "Critical"
    bl_options = {"REGISTER", "UNDO"}

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if active_bone(context) is None:
            cls.poll_message_set("Select a bone of an armature in Pose Mode")
            return False
        return True

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        active = active_bone(context)
        if active is None:
            return {"CANCELLED"}
        bones = {pb.name: pb for pb in (getattr(context, "selected_pose_bones", None) or [])
                 if pb.id_data == active.id_data}
        bones[active.name] = active
        for pb in bones.values():
            s = bone_settings(pb)
            s.damping = critical_damping(s.stiffness)
        self.report({"INFO"}, f"Damping {bone_settings(active).damping:.3g} /s (critical) on {len(bones)} bones")
        return {"FINISHED"}
