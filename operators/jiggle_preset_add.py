"""Add or remove a jiggle preset (Blender's preset operator)."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase

from ..runtime.app import presets
from ._context import OperatorResult


class TETRIG_OT_jiggle_preset_add(AddPresetBase, bpy.types.Operator):  # type: ignore[misc]
    """Add a jiggle preset from the active bone's settings, or remove one"""

    bl_idname = "tetrig.jiggle_preset_add"
    bl_label = "Add Jiggle Preset"
    preset_menu = "TETRIG_MT_jiggle_presets"
    preset_subdir = presets.JIGGLE_PRESET_SUBDIR
    preset_defines = presets.JIGGLE_PRESET_DEFINES
    preset_values = presets.JIGGLE_PRESET_VALUES

    def execute(self, context: bpy.types.Context) -> OperatorResult:  # type: ignore[override]
        result: OperatorResult = presets.guarded_preset_execute(self, context, "TETRIG_MT_jiggle_presets")
        return result
