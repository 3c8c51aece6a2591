"""Jiggle-bone settings: ``PoseBone.tetrig_jiggle`` (each bone) and ``Object.tetrig_jiggle`` (the
armature; on a collision object, the shape jiggle bones see). Saved with the .blend.

Units: stiffness k [1/s²] (the tail swings at √k/2π Hz whatever the bone's length or the rig's
scale), damping c [1/s] (critical: 2√k), speeds in m/s; lengths (collision radius, teleport
distance) in Blender units, times the scene's unit scale.
"""

from __future__ import annotations

import math
from typing import cast

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, PointerProperty

from ...tetrig_addon.jiggle import model as jiggle_model
from ..common import hooks
from ..common.properties import STEPS_PER_SECOND_MAX, STEPS_PER_SECOND_SOFT_MAX

# 2 Hz: a lively default between hair (~1.5 Hz) and ears (~3 Hz).
DEFAULT_STIFFNESS = (2.0 * math.pi * 2.0) ** 2
SHAPE_AUTO, SHAPE_SPHERE, SHAPE_CAPSULE, SHAPE_MESH = "AUTO", "SPHERE", "CAPSULE", "MESH"


def _bone_changed(settings: "TetRigJiggleBone", context: bpy.types.Context | None) -> None:
    """A bone setting the model is built from: the model is built again at the next frame."""
    hooks.settings_changed(cast(bpy.types.Object, settings.id_data), "jiggle_model", context)


def _enabled_changed(settings: "TetRigJiggleBone", context: bpy.types.Context | None) -> None:
    """Jiggle turned on or off for a bone: it gets its constraint (or loses it) at once
    (``runtime/scene.settings_changed``)."""
    hooks.settings_changed(cast(bpy.types.Object, settings.id_data), "jiggle_enabled", context)


def _rig_changed(settings: "TetRigJiggleObject", context: bpy.types.Context | None) -> None:
    """A setting of the armature (Jiggle Bones, Influence, the steps, teleports, colliders), set in
    the panel or by a script, keyed or not: the current frame is shown again with it at once."""
    hooks.settings_changed(cast(bpy.types.Object, settings.id_data), "jiggle_shown", context)


class TetRigJiggleBone(bpy.types.PropertyGroup):
    """Jiggle settings of one pose bone."""

    enabled: BoolProperty(  # type: ignore[valid-type]
        name="Jiggle", default=False, update=_enabled_changed,
        description="Simulate this bone: its tail springs toward where the animation puts it")
    stiffness: FloatProperty(  # type: ignore[valid-type]
        name="Stiffness", default=DEFAULT_STIFFNESS, min=0.0, soft_max=5000.0, precision=1,
        update=_bone_changed,
        description="Spring toward the animated tail, per unit mass [1/s²]: the bone swings at "
                    "√k/2π Hz whatever its length or the rig's scale (158 = 2 Hz)")
    damping: FloatProperty(  # type: ignore[valid-type]
        name="Damping", default=2.0 * 0.5 * math.sqrt(DEFAULT_STIFFNESS), min=0.0, soft_max=200.0,
        update=_bone_changed,
        description="Damping of the tail's motion relative to the rig [1/s]: 2√k (the Critical button) "
                    "returns without overshoot, less swings longer")
    gravity_scale: FloatProperty(  # type: ignore[valid-type]
        name="Gravity", default=1.0, soft_min=0.0, soft_max=5.0, update=_bone_changed,
        description="Times the scene's gravity: the bone droops by g/k at rest")
    max_speed: FloatProperty(  # type: ignore[valid-type]
        name="Max Speed", default=50.0, min=1e-3, soft_max=500.0, unit="VELOCITY", update=_bone_changed,
        description="Speed limit of the tail relative to the rig [m/s]")
    stretch: BoolProperty(  # type: ignore[valid-type]
        name="Stretch", default=False, update=_bone_changed,
        description="Let the bone change length (scale along it); off keeps its length exactly")
    angle_limit: FloatProperty(  # type: ignore[valid-type]
        name="Angle Limit", default=math.pi, min=math.radians(0.1), max=math.pi, subtype="ANGLE",
        update=_bone_changed,
        description="The bone stays within this angle of its animated direction (180°: no limit)")
    collision_radius: FloatProperty(  # type: ignore[valid-type]
        name="Collision Radius", default=0.0, min=0.0, soft_max=1.0, subtype="DISTANCE", unit="LENGTH",
        update=_bone_changed,
        description="Radius of the tail's sphere against colliders (Collision physics objects)")


