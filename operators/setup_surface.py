"""Set Up Surface Body."""

from __future__ import annotations

import bpy

from ..runtime import scene as driver
from ..runtime.surface import setup as rig
from ..tetrig_addon.errors import TetRigInputError
from ._context import MeshOperator, OperatorResult


class TETRIG_OT_setup_surface(MeshOperator):
    """Make the active mesh a Surface soft body: its own vertices are the particles, with springs on its edges, across its faces and hinges (replaces a cage)"""

    bl_idname = "tetrig.setup_surface"
    bl_label = "Set Up Surface Body"
    bl_options = {"REGISTER", "UNDO"}

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene = context.active_object, context.scene
        if obj is None or scene is None:
            return {"CANCELLED"}
        try:
            report = rig.setup_surface(obj)
        except TetRigInputError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        driver.update(scene, context.evaluated_depsgraph_get())
        self.report({"INFO"}, report.message(obj.name))
        return {"FINISHED"}
