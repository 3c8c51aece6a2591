"""What the operators share: finding the soft body the user means, and their base classes."""

from __future__ import annotations

from typing import Literal

import bpy

from ..runtime.cage import animation_export, export
from ..runtime.common import scene_inputs
from ..runtime.common.properties import object_settings, ROLE_CAGE, ROLE_SOURCE
from ..runtime.common.soft_body import StaleBindingError, in_edit_mode
from ..tetrig_addon.errors import TetRigInputError


# What Operator.execute/invoke may return.
OperatorResult = set[Literal["RUNNING_MODAL", "CANCELLED", "FINISHED", "PASS_THROUGH", "INTERFACE"]]


def soft_body(context: bpy.types.Context) -> bpy.types.Object | None:
    """The active object's soft body: the object itself, or the source of an active cage."""
    obj = context.active_object
    if obj is None:
        return None
    if object_settings(obj).role == ROLE_CAGE:
        obj = object_settings(obj).source
    return obj if obj is not None and object_settings(obj).role == ROLE_SOURCE else None


class MeshOperator(bpy.types.Operator):
    """Base of the operators that make a soft body of the active mesh (not registered itself):
    they run on a mesh object in Object Mode that is not a cage."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        if obj is None or obj.type != "MESH" or obj.mode != "OBJECT" or object_settings(obj).role == ROLE_CAGE:
            cls.poll_message_set("Select a mesh object in Object Mode")
            return False
        return True


class SoftBodyOperator(bpy.types.Operator):
    """Base of the operators that act on a soft body (not registered itself): they run when the
    active object is a soft body or its cage."""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = soft_body(context)
        if obj is None:
            cls.poll_message_set("Select a TetRig soft body or its cage")
            return False
        if context.mode == "EDIT_MESH" or in_edit_mode(obj):
            cls.poll_message_set(f"Leave Edit Mode first: {obj.name} is being edited")
            return False
        return True


class FrameRangeExport(SoftBodyOperator):
    """Base of the exports that write every frame of a soft body (not registered itself).

    Subclasses are also ``ExportHelper``s and define ``write``; the frame range, the depsgraph and
    the error reporting are shared here.
    """

    def write(self, obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
              path: str, first: int, last: int) -> str:
        """Write the file; return the report line. Raises OSError, TetRigInputError, ValueError or
        StaleBindingError with the reason."""
        raise NotImplementedError

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene = soft_body(context), context.scene
        if obj is None or scene is None:
            return {"CANCELLED"}
        first, last = animation_export.frame_range(scene, obj)
        path = self.filepath  # type: ignore[attr-defined]
        try:  # the writers check the path before a single frame is simulated
            message = self.write(obj, scene, context.evaluated_depsgraph_get(), path, first, last)
        except (OSError, TetRigInputError, StaleBindingError, ValueError,
                export.ExportError, scene_inputs.InputsUnavailable) as exc:
            self.report({"ERROR"}, f"Export failed: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, message)
        return {"FINISHED"}
