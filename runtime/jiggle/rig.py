"""Setting an armature up for jiggle bones: one constraint per jiggle bone, last in its stack.

How the jiggle reaches the bones (chosen over what Wiggle 2 and Jiggle Physics do): those add-ons
reset the pose bones' own channels in ``frame_change_pre`` and write ``pose_bone.matrix`` in
``frame_change_post``; keyed channels survive, but an unkeyed channel is overwritten (a pose the user
set by hand is lost, a keyframe inserted later records the jiggle), and a bone's own constraints and
IK then act on the written values, so they are no longer "under" the jiggle. TetRig never writes a
bone's channels. Each jiggle bone gets a Copy Transforms constraint named ``CONSTRAINT_NAME`` as the
last of its constraints (mix *After Original (Full)*, owner space Pose, target space World), whose
target is a hidden empty holding the bone's jiggle T: the bone's final matrix is then
``pre · T``, where ``pre`` is what its animation, parents, the user's constraints and IK made
(checked: exact to float32 rounding). The frame handler only writes the empties' matrices (data
no one animates), so a frame's inputs can be read back exactly (``pre = final · T⁻¹``), the user's
channels and keys are never touched, and turning jiggle off leaves the animation exactly as it was.
The empties live in the collection ``COLLECTION_NAME`` (hidden, not rendered); the constraint holds
the empty itself, so renaming a bone changes nothing.
"""

from __future__ import annotations

import math

import bpy
import numpy as np

from ...tetrig_addon.errors import TetRigInputError
from ...tetrig_addon.jiggle.model import MIN_BONE_LENGTH, UNIFORM_SCALE_TOLERANCE
from .properties import BONE_SETTINGS, bone_settings

CONSTRAINT_NAME = "TetRig Jiggle"
COLLECTION_NAME = "TetRig Jiggle Targets"
# A custom property on each target empty: the armature it belongs to, so it is never taken for a
# user's object (a collider, an exported node).
TARGET_PROPERTY = "tetrig_jiggle_target"


def rig_problem(obj: bpy.types.Object | None) -> str:
    """Why ``obj`` cannot have jiggle bones, or '' when it can (read only, changes nothing)."""
    if obj is None:
        return "Select an armature"
    if obj.type != "ARMATURE":
        return f"{obj.name} is a {obj.type.lower()}, not an armature: jiggle bones need an armature"
    if obj.library is not None or (obj.data.library is not None and obj.override_library is None):
        library = obj.library or obj.data.library
        return (f"{obj.name} is linked from {library.filepath if library else 'a library'}: make a "
                "Library Override (Object > Library Override > Make) to give it jiggle bones")
    scale = np.linalg.norm(np.array(obj.matrix_world)[:3, :3], axis=0)
    if np.linalg.det(np.array(obj.matrix_world)[:3, :3]) <= 0.0:
        return (f"{obj.name} has a negative (mirroring) or zero scale {_scale(obj)}: "
                "jiggle bones need a positive scale (apply the scale, Ctrl+A)")
    if np.abs(scale - scale.mean()).max() > UNIFORM_SCALE_TOLERANCE * scale.mean():
        return (f"{obj.name} has a non-uniform scale {_scale(obj)}: jiggle "
                "bones need the same scale on x, y and z (apply the scale, Ctrl+A)")
    return ""


def _scale(obj: bpy.types.Object) -> tuple[float, ...]:
    return tuple(np.round(np.array(obj.scale, dtype=np.float64), 4).tolist())


def jiggle_bones(obj: bpy.types.Object) -> list[bpy.types.PoseBone]:
    """The pose bones with Jiggle on, parents before children."""
    bones = [pb for pb in obj.pose.bones if bone_settings(pb).enabled]

    def depth(pb: bpy.types.PoseBone) -> int:
        return len(pb.parent_recursive)

    return sorted(bones, key=depth)


def jiggle_parent(pb: bpy.types.PoseBone) -> bpy.types.PoseBone | None:
    """The nearest ancestor of ``pb`` with Jiggle on, or ``None`` (a chain root)."""
    for ancestor in pb.parent_recursive:
        if bone_settings(ancestor).enabled:
            return ancestor
    return None


def bone_problem(obj: bpy.types.Object) -> str:
    """Why the jiggle bones of ``obj`` cannot be simulated (zero-length bones), or ''."""
    for pb in jiggle_bones(obj):
        if pb.bone.length < MIN_BONE_LENGTH:
            return f"{obj.name}: the bone {pb.name} has zero length; give it a length or turn its Jiggle off"
    return ""


def constraint(pb: bpy.types.PoseBone) -> bpy.types.Constraint | None:
    """The bone's jiggle constraint, or ``None``."""
    return pb.constraints.get(CONSTRAINT_NAME)


def target(pb: bpy.types.PoseBone) -> bpy.types.Object | None:
    """The empty that holds the bone's jiggle, or ``None`` (not set up, or deleted)."""
    c = constraint(pb)
    return getattr(c, "target", None) if c is not None else None


