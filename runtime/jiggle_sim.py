"""Jiggle rigs in the frame handler: per-armature models and frame caches, and the write-back.

One pass per rig and frame, as for soft bodies (DESIGN.md): read the frame's inputs
(``jiggle_inputs``) → the state at F (the bake, the cache, or steps from the latest cached frame)
→ write each bone's jiggle into its target empty (``jiggle_rig``). The state at frame F depends on
the scene and F alone: the start frame is at rest, and a jump, a scrub back, a bake, a batch run or
a render give frame F the same numbers. Everything is keyed by ``session_uid``, never by ``bpy``
references (undo and file loads invalidate them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import bpy
import numpy as np
from mathutils import Matrix

from ..tetrig_addon import jiggle
from ..tetrig_addon.errors import TetRigInputError
from ..tetrig_addon.fingerprint import fingerprint
from ..tetrig_addon.solver import State
from ..tetrig_addon.timeline import FrameCache
from . import jiggle_bake_store, jiggle_inputs, jiggle_rig
from .jiggle_properties import BONE_SETTINGS, bone_settings, rig_settings

PREFIX = "TetRig"


@dataclass(frozen=True)
class Prepared:
    """A rig's model, built once per key."""

    key: tuple
    model: jiggle.ChainModel
    names: tuple[str, ...]
    parents: np.ndarray  # int64 [n], nearest jiggle ancestor or −1


_prepared: dict[int, Prepared] = {}
_caches: dict[int, FrameCache] = {}
_warned: dict[int, str] = {}


def free(obj: bpy.types.Object | None = None) -> None:
    """Forget models, caches and inputs of one rig, or of all (a new file, an undo)."""
    jiggle_inputs.free(obj)
    if obj is None:
        _prepared.clear()
        _caches.clear()
        _warned.clear()
    else:
        for table in (_prepared, _caches, _warned):
            table.pop(obj.session_uid, None)


def settings_changed(obj: bpy.types.Object) -> None:
    """A bone setting changed (property update): the next frame builds the model again."""
    _prepared.pop(obj.session_uid, None)


def status(obj: bpy.types.Object) -> str:
    """The last warning about ``obj`` from the frame handler, or ''."""
    return _warned.get(obj.session_uid, "")


def rigs(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """The scene's armatures with at least one jiggle bone (Jiggle Bones on or off)."""
    return [o for o in scene.objects if o.type == "ARMATURE" and o.pose is not None
            and any(bone_settings(pb).enabled for pb in o.pose.bones)]


def frame_dt(scene: bpy.types.Scene) -> float:
    return scene.render.fps_base / scene.render.fps


def sim_settings(obj: bpy.types.Object, scene: bpy.types.Scene) -> jiggle.JiggleSettings:
    """The rig's settings in SI units (read at every frame; the cache key holds them)."""
    s = rig_settings(obj)
    dt = frame_dt(scene)
    gravity = tuple(np.array(scene.gravity, dtype=np.float64).tolist()) if scene.use_gravity else (0.0, 0.0, 0.0)
    return jiggle.JiggleSettings(
        frame_dt=dt, substeps=jiggle.substeps_for(s.steps_per_second, dt, s.max_step),
        gravity=gravity,
        teleport_distance=s.teleport_distance * scene.unit_settings.scale_length,
        teleport_angle=s.teleport_angle)


def _model_key(obj: bpy.types.Object, scene: bpy.types.Scene) -> tuple:
    bones = jiggle_rig.jiggle_bones(obj)
    return (tuple((pb.name, getattr(jiggle_rig.jiggle_parent(pb), "name", ""), pb.bone.length,
                   tuple(getattr(bone_settings(pb), n) for n in BONE_SETTINGS)) for pb in bones),
            scene.unit_settings.scale_length)


def prepare(obj: bpy.types.Object, scene: bpy.types.Scene) -> Prepared:
    """Build (or reuse) the model of a rig.

    Raises:
        TetRigInputError: the rig or a bone is refused (``jiggle_rig.rig_problem``, zero length, a
            bad setting), or the rig is not set up.
    """
    problem = jiggle_rig.rig_problem(obj) or jiggle_rig.bone_problem(obj) or jiggle_rig.setup_problem(obj)
    if problem:
        raise TetRigInputError(problem)
    key = _model_key(obj, scene)
    cached = _prepared.get(obj.session_uid)
    if cached is not None and cached.key == key:
        return cached
    bones = jiggle_rig.jiggle_bones(obj)
    index = {pb.name: i for i, pb in enumerate(bones)}
    parents = np.array([index[p.name] if (p := jiggle_rig.jiggle_parent(pb)) is not None else -1
                        for pb in bones], dtype=np.int64)
    unit = scene.unit_settings.scale_length

    def column(name: str) -> np.ndarray:
        return np.array([getattr(bone_settings(pb), name) for pb in bones])

    model = jiggle.build_model([pb.name for pb in bones], parents, column_lengths(bones), column("stiffness"),
                               column("damping"), column("gravity_scale"), column("max_speed"),
                               column("angle_limit"), column("collision_radius") * unit,
                               column("stretch").astype(bool))
    prepared = Prepared(key, model, tuple(pb.name for pb in bones), parents)
    _prepared[obj.session_uid] = prepared
    _caches.pop(obj.session_uid, None)
    return prepared


def column_lengths(bones: list[bpy.types.PoseBone]) -> np.ndarray:
    """Rest lengths of the bones in their own frames (Blender units), float64 [n]."""
    return np.array([pb.bone.length for pb in bones], dtype=np.float64)


def _bones(obj: bpy.types.Object, prepared: Prepared) -> list[bpy.types.PoseBone]:
    return [obj.pose.bones[name] for name in prepared.names]


def inputs_at(obj: bpy.types.Object, prepared: Prepared, scene: bpy.types.Scene, frame: int,
              depsgraph: bpy.types.Depsgraph, refresh: bool = True) -> jiggle.FramePose:
    return jiggle_inputs.inputs_at(obj, _bones(obj, prepared), prepared.parents, scene, frame, depsgraph,
                                   refresh)


def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared) -> tuple:
    """Everything the motion depends on that is saved in the .blend (a bake's fingerprint)."""
    return (prepared.key, sim_settings(obj, scene), scene.frame_start)


