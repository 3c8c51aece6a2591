"""TetRig operators, one workflow per module."""

import bpy

from . import (bake, build_cage, export_animation_json, export_json, export_pc2, free_bake,
               jiggle_apply_chain, jiggle_bake, jiggle_bake_action, jiggle_critical_damping,
               jiggle_free_bake, jiggle_preset_add, jiggle_update_rig, preset_add, remove,
               reset_to_rest, setup_surface)

classes = (
    build_cage.TETRIG_OT_build_cage,
    setup_surface.TETRIG_OT_setup_surface,
    reset_to_rest.TETRIG_OT_reset_to_rest,
    remove.TETRIG_OT_remove,
    export_json.TETRIG_OT_export_json,
    bake.TETRIG_OT_bake,
    free_bake.TETRIG_OT_free_bake,
    export_pc2.TETRIG_OT_export_pc2,
    export_animation_json.TETRIG_OT_export_animation_json,
    preset_add.TETRIG_OT_preset_add,
    jiggle_update_rig.TETRIG_OT_jiggle_update_rig,
    jiggle_apply_chain.TETRIG_OT_jiggle_apply_chain,
    jiggle_critical_damping.TETRIG_OT_jiggle_critical_damping,
    jiggle_bake.TETRIG_OT_jiggle_bake,
    jiggle_free_bake.TETRIG_OT_jiggle_free_bake,
    jiggle_bake_action.TETRIG_OT_jiggle_bake_action,
    jiggle_preset_add.TETRIG_OT_jiggle_preset_add,
)

register, unregister = bpy.utils.register_classes_factory(classes)
