"""TetRig operators, one workflow per module."""

import bpy

from . import build_cage, export_json, remove, reset_to_rest

classes = (
    build_cage.TETRIG_OT_build_cage,
    reset_to_rest.TETRIG_OT_reset_to_rest,
    remove.TETRIG_OT_remove,
    export_json.TETRIG_OT_export_json,
)

register, unregister = bpy.utils.register_classes_factory(classes)