def state_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
             depsgraph: bpy.types.Depsgraph) -> tuple[Prepared, jiggle.ChainState, jiggle.FramePose]:
    """The simulated state of a rig at ``frame`` and that frame's inputs.

    Raises:
        TetRigInputError, jiggle_inputs.InputsUnavailable.
    """
    prepared = prepare(obj, scene)
    settings = sim_settings(obj, scene)
    # reading the current frame first lets an edit since the last visit drop the records
    inputs_at(obj, prepared, scene, scene.frame_current, depsgraph)
    key = (prepared.key, settings, scene.frame_start, jiggle_inputs.version(obj))
    cache = _caches.get(obj.session_uid)
    if cache is None or cache.key != key:
        start = inputs_at(obj, prepared, scene, scene.frame_start, depsgraph)
        rest = jiggle.rest_state(prepared.model, start)
        cache = FrameCache(scene.frame_start, cast(State, rest), key)
        _caches[obj.session_uid] = cache

    def advance(state: State, f: int) -> State:
        p0 = inputs_at(obj, prepared, scene, f, depsgraph)
        p1 = inputs_at(obj, prepared, scene, f + 1, depsgraph)
        return cast(State, jiggle.step(prepared.model, cast(jiggle.ChainState, state), p0, p1, settings))

    state = cast(jiggle.ChainState, cache.state_at(frame, advance))
    if cache.first_bad_frame is not None and obj.session_uid not in _warned:
        _warned[obj.session_uid] = (f"{obj.name}: the jiggle became unstable at frame {cache.first_bad_frame} "
                                    "and was frozen there; raise Steps per Second or the damping")
        print(f"{PREFIX}:", _warned[obj.session_uid])
    pose = inputs_at(obj, prepared, scene, max(frame, scene.frame_start), depsgraph, refresh=False)
    return prepared, state, pose


def jiggle_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
              depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """What each jiggle bone's constraint applies at ``frame``: float64 [n, 3, 3] (the bake's
    frame when baked, else the simulation's)."""
    prepared = prepare(obj, scene)
    baked = jiggle_bake_store.frame(obj, prepared.names, frame)
    if baked is not None:
        return baked
    _, state, pose = state_at(obj, scene, frame, depsgraph)
    return jiggle.shown(prepared.model, state, pose)[0][:, :3, :3]


def write(obj: bpy.types.Object, names: tuple[str, ...], turns: np.ndarray) -> None:
    """Set each bone's target empty to its jiggle (float [n, 3, 3]); nothing non-finite is written
    and unchanged empties are left alone (no needless depsgraph updates)."""
    if not np.all(np.isfinite(turns)):
        return
    for name, turn in zip(names, turns):
        pb = obj.pose.bones.get(name)
        empty = jiggle_rig.target(pb) if pb is not None else None
        if empty is None:
            continue
        m = np.eye(4)
        m[:3, :3] = turn
        if not np.array_equal(np.array(empty.matrix_world, dtype=np.float32), m.astype(np.float32)):
            empty.matrix_world = Matrix(m.tolist())


def show_animation(obj: bpy.types.Object) -> None:
    """Every jiggle target back to the identity: the bones show their animation alone."""
    for pb in obj.pose.bones:
        empty = jiggle_rig.target(pb)
        if empty is not None and not np.array_equal(np.array(empty.matrix_world), np.eye(4)):
            empty.matrix_world = Matrix.Identity(4)


def update_object(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int, depsgraph: bpy.types.Depsgraph) -> None:
    """Show a rig at ``frame``: its bake when it has that frame, else the simulation; the animation
    alone while its Jiggle Bones setting is off."""
    if not rig_settings(obj).enabled:
        show_animation(obj)
        return
    prepared = prepare(obj, scene)
    write(obj, prepared.names, jiggle_at(obj, scene, frame, depsgraph))


def update_scene(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """Update every jiggle rig of the scene to its current frame; a broken one warns once (in the
    panel and the console), shows its animation alone and leaves the others alone."""
    for obj in rigs(scene):
        try:
            update_object(obj, scene, scene.frame_current, depsgraph)
            if not _unstable(obj):
                _warned.pop(obj.session_uid, None)
        except (TetRigInputError, jiggle_inputs.InputsUnavailable, ValueError) as exc:
            _prepared.pop(obj.session_uid, None)
            try:
                show_animation(obj)
            except (AttributeError, RuntimeError):
                pass
            if _warned.get(obj.session_uid) != str(exc):
                _warned[obj.session_uid] = str(exc)
                print(f"{PREFIX}:", exc)


def _unstable(obj: bpy.types.Object) -> bool:
    return "unstable" in _warned.get(obj.session_uid, "")


def current_fingerprint(obj: bpy.types.Object, scene: bpy.types.Scene) -> str | None:
    """The fingerprint a bake made now would have, or ``None`` when the rig cannot be simulated."""
    try:
        return fingerprint(motion_key(obj, scene, prepare(obj, scene)))
    except (TetRigInputError, ValueError):
        return None
