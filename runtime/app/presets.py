"""Material and jiggle presets: Blender's preset files (``presets/tetrig/material/*.py`` and
``presets/tetrig/jiggle/*.py`` in this add-on's folder) and where the user's own go.

The shipped presets stay in the add-on's folder, which is registered as a preset search path, so an
update of the extension updates them; the user's presets are written by ``TETRIG_OT_preset_add``
into Blender's user presets folder (``scripts/presets/tetrig/material``), as Blender's own are.
A material preset sets the material settings of the active soft body (or of the soft body of an
active cage); a jiggle preset sets the jiggle settings of the active pose bone.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

import bpy

PRESET_SUBDIR = "tetrig/material"
ADDON_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIPPED_DIR = os.path.join(ADDON_DIR, "presets", *PRESET_SUBDIR.split("/"))

# What a preset file starts with, and the settings it holds (``AddPresetBase`` writes these).
PRESET_DEFINES = [
    "obj = bpy.context.active_object",
    "settings = (obj.tetrig.source if obj.tetrig.role == 'CAGE' else obj).tetrig",
]
PRESET_VALUES = [
    "settings.youngs_modulus",
    "settings.use_volume",
    "settings.volume_stiffness",
    "settings.density",
    "settings.damping",
]

JIGGLE_PRESET_SUBDIR = "tetrig/jiggle"
JIGGLE_SHIPPED_DIR = os.path.join(ADDON_DIR, "presets", *JIGGLE_PRESET_SUBDIR.split("/"))
JIGGLE_PRESET_DEFINES = [
    "settings = bpy.context.active_pose_bone.tetrig_jiggle",
]
JIGGLE_PRESET_VALUES = [
    "settings.stiffness",
    "settings.damping",
    "settings.gravity_scale",
    "settings.max_speed",
    "settings.stretch",
    "settings.angle_limit",
]


def shipped(folder: str = SHIPPED_DIR) -> list[str]:
    """Paths of the presets that ship with TetRig in ``folder`` (material by default), by name."""
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py"))


def is_shipped(path: str) -> bool:
    """Whether ``path`` is one of TetRig's own presets (never removed from the menu)."""
    folder = os.path.normcase(os.path.dirname(os.path.realpath(path)))
    return folder in {os.path.normcase(os.path.realpath(d)) for d in (SHIPPED_DIR, JIGGLE_SHIPPED_DIR)}


def guarded_preset_execute(operator: Any, context: bpy.types.Context, menu: str) -> Any:
    """``AddPresetBase.execute`` that refuses to remove a preset shipped with TetRig (the menu's
    chosen one, ``remove_active``, or one named)."""
    from bl_operators.presets import AddPresetBase
    if operator.remove_active or operator.remove_name:
        name = getattr(bpy.types, menu).bl_label if operator.remove_active else operator.name
        path = bpy.utils.preset_find(name, operator.preset_subdir, ext=".py") or bpy.utils.preset_find(
            name, operator.preset_subdir, display_name=True, ext=".py")
        if path and is_shipped(path):
            operator.report({"WARNING"}, f"{name} ships with TetRig and cannot be removed")
            return {"CANCELLED"}
    return AddPresetBase.execute(operator, context)


def register() -> None:
    if hasattr(bpy.utils, "register_preset_path"):
        bpy.utils.register_preset_path(ADDON_DIR)
        return
    # Without preset search paths, copy the presets into the user's presets folder (once; a user's
    # edited copy is kept).
    for subdir, folder in ((PRESET_SUBDIR, SHIPPED_DIR), (JIGGLE_PRESET_SUBDIR, JIGGLE_SHIPPED_DIR)):
        target = bpy.utils.user_resource("SCRIPTS", path=os.path.join("presets", subdir), create=True)
        for path in shipped(folder):
            destination = os.path.join(target, os.path.basename(path))
            if not os.path.exists(destination):
                shutil.copyfile(path, destination)


def unregister() -> None:
    if hasattr(bpy.utils, "unregister_preset_path"):
        bpy.utils.unregister_preset_path(ADDON_DIR)
