"""Export a PC2 point cache of the soft body's vertices."""

from __future__ import annotations

import bpy
from bpy_extras.io_utils import ExportHelper

from ..tetrig_addon.errors import TetRigInputError
from ..runtime import animation_export, simulation
from ._context import OperatorResult, SoftBodyOperator, soft_body


class TETRIG_OT_export_pc2(SoftBodyOperator, ExportHelper):  # type: ignore[misc]
    """Write the vertex positions of every frame as a PC2 point cache, for the Mesh Cache modifier and other programs"""

    bl_idname = "tetrig.export_pc2"
    bl_label = "Export PC2 Point Cache"
    bl_options = {"REGISTER"}

    filename_ext = ".pc2"
    filter_glob: bpy.props.StringProperty(default="*.pc2", options={"HIDDEN"})  # type: ignore[valid-type]

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene = soft_body(context), context.scene
        if obj is None or scene is None:
            return {"CANCELLED"}
        first, last = animation_export.frame_range(scene, obj)
        path = self.filepath  # type: ignore[attr-defined]
        try:
            count = animation_export.write_pc2(obj, scene, context.evaluated_depsgraph_get(),
                                               path, first, last)
        except (OSError, TetRigInputError, simulation.StaleBindingError, ValueError) as exc:
            self.report({"ERROR"}, f"Export failed: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Wrote {path}: {count} vertices, frames {first}–{last} "
                              f"(Mesh Cache modifier: format PC2, Frame Start {first})")
        return {"FINISHED"}
