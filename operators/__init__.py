"""TetRig operators, one workflow per module."""

import bpy

from . import (bake, build_cage, export_animation_json, export_json, export_pc2, free_bake,
               preset_add, remove, reset_to_rest)

classes = (
    build_cage.TETRIG_OT_build_cage,
    reset_to_rest.TETRIG_OT_reset_to_rest,
    remove.TETRIG_OT_remove,
    export_json.TETRIG_OT_export_json,
    bake.TETRIG_OT_bake,
    free_bake.TETRIG_OT_free_bake,
    export_pc2.TETRIG_OT_export_pc2,
    export_animation_json.TETRIG_OT_export_animation_json,
    preset_add.TETRIG_OT_preset_add,
)

register, unregister = bpy.utils.register_classes_factory(classes)
