"""The material presets menu (Blender's preset menu)."""

from __future__ import annotations

import bpy

from ..runtime import presets


class TETRIG_MT_presets(bpy.types.Menu):
    bl_label = "Material Presets"
    preset_subdir = presets.PRESET_SUBDIR
    preset_operator = "script.execute_preset"
    preset_add_operator = "tetrig.preset_add"
    draw = bpy.types.Menu.draw_preset  # type: ignore[assignment]
