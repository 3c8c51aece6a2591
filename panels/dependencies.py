"""The TetRig tab when SciPy does not import: one line saying what is missing and which zip to
install. Registered instead of the panels of ``main``; imports nothing of the engine."""

from __future__ import annotations

import textwrap

import bpy

from ..runtime.app import dependencies

# Characters per line of the wrapped message in the sidebar at its default width (as main.py's).
MESSAGE_WRAP = 36


class TETRIG_PT_missing_dependencies(bpy.types.Panel):
    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "TetRig"
    bl_label = "TetRig Soft Body"

    def draw(self, context: bpy.types.Context) -> None:
        message = dependencies.missing_message() or "TetRig: restart Blender to load the add-on"
        col = self.layout.column(align=True)  # one message, wrapped to the narrow sidebar
        for i, line in enumerate(textwrap.wrap(message, MESSAGE_WRAP, break_on_hyphens=False)):
            col.label(text=line, icon="ERROR" if i == 0 else "BLANK1")


register, unregister = bpy.utils.register_classes_factory((TETRIG_PT_missing_dependencies,))
