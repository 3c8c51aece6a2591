"""Export the per-frame control points as JSON (beside the seed's JSON)."""

from __future__ import annotations

import bpy
from bpy_extras.io_utils import ExportHelper

from ..runtime.cage import animation_export
from ._context import FrameRangeExport


class TETRIG_OT_export_animation_json(FrameRangeExport, ExportHelper):  # type: ignore[misc]
    """Write the control points of every frame as JSON, the companion of the seed's JSON"""

    bl_idname = "tetrig.export_animation_json"
    bl_label = "Export Animation JSON"
    bl_options = {"REGISTER"}

    filename_ext = ".json"
    filter_glob: bpy.props.StringProperty(default="*.json", options={"HIDDEN"})  # type: ignore[valid-type]

    def write(self, obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
              path: str, first: int, last: int) -> str:
        data = animation_export.write_animation_json(obj, scene, depsgraph, path, first, last)
        return (f"Wrote {path}: {data.control_points.shape[1]} control points, "
                f"frames {data.frame_start}–{data.frame_end}")
