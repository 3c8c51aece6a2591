"""What the jiggle operators share: the armature the user means and the bone in question."""

from __future__ import annotations

import bpy

from ..runtime import scene as driver
from ..runtime.jiggle import rig as jiggle_rig
from ..runtime.app import render_guard
from ..tetrig_addon.errors import TetRigInputError


def armature(context: bpy.types.Context) -> bpy.types.Object | None:
    """The active object when it is an armature, else ``None``."""
    obj = context.active_object
    return obj if obj is not None and obj.type == "ARMATURE" else None


def active_bone(context: bpy.types.Context) -> bpy.types.PoseBone | None:
    """The active pose bone of the active armature (Pose Mode), or ``None``."""
    obj = armature(context)
    bone = getattr(context, "active_pose_bone", None)
    if obj is None or bone is None or bone.id_data != obj:
        return None
    return bone


class JiggleRigOperator(bpy.types.Operator):
    """Base of the operators acting on the active armature (not registered itself); ``execute``
    reports why a non-armature or a refused rig cannot be used, and changes nothing."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.active_object is None:
            cls.poll_message_set("Select an armature")
            return False
        return True

    def rig_or_report(self, context: bpy.types.Context) -> bpy.types.Object | None:
        """The active armature, or ``None`` after reporting why it cannot be used."""
        obj = context.active_object
        problem = jiggle_rig.rig_problem(obj)
        if problem:
            self.report({"ERROR"}, problem)
            return None
        return obj

    def set_up(self, context: bpy.types.Context, obj: bpy.types.Object) -> int | None:
        """Set the rig up (``jiggle_rig.setup``) and show the current frame; returns the number of
        jiggle bones, or ``None`` after reporting why it was refused."""
        assert context.scene is not None
        try:
            count = jiggle_rig.setup(obj, context.scene)
        except TetRigInputError as exc:
            self.report({"ERROR"}, str(exc))
            return None
        driver.free(obj)
        render_guard.update_all(context.scene, context.evaluated_depsgraph_get())
        return count
