"""Add or remove a material preset (Blender's preset operator)."""

from __future__ import annotations

import bpy
from bl_operators.presets import AddPresetBase

from ..runtime.app import presets
from ._context import OperatorResult


class TETRIG_OT_preset_add(AddPresetBase, bpy.types.Operator):  # type: ignore[misc]
    """Add a material preset from the soft body's Stiffness, Volume, Density and Damping, or remove one"""

    bl_idname = "tetrig.preset_add"
    bl_label = "Add Material Preset"
    preset_menu = "TETRIG_MT_presets"
    preset_subdir = presets.PRESET_SUBDIR
    preset_defines = presets.PRESET_DEFINES
    preset_values = presets.PRESET_VALUES

    def execute(self, context: bpy.types.Context) -> OperatorResult:  # type: ignore[override]
        result: OperatorResult = presets.guarded_preset_execute(self, context, "TETRIG_MT_presets")
        return result
