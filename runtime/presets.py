"""Material presets: Blender's preset files (``presets/tetrig/material/*.py`` in this add-on's
folder) and where the user's own go.

The shipped presets stay in the add-on's folder, which is registered as a preset search path, so an
update of the extension updates them; the user's presets are written by ``TETRIG_OT_preset_add``
into Blender's user presets folder (``scripts/presets/tetrig/material``), as Blender's own are.
A preset file sets the material settings of the active soft body (or of the soft body of an active
cage).
"""

from __future__ import annotations

import os
import shutil

import bpy

PRESET_SUBDIR = "tetrig/material"
ADDON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def shipped() -> list[str]:
    """Paths of the presets that ship with TetRig, sorted by name."""
    return sorted(os.path.join(SHIPPED_DIR, f) for f in os.listdir(SHIPPED_DIR) if f.endswith(".py"))


def is_shipped(path: str) -> bool:
    """Whether ``path`` is one of TetRig's own presets (never removed from the menu)."""
    return os.path.normcase(os.path.dirname(os.path.realpath(path))) == os.path.normcase(os.path.realpath(SHIPPED_DIR))


def register() -> None:
    if hasattr(bpy.utils, "register_preset_path"):
        bpy.utils.register_preset_path(ADDON_DIR)
        return
    # Without preset search paths, copy the presets into the user's presets folder (once; a user's
    # edited copy is kept).
    target = bpy.utils.user_resource("SCRIPTS", path=os.path.join("presets", PRESET_SUBDIR), create=True)
    for path in shipped():
        destination = os.path.join(target, os.path.basename(path))
        if not os.path.exists(destination):
            shutil.copyfile(path, destination)


def unregister() -> None:
    if hasattr(bpy.utils, "unregister_preset_path"):
        bpy.utils.unregister_preset_path(ADDON_DIR)