class TetRigJiggleObject(bpy.types.PropertyGroup):
    """Jiggle settings of an armature object, or the shape of a collision object."""

    enabled: BoolProperty(  # type: ignore[valid-type]
        name="Jiggle Bones", default=True, update=_rig_changed,
        description="Simulate this armature's jiggle bones (off: the animation alone)")
    influence: FloatProperty(  # type: ignore[valid-type]
        name="Influence", default=1.0, min=0.0, max=1.0, subtype="FACTOR", update=_rig_changed,
        description="How much of the jiggle is shown (the seed's alpha; animatable): each bone turns "
                    "this share of its jiggle. The simulation itself does not change")
    steps_per_second: FloatProperty(  # type: ignore[valid-type]
        name="Steps per Second", default=jiggle_model.DEFAULT_STEPS_PER_SECOND, min=1.0, soft_min=24.0,
        soft_max=STEPS_PER_SECOND_SOFT_MAX, max=STEPS_PER_SECOND_MAX, precision=0, update=_rig_changed,
        description="Simulation steps per second of scene time (rounded to whole steps per frame): the "
                    "same motion at any frame rate")
    max_step: FloatProperty(  # type: ignore[valid-type]
        name="Max Step", default=jiggle_model.DEFAULT_MAX_STEP, min=1e-4, max=1.0,
        precision=4, unit="TIME_ABSOLUTE", update=_rig_changed,
        description="No integration step is longer than this [s] (the seed's 1/30 s clamp): a low "
                    "Steps per Second or frame rate takes more steps, never a longer one")
    teleport_distance: FloatProperty(  # type: ignore[valid-type]
        name="Teleport Distance", default=1.0, min=0.0, soft_max=100.0, subtype="DISTANCE", unit="LENGTH",
        update=_rig_changed,
        description="A jump of the armature object farther than this in one frame puts every chain "
                    "back at rest instead of swinging")
    teleport_angle: FloatProperty(  # type: ignore[valid-type]
        name="Teleport Angle", default=math.radians(90.0), min=0.0, max=math.pi, subtype="ANGLE",
        update=_rig_changed,
        description="A turn of the armature object by more than this in one frame puts every chain "
                    "back at rest")
    use_colliders: BoolProperty(  # type: ignore[valid-type]
        name="Colliders", default=True, update=_rig_changed,
        description="Tails with a collision radius stay out of objects with Collision physics, "
                    "Jiggle Collider empties and the soft bodies of the scene (one-way)")
    use_as_collider: BoolProperty(  # type: ignore[valid-type]
        name="Jiggle Collider", default=False,
        description="Jiggle bones stay out of this empty: a sphere of its display size (a capsule along "
                    "its local Z with the Capsule shape). Empties cannot have Collision physics; meshes "
                    "collide when theirs is on")
    collider_shape: EnumProperty(  # type: ignore[valid-type]
        name="Jiggle Shape",
        items=[(SHAPE_AUTO, "Auto", "Empties: a sphere; meshes: their surface"),
               (SHAPE_SPHERE, "Sphere", "A sphere around the object's bounds, radius from its size"),
               (SHAPE_CAPSULE, "Capsule", "A capsule along the object's longest side"),
               (SHAPE_MESH, "Mesh", "The mesh's own surface (signed distance)")],
        default=SHAPE_AUTO,
        description="What jiggle bones collide with when this object has Collision physics")
    original_action: PointerProperty(  # type: ignore[valid-type]
        type=bpy.types.Action, name="Action before Bake to Action",
        description="The action Bake to Action replaced; Free Bake puts it back")


def bone_settings(bone: bpy.types.PoseBone) -> TetRigJiggleBone:
    """``bone.tetrig_jiggle``, typed."""
    return bone.tetrig_jiggle  # type: ignore[attr-defined]


def rig_settings(obj: bpy.types.Object) -> TetRigJiggleObject:
    """``obj.tetrig_jiggle``, typed."""
    return obj.tetrig_jiggle  # type: ignore[attr-defined]


BONE_SETTINGS = ("stiffness", "damping", "gravity_scale", "max_speed", "stretch", "angle_limit",
                 "collision_radius")
classes = (TetRigJiggleBone, TetRigJiggleObject)


def register() -> None:
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.PoseBone.tetrig_jiggle = PointerProperty(type=TetRigJiggleBone)  # type: ignore[attr-defined]
    bpy.types.Object.tetrig_jiggle = PointerProperty(type=TetRigJiggleObject)  # type: ignore[attr-defined]


def unregister() -> None:
    del bpy.types.Object.tetrig_jiggle  # type: ignore[attr-defined]
    del bpy.types.PoseBone.tetrig_jiggle  # type: ignore[attr-defined]
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
