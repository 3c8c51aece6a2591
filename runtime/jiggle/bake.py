"""Baking jiggle rigs: into the .blend (``bake_store``), and into an Action for exporters.

*Bake* stores what live playback shows, frame by frame, from the same frame cache
(``kind.state_at``), so a baked frame equals the live one exactly (float64). *Bake to Action*
keys each jiggle bone's rotation (and scale, for Stretch bones) on every frame of the range into a
copy of the armature's action, then turns the rig's Jiggle Bones off: FBX, glTF and any exporter
that reads actions carry the motion, and *Free Bake* puts the original action back.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, cast

import bpy
import numpy as np
from mathutils import Euler, Matrix

from ...tetrig_addon.errors import TetRigInputError
from ...tetrig_addon.fingerprint import fingerprint
from ..common import frames, scene_inputs
from . import bake_store as jiggle_bake_store, kind as rig_kind, rig as jiggle_rig
from .properties import bone_settings, rig_settings


class JiggleBakeError(RuntimeError):
    """A rig cannot be baked; the message says why."""


@dataclass(frozen=True)
class BakeResult:
    name: str
    info: jiggle_bake_store.BakeInfo
    seconds: float

    def message(self) -> str:
        per_frame = self.seconds / self.info.frame_count * 1000
        return (f"{self.name}: baked jiggle {self.info.describe()}, {self.seconds:.2f} s "
                f"({per_frame:.1f} ms/frame)")


def bake_problem(obj: bpy.types.Object | None) -> str:
    """Why ``obj`` cannot be baked, or ''."""
    problem = jiggle_rig.rig_problem(obj)
    if problem or obj is None:
        return problem
    if not any(bone_settings(pb).enabled for pb in obj.pose.bones):
        return f"{obj.name} has no jiggle bones: turn Jiggle on for some bones first"
    if not rig_settings(obj).enabled:
        return f"{obj.name} has Jiggle Bones turned off"
    return jiggle_rig.bone_problem(obj) or jiggle_rig.setup_problem(obj)


def _frame_range(obj: bpy.types.Object, scene: bpy.types.Scene, frame_start: int | None,
                 frame_end: int | None) -> tuple[int, int]:
    """The frames to bake (default: the scene's range).

    Raises:
        JiggleBakeError: ``bake_problem`` or an empty range.
    """
    problem = bake_problem(obj)
    first = scene.frame_start if frame_start is None else int(frame_start)
    last = scene.frame_end if frame_end is None else int(frame_end)
    if not problem and last < first:
        problem = f"The frame range {first}–{last} is empty"
    if problem:
        raise JiggleBakeError(problem)
    return first, last


def bake(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
         frame_start: int | None = None, frame_end: int | None = None,
         progress: Callable[[str, int, int], None] | None = None) -> BakeResult:
    """Bake a rig's frames into the .blend (replacing its bake).

    Raises:
        JiggleBakeError: ``bake_problem``, an empty range, or the simulation refused an input.
    """
    first, last = _frame_range(obj, scene, frame_start, frame_end)
    t0 = time.perf_counter()
    try:
        slot = frames.slot(obj, rig_kind.KIND.name)
        prepared = slot.prepared = rig_kind.prepare(obj, scene, slot.prepared)
        turns = np.empty((last - first + 1, prepared.model.bone_count, 3, 3))
        for i, f in enumerate(range(first, last + 1)):
            prepared, state, pose = rig_kind.state_at(obj, scene, f, depsgraph)
            turns[i] = rig_kind.KIND.shown(obj, scene, prepared, state, pose)
            if progress is not None:
                progress(obj.name, f, last)
        # with the soft bodies it saw (``kind.Prepared.around``, found again as it stepped)
        key = fingerprint(rig_kind.motion_key(obj, scene, prepared))
    except (TetRigInputError, scene_inputs.InputsUnavailable, ValueError) as exc:
        raise JiggleBakeError(str(exc)) from exc
    info = jiggle_bake_store.BakeInfo(first, last, prepared.names, key)
    jiggle_bake_store.write(obj, info, turns)
    return BakeResult(obj.name, info, time.perf_counter() - t0)


BakeStatus = rig_kind.BakeStatus
status = rig_kind.bake_status


def free(obj: bpy.types.Object) -> bool:
    """Free a rig's bakes: the stored one, and Bake to Action (the original action back, every
    channel Bake to Action set back to its value before the bake, Jiggle Bones on again). Returns
    whether there was anything to free."""
    freed = jiggle_bake_store.clear(obj)
    settings = rig_settings(obj)
    baked_action = obj.animation_data.action if obj.animation_data is not None else None
    if settings.original_action is not None or (baked_action is not None and baked_action.get(ACTION_MARK)):
        obj.animation_data.action = settings.original_action
        settings.original_action = None
        if baked_action is not None and baked_action.get(ACTION_MARK) and baked_action.users == 0:
            bpy.data.actions.remove(baked_action)
        settings.enabled = True
        freed = True
    return _restore_channels(obj) or freed


# A custom property on actions made by Bake to Action.
ACTION_MARK = "tetrig_jiggle_bake"
# Inside the armature's jiggle settings: each jiggle bone's channels as they were before Bake to
# Action set them (``CHANNELS``, in that order, flat), so Free Bake gives them back: the channels
# no action keys keep the value Bake to Action left otherwise, and the live jiggle then reads
# another animation than before the bake.
CHANNELS_PROPERTY = "_channels_before_bake"
CHANNELS = ("rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale")


def _keep_channels(obj: bpy.types.Object, bones: list[bpy.types.PoseBone]) -> None:
    """Remember the channels Bake to Action writes, once per bake (a second Bake to Action keeps
    the values from before the first)."""
    settings = rig_settings(obj)
    if settings.get(CHANNELS_PROPERTY) is not None:
        return
    settings[CHANNELS_PROPERTY] = {
        pb.name: np.concatenate([np.asarray(getattr(pb, name), dtype=np.float64) for name in CHANNELS])
        for pb in bones}


def _restore_channels(obj: bpy.types.Object) -> bool:
    """Set the channels ``_keep_channels`` remembered back (bones since renamed or deleted are
    skipped); returns whether there were any."""
    settings = rig_settings(obj)
    kept = settings.get(CHANNELS_PROPERTY)
    if kept is None:
        return False
    for name, values in kept.items():
        pb = obj.pose.bones.get(name)
        if pb is None:
            continue
        flat, start = list(values), 0
        for channel in CHANNELS:
            size = len(getattr(pb, channel))
            setattr(pb, channel, flat[start:start + size])
            start += size
    del settings[CHANNELS_PROPERTY]
    return True


def _channels(pb: bpy.types.PoseBone, basis: Matrix, previous: Euler | None) -> list[tuple[str, tuple]]:
    """The rotation channel of ``pb``'s rotation mode (and its value) for a basis matrix."""
    mode = pb.rotation_mode
    rot = basis.to_quaternion()
    if mode == "QUATERNION":
        return [("rotation_quaternion", (rot.w, rot.x, rot.y, rot.z))]
    if mode == "AXIS_ANGLE":
        axis, angle = rot.to_axis_angle()
        return [("rotation_axis_angle", (angle, axis.x, axis.y, axis.z))]
    euler = rot.to_euler(mode, previous) if previous is not None else rot.to_euler(mode)
    return [("rotation_euler", (euler.x, euler.y, euler.z))]


