"""Export a PC2 point cache of the soft body's vertices."""

from __future__ import annotations

import bpy
from bpy_extras.io_utils import ExportHelper

from ..runtime.cage import animation_export
from ._context import FrameRangeExport


class TETRIG_OT_export_pc2(FrameRangeExport, ExportHelper):  # type: ignore[misc]
    """Write the vertex positions of every frame as a PC2 point cache, for the Mesh Cache modifier and other programs"""

    bl_idname = "tetrig.export_pc2"
    bl_label = "Export PC2 Point Cache"
    bl_options = {"REGISTER"}

    filename_ext = ".pc2"
    filter_glob: bpy.props.StringProperty(default="*.pc2", options={"HIDDEN"})  # type: ignore[valid-type]

    def write(self, obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
              path: str, first: int, last: int) -> str:
        count = animation_export.write_pc2(obj, scene, depsgraph, path, first, last)
        return (f"Wrote {path}: {count} vertices, frames {first}–{last} "
                f"(Mesh Cache modifier: format PC2, Frame Start {first})")