def setup_problem(obj: bpy.types.Object) -> str:
    """What is missing for the handler to show the jiggle (a constraint, its target, its place at
    the end of the stack), or '' when the rig is set up."""
    holders: dict[str, str] = {}  # target empty -> the bone whose jiggle it holds
    for pb in jiggle_bones(obj):
        c = constraint(pb)
        empty = getattr(c, "target", None) if c is not None else None
        if c is None or empty is None:
            return f"{obj.name}: the jiggle of {pb.name} is not set up; press Update Jiggle Rig"
        if pb.constraints[-1] != c:
            return (f"{obj.name}: a constraint was added after the jiggle of {pb.name}; press Update "
                    "Jiggle Rig to move the jiggle last")
        if empty.name in holders:  # a duplicated bone keeps the constraint of the bone it copies
            return (f"{obj.name}: {pb.name} shares its jiggle target with {holders[empty.name]} (a "
                    "duplicated bone); press Update Jiggle Rig")
        holders[empty.name] = pb.name
    return ""


def _collection(scene: bpy.types.Scene) -> bpy.types.Collection:
    coll = bpy.data.collections.get(COLLECTION_NAME)
    if coll is None or coll.library is not None:
        coll = bpy.data.collections.new(COLLECTION_NAME)
        coll.hide_render = True
    if coll.name not in scene.collection.children:
        scene.collection.children.link(coll)
    return coll


def _new_target(obj: bpy.types.Object, pb: bpy.types.PoseBone, scene: bpy.types.Scene) -> bpy.types.Object:
    empty = bpy.data.objects.new(f"{obj.name}.{pb.name}.jiggle", None)
    empty.empty_display_size = max(pb.bone.length * 0.25, 1e-3)
    empty.hide_viewport = True
    empty.hide_render = True
    empty.hide_select = True
    empty[TARGET_PROPERTY] = obj.name
    _collection(scene).objects.link(empty)
    return empty


def setup(obj: bpy.types.Object, scene: bpy.types.Scene) -> int:
    """Give every jiggle bone of ``obj`` its constraint (last in its stack) and target, and take
    them off bones whose Jiggle is off. Returns the number of jiggle bones.

    Raises:
        TetRigInputError: ``rig_problem`` or ``bone_problem`` (nothing is changed then).
    """
    problem = rig_problem(obj) or bone_problem(obj)
    if problem:
        raise TetRigInputError(problem)
    bones = jiggle_bones(obj)
    for pb in obj.pose.bones:
        if not bone_settings(pb).enabled:
            _remove_bone(pb)
    held: set[str] = set()  # targets given to a bone already: a duplicated bone's gets its own
    for pb in bones:
        c = constraint(pb)
        if c is None:
            c = pb.constraints.new("COPY_TRANSFORMS")
            c.name = CONSTRAINT_NAME
        c.mix_mode = "AFTER_FULL"  # type: ignore[attr-defined]
        c.owner_space = "POSE"
        c.target_space = "WORLD"
        c.influence = 1.0
        c.mute = False
        if getattr(c, "target", None) is None or c.target.name in held:  # type: ignore[attr-defined]
            c.target = _new_target(obj, pb, scene)  # type: ignore[attr-defined]
        held.add(c.target.name)  # type: ignore[attr-defined]
        index = list(pb.constraints).index(c)
        if index != len(pb.constraints) - 1:
            pb.constraints.move(index, len(pb.constraints) - 1)
    return len(bones)


def _remove_bone(pb: bpy.types.PoseBone) -> None:
    c = constraint(pb)
    if c is None:
        return
    empty = getattr(c, "target", None)
    pb.constraints.remove(c)
    if empty is not None and TARGET_PROPERTY in empty and empty.users <= 1:
        bpy.data.objects.remove(empty)


def remove(obj: bpy.types.Object) -> None:
    """Take every jiggle constraint and target off ``obj`` (the bones' settings are kept)."""
    for pb in obj.pose.bones:
        _remove_bone(pb)


def apply_to_chain(root: bpy.types.PoseBone) -> list[bpy.types.PoseBone]:
    """Copy the jiggle settings of ``root`` (Jiggle on) to every bone below it; returns the chain,
    root first."""
    chain = [root] + list(root.children_recursive)
    source = bone_settings(root)
    source.enabled = True
    for pb in chain[1:]:
        s = bone_settings(pb)
        s.enabled = True
        for name in BONE_SETTINGS:
            setattr(s, name, getattr(source, name))
    return chain


def frequency_hz(stiffness: float) -> float:
    """The bone's swing frequency √k/2π [Hz] (for the panel)."""
    return math.sqrt(max(stiffness, 0.0)) / (2.0 * math.pi)


def is_target(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` is one of TetRig's jiggle target empties."""
    return TARGET_PROPERTY in obj.keys()


def tidy() -> int:
    """Remove the target empties no jiggle constraint holds any more (their armature or bone was
    deleted); returns how many. Runs after Blender's undo step of the delete: Ctrl+Z brings the
    armature and its targets back together."""
    held = {empty.name for o in bpy.data.objects
            if o.type == "ARMATURE" and o.pose is not None and len(o.users_collection) > 0
            for pb in o.pose.bones if (empty := target(pb)) is not None}
    gone = [o for o in bpy.data.objects if is_target(o) and o.name not in held]
    for empty in gone:
        bpy.data.objects.remove(empty)
    return len(gone)
