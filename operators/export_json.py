"""Export the seed's JSON."""

from __future__ import annotations

import bpy
from bpy_extras.io_utils import ExportHelper

from ..runtime.cage import export
from ._context import OperatorResult, SoftBodyOperator, soft_body


class TETRIG_OT_export_json(SoftBodyOperator, ExportHelper):  # type: ignore[misc]
    """Write the cage and binding in the seed's JSON format (bones_rest, tets, vertex_bones, weights)"""

    bl_idname = "tetrig.export_json"
    bl_label = "Export JSON"
    bl_options = {"REGISTER"}

    filename_ext = ".json"
    filter_glob: bpy.props.StringProperty(default="*.json", options={"HIDDEN"})  # type: ignore[valid-type]

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        obj = soft_body(context)
        if obj is None:
            return {"CANCELLED"}
        try:
            data = export.write_seed_json(obj, self.filepath)  # type: ignore[attr-defined]
        except (OSError, export.ExportError) as exc:
            self.report({"ERROR"}, f"Export failed: {exc}")
            return {"CANCELLED"}
        path = self.filepath  # type: ignore[attr-defined]
        self.report({"INFO"}, f"Wrote {path}: {data.bones_rest.shape[0]} control points, "
                              f"{data.tets.shape[0]} tets, {data.weights.shape[0]} vertices")
        return {"FINISHED"}
