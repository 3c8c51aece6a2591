"""TetRig panels: the 3D viewport sidebar tab "TetRig"."""

import bpy

from . import main, menus

classes = (menus.TETRIG_MT_presets, menus.TETRIG_MT_export, main.TETRIG_PT_main, main.TETRIG_PT_simulation,
           main.TETRIG_PT_goal, main.TETRIG_PT_collisions, main.TETRIG_PT_bake, main.TETRIG_PT_output)

register, unregister = bpy.utils.register_classes_factory(classes)
