"""Build Cage & Bind."""

from __future__ import annotations

import time

import bpy

from ..tetrig_addon.errors import TetRigInputError
from ..runtime import scene as driver
from ..runtime.cage import build as rig
from ..runtime.common import redraw
from ._context import MeshOperator, OperatorResult

# A build estimated to take longer than this [s] asks first (it blocks Blender while it runs).
CONFIRM_ABOVE_S = 4.0


class TETRIG_OT_build_cage(MeshOperator):
    """Build a tetrahedral cage around the active mesh and bind its vertices to it"""

    bl_idname = "tetrig.build_cage"
    bl_label = "Build Cage & Bind"
    bl_options = {"REGISTER", "UNDO"}

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> OperatorResult:
        obj = context.active_object
        if obj is None:
            return {"CANCELLED"}
        # A click on a cage that takes long asks first, with the estimate; scripts just build.
        guess = rig.estimate(obj)
        if guess.seconds <= CONFIRM_ABOVE_S:
            return self.execute(context)
        return context.window_manager.invoke_confirm(
            self, event, title="Build a large cage?", message=guess.message(),
            confirm_text="Build", icon="WARNING")

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene, collection = context.active_object, context.scene, context.collection
        if obj is None or scene is None or collection is None:
            return {"CANCELLED"}
        guess = rig.estimate(obj)
        t0 = time.perf_counter()
        try:
            report = rig.build(obj, collection)
        except TetRigInputError as exc:
            self.report({"ERROR"}, str(exc))
            return {"CANCELLED"}
        driver.update(scene, context.evaluated_depsgraph_get())
        redraw.sidebars()  # the soft body's subpanels appear: laid out at once, not half drawn
        rig.record_build_time(guess, time.perf_counter() - t0)
        self.report({"INFO"}, report.message(obj.name))
        return {"FINISHED"}
