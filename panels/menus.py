"""The sidebar's menus: material and jiggle presets (Blender's preset menu) and the exports."""

from __future__ import annotations

import bpy

from ..runtime.app import presets


class TETRIG_MT_presets(bpy.types.Menu):
    bl_label = "Material Presets"
    preset_subdir = presets.PRESET_SUBDIR
    preset_operator = "script.execute_preset"
    draw = bpy.types.Menu.draw_preset  # type: ignore[assignment]


class TETRIG_MT_export(bpy.types.Menu):
    bl_label = "Export"

    def draw(self, _context: bpy.types.Context | None) -> None:
        layout = self.layout
        layout.operator("tetrig.export_json", text="Seed JSON (cage and binding)")
        layout.operator("tetrig.export_animation_json", text="Animation JSON (control points per frame)")
        layout.operator("tetrig.export_pc2", text="PC2 Point Cache (vertices per frame)")


class TETRIG_MT_jiggle_presets(bpy.types.Menu):
    bl_label = "Jiggle Presets"
    preset_subdir = presets.JIGGLE_PRESET_SUBDIR
    preset_operator = "script.execute_preset"
    draw = bpy.types.Menu.draw_preset  # type: ignore[assignment]
