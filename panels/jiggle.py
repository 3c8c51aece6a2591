"""The Jiggle Bones subpanel of the TetRig tab: the active armature's jiggle settings, the active
bone's (Pose Mode) with the presets, the bake; for a collision object, the shape jiggle bones see."""

from __future__ import annotations

import bpy

from ..runtime import scene as driver
from ..runtime.jiggle import bake as jiggle_bake, rig as jiggle_rig
from ..runtime.jiggle.properties import bone_settings, rig_settings
from .main import TetRigPanel, wrapped_label
from .menus import TETRIG_MT_jiggle_presets


def _is_collider(obj: bpy.types.Object) -> bool:
    """An empty (which can be a jiggle collider) or a mesh with Collision physics."""
    return obj.type == "EMPTY" or (obj.type == "MESH" and any(m.type == "COLLISION" for m in obj.modifiers))


class TETRIG_PT_jiggle(TetRigPanel):
    bl_label = "Jiggle Bones"
    bl_parent_id = "TETRIG_PT_main"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = context.active_object
        return obj is not None and (obj.type == "ARMATURE" or _is_collider(obj))

    def draw_header(self, context: bpy.types.Context) -> None:
        obj = context.active_object
        if obj is not None and obj.type == "ARMATURE":
            self.layout.prop(rig_settings(obj), "enabled", text="")

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout.column()
        obj = context.active_object
        if obj is None:
            return
        layout.use_property_split = True
        layout.use_property_decorate = False
        if obj.type != "ARMATURE":
            if obj.type == "EMPTY":
                layout.prop(rig_settings(obj), "use_as_collider")
            layout.prop(rig_settings(obj), "collider_shape")
            return
        problem = jiggle_rig.rig_problem(obj)
        if problem:
            wrapped_label(layout, context, problem, "ERROR")
            return
        s = rig_settings(obj)
        col = layout.column()
        col.active = s.enabled
        col.prop(s, "influence")
        col.prop(s, "steps_per_second")
        col.prop(s, "max_step")
        sub = col.column(align=True)
        sub.prop(s, "teleport_distance")
        sub.prop(s, "teleport_angle")
        col.prop(s, "use_colliders")
        warning = driver.status(obj)
        if warning:
            wrapped_label(layout, context, warning, "ERROR")
            if jiggle_rig.setup_problem(obj):  # the fix, beside the message that names it
                layout.operator("tetrig.jiggle_update_rig", icon="FILE_REFRESH")
        self.draw_bone(context, obj)
        self.draw_bake(context, obj)

    def draw_bone(self, context: bpy.types.Context, obj: bpy.types.Object) -> None:
        box = self.layout.box()
        bone = getattr(context, "active_pose_bone", None)
        if context.mode != "POSE" or bone is None or bone.id_data != obj:
            count = len(jiggle_rig.jiggle_bones(obj))
            wrapped_label(box, context, f"{count} jiggle bones. Pose Mode: select a bone to set its jiggle",
                          "BONE_DATA")
            return
        s = bone_settings(bone)
        box.prop(s, "enabled", text=f"Jiggle {bone.name}")
        col = box.column()
        col.active = s.enabled
        row = col.row(align=True)
        row.menu(TETRIG_MT_jiggle_presets.__name__, text=TETRIG_MT_jiggle_presets.bl_label, icon="PRESET")
        row.operator("tetrig.jiggle_preset_add", text="", icon="ADD")
        row.operator("tetrig.jiggle_preset_add", text="", icon="REMOVE").remove_active = True
        col.prop(s, "stiffness")
        col.label(text=f"Swings at {jiggle_rig.frequency_hz(s.stiffness):.2f} Hz", icon="FORCE_HARMONIC")
        row = col.row(align=True)
        row.prop(s, "damping")
        row.operator("tetrig.jiggle_critical_damping", text="Critical")
        col.prop(s, "gravity_scale")
        col.prop(s, "max_speed")
        col.prop(s, "stretch")
        col.prop(s, "angle_limit")
        col.prop(s, "collision_radius")
        box.operator("tetrig.jiggle_apply_chain", icon="LINKED")

    def draw_bake(self, context: bpy.types.Context, obj: bpy.types.Object) -> None:
        layout = self.layout.column()
        scene = context.scene
        if scene is None:
            return
        state = jiggle_bake.status(obj, scene)
        if s := rig_settings(obj).original_action:
            wrapped_label(layout, context, f"Baked to an action (was {s.name}): live jiggle off", "ACTION")
        elif state is None:
            wrapped_label(layout, context, "Not baked: simulated live", "INFO")
        else:
            wrapped_label(layout, context, state.describe(),
                          "ERROR" if state.outdated or state.bones_changed else "CHECKMARK")
        row = layout.row(align=True)
        row.operator("tetrig.jiggle_bake", text="Bake" if state is None else "Bake Again", icon="REC")
        row.operator("tetrig.jiggle_free_bake", icon="TRASH")
        row = layout.row(align=True)
        row.operator("tetrig.jiggle_bake_action", icon="ACTION")
        row.operator("tetrig.jiggle_update_rig", text="Update Rig", icon="FILE_REFRESH")