def bake_to_action(obj: bpy.types.Object, scene: bpy.types.Scene, frame_start: int | None = None,
                   frame_end: int | None = None) -> tuple[bpy.types.Action, int, list[str]]:
    """Key every jiggle bone's rotation (and scale with Stretch) on each frame as playback shows it
    into a copy of the armature's action (``<action>_Jiggle``), assign it and turn Jiggle Bones off.

    Returns:
        (the action, the number of keys set, warnings: jiggle bones with constraints of their own,
        which act again on the keyed values).

    Raises:
        JiggleBakeError: ``bake_problem`` or an empty range (nothing is changed then).
    """
    first, last = _frame_range(obj, scene, frame_start, frame_end)
    bones = jiggle_rig.jiggle_bones(obj)
    frame0 = scene.frame_current
    bases: list[list[Matrix]] = []
    try:
        for f in range(first, last + 1):
            scene.frame_set(f)
            problem = frames.status(obj)
            if problem:
                raise JiggleBakeError(problem)
            bases.append([obj.convert_space(pose_bone=pb, matrix=pb.matrix, from_space="POSE", to_space="LOCAL")
                          for pb in bones])
    finally:
        scene.frame_set(frame0)
    _keep_channels(obj, bones)
    if obj.animation_data is None:
        obj.animation_data_create()
    original = obj.animation_data.action
    action = cast(bpy.types.Action, original.copy() if original is not None
                  else bpy.data.actions.new(f"{obj.name}Action"))
    action.name = f"{(original.name if original is not None else obj.name)}_Jiggle"
    action[ACTION_MARK] = True
    settings = rig_settings(obj)
    if settings.original_action is None and original is not None and not original.get(ACTION_MARK):
        settings.original_action = original
        original.use_fake_user = True
    obj.animation_data.action = action
    keys = 0
    for j, pb in enumerate(bones):
        previous: Euler | None = None
        for i, f in enumerate(range(first, last + 1)):
            for path, value in _channels(pb, bases[i][j], previous):
                setattr(pb, path, value)
                pb.keyframe_insert(path, frame=f, group=pb.name)
                keys += 1
                previous = pb.rotation_euler.copy() if path == "rotation_euler" else None
            if bone_settings(pb).stretch:
                pb.scale = bases[i][j].to_scale()
                pb.keyframe_insert("scale", frame=f, group=pb.name)
                keys += 1
    settings.enabled = False
    rig_kind.show_animation(obj)
    scene.frame_set(frame0)
    own = [pb.name for pb in bones if any(c.name != jiggle_rig.CONSTRAINT_NAME for c in pb.constraints)]
    warnings = ([f"{', '.join(own)} have constraints of their own, which act again on the keyed rotations: "
                 "mute them to play the action as baked"] if own else [])
    return action, keys, warnings
