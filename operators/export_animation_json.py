"""Export the per-frame control points as JSON (beside the seed's JSON)."""

from __future__ import annotations

import bpy
from bpy_extras.io_utils import ExportHelper

from ..tetrig_addon.errors import TetRigInputError
from ..runtime import animation_export, simulation
from ._context import OperatorResult, SoftBodyOperator, soft_body


class TETRIG_OT_export_animation_json(SoftBodyOperator, ExportHelper):  # type: ignore[misc]
    """Write the control points of every frame as JSON, the companion of the seed's JSON"""

    bl_idname = "tetrig.export_animation_json"
    bl_label = "Export Animation JSON"
    bl_options = {"REGISTER"}

    filename_ext = ".json"
    filter_glob: bpy.props.StringProperty(default="*.json", options={"HIDDEN"})  # type: ignore[valid-type]

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj, scene = soft_body(context), context.scene
        if obj is None or scene is None:
            return {"CANCELLED"}
        first, last = animation_export.frame_range(scene, obj)
        path = self.filepath  # type: ignore[attr-defined]
        try:
            data = animation_export.write_animation_json(
                obj, scene, context.evaluated_depsgraph_get(), path, first, last)
        except (OSError, TetRigInputError, simulation.StaleBindingError, ValueError) as exc:
            self.report({"ERROR"}, f"Export failed: {exc}")
            return {"CANCELLED"}
        self.report({"INFO"}, f"Wrote {path}: {data.control_points.shape[1]} control points, "
                              f"frames {data.frame_start}–{data.frame_end}")
        return {"FINISHED"}
