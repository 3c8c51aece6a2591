"""Jiggle rigs in the scene driver: per-armature models, what a frame reads, steps and writes.

One pass per rig and frame, as for soft bodies: read the frame's inputs (``inputs``: each jiggle
bone's animated frame, the armature's world matrix, the colliders) → the state at F (the bake, the
frame cache, or steps from the latest cached frame) → write each bone's jiggle into its target
empty (``rig``). The state at frame F depends on the scene and F alone: the start frame is at rest,
and a jump, a scrub back, a bake, a batch run or a render give frame F the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import bpy
import numpy as np
from mathutils import Matrix

from ...tetrig_addon import jiggle
from ...tetrig_addon.body import Control
from ...tetrig_addon.colliders import clipped
from ...tetrig_addon.errors import TetRigInputError
from ...tetrig_addon.jiggle import RigBody, RigState
from ...tetrig_addon.fingerprint import fingerprint
from ..common import frames, scene_inputs, soft_surfaces
from ..common.animation import frame_dt
from . import bake_store, inputs, rig
from .properties import BONE_SETTINGS, bone_settings, rig_settings


@dataclass(frozen=True)
class Prepared:
    """A rig's model, built once per key, and the soft bodies it sees in this pass (``around``)."""

    key: tuple
    model: jiggle.ChainModel
    names: tuple[str, ...]
    parents: np.ndarray  # int64 [n], nearest jiggle ancestor or −1
    # the soft bodies its tails collide with (``soft_surfaces.Seen``), found again at every pass
    around: tuple = ()


def is_rig(obj: bpy.types.Object) -> bool:
    """Whether ``obj`` is an armature with at least one jiggle bone (Jiggle Bones on or off)."""
    return obj.type == "ARMATURE" and obj.pose is not None and any(bone_settings(pb).enabled for pb in obj.pose.bones)


def rigs(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """The scene's armatures with at least one jiggle bone (Jiggle Bones on or off)."""
    return [o for o in scene.objects if is_rig(o)]


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


def model_key(obj: bpy.types.Object, scene: bpy.types.Scene) -> tuple:
    """What the model is built from: the jiggle bones, their chains, lengths and settings."""
    bones = rig.jiggle_bones(obj)
    return (tuple((pb.name, getattr(rig.jiggle_parent(pb), "name", ""), pb.bone.length,
                   tuple(getattr(bone_settings(pb), n) for n in BONE_SETTINGS)) for pb in bones),
            scene.unit_settings.scale_length)


def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, cached: Prepared | None = None) -> Prepared:
    """The model of a rig: ``cached`` while its key holds, else built anew.

    Raises:
        TetRigInputError: the rig or a bone is refused (``rig.rig_problem``, zero length, a bad
            setting), or the rig is not set up.
    """
    problem = rig.rig_problem(obj) or rig.bone_problem(obj) or rig.setup_problem(obj)
    if problem:
        raise TetRigInputError(problem)
    key = model_key(obj, scene)
    if cached is not None and cached.key == key:
        return cached
    bones = rig.jiggle_bones(obj)
    index = {pb.name: i for i, pb in enumerate(bones)}
    parents = np.array([index[p.name] if (p := rig.jiggle_parent(pb)) is not None else -1
                        for pb in bones], dtype=np.int64)
    unit = scene.unit_settings.scale_length

    def column(name: str) -> np.ndarray:
        return np.array([getattr(bone_settings(pb), name) for pb in bones])

    model = jiggle.build_model([pb.name for pb in bones], parents, column_lengths(bones), column("stiffness"),
                               column("damping"), column("gravity_scale"), column("max_speed"),
                               column("angle_limit"), column("collision_radius") * unit,
                               column("stretch").astype(bool))
    return Prepared(key, model, tuple(pb.name for pb in bones), parents)


def column_lengths(bones: list[bpy.types.PoseBone]) -> np.ndarray:
    """Rest lengths of the bones in their own frames (Blender units), float64 [n]."""
    return np.array([pb.bone.length for pb in bones], dtype=np.float64)


def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared) -> tuple:
    """Everything the motion depends on that is saved in the .blend (a bake's fingerprint): with
    the soft bodies it sees, their names and fingerprints (a rig that sees none: as before they
    could be seen, so its bakes stay current)."""
    key = (prepared.key, sim_settings(obj, scene), scene.frame_start)
    if not prepared.around:
        return key
    return (*key, ("soft bodies", tuple((seen.name, seen.key) for seen in prepared.around)))


def sees_soft_bodies(obj: bpy.types.Object, prepared: Prepared) -> bool:
    """Whether the rig's tails can collide with soft bodies: Colliders on and a Collision Radius."""
    return bool(rig_settings(obj).use_colliders) and bool(np.any(prepared.model.radius > 0.0))


@dataclass(frozen=True)
class BakeStatus:
    info: bake_store.BakeInfo
    outdated: bool
    bones_changed: bool

    def describe(self) -> str:
        if self.bones_changed:
            return (f"Bake of other bones ({self.info.describe()}): bones were renamed, added or removed "
                    "since baking, so it is not played; bake again or free it")
        if self.outdated:
            return f"Bake outdated: playing the bake ({self.info.describe()}); bake again to see the changes"
        return f"Baked {self.info.describe()}"


def bake_status(obj: bpy.types.Object, scene: bpy.types.Scene) -> BakeStatus | None:
    """The rig's bake and whether it is outdated or made for other bones, or ``None``."""
    header = bake_store.info(obj)
    if header is None:
        return None
    names = tuple(pb.name for pb in rig.jiggle_bones(obj))
    return BakeStatus(header, current_fingerprint(obj, scene) != header.fingerprint,
                      names != header.bones)


class JiggleKind:
    """The jiggle rigs' ``frames.BodyKind``."""

    name = "jiggle"
    errors: tuple[type[Exception], ...] = (TetRigInputError, scene_inputs.InputsUnavailable, ValueError)
    keeps_warnings = False  # a rig that plays again clears its warning (not an unstable one)

    @staticmethod
    def owns(obj: bpy.types.Object) -> bool:
        return is_rig(obj)

    @staticmethod
    def objects(scene: bpy.types.Scene) -> list[bpy.types.Object]:
        return rigs(scene)

    @staticmethod
    def editing(obj: bpy.types.Object) -> bool:
        return False

    @staticmethod
    def objects_changed(scene: bpy.types.Scene) -> bool:
        """Objects were added or deleted: the target empties of deleted armatures (and bones) go
        (nothing to show again: returns ``False``)."""
        rig.tidy()
        return False

    @staticmethod
    def enabled(obj: bpy.types.Object) -> bool:
        return bool(rig_settings(obj).enabled)

    @staticmethod
    def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                slot: frames.Slot) -> Prepared:
        """The model (``prepare``) with the soft bodies the rig sees in this pass."""
        prepared = prepare(obj, scene, slot.prepared)
        around = tuple(soft_surfaces.seen(scene, obj, depsgraph)) if sees_soft_bodies(obj, prepared) else ()
        slot.prepared = replace(prepared, around=around) if around or prepared.around else prepared
        return slot.prepared

    @staticmethod
    def input_layout(prepared: Prepared) -> tuple:
        """What a frame's inputs are read for: the jiggle bones and their chains (a row per bone)."""
        return prepared.names, tuple(prepared.parents.tolist())

    @staticmethod
    def read(obj: bpy.types.Object, prepared: Prepared, scene: bpy.types.Scene,
             depsgraph: bpy.types.Depsgraph) -> jiggle.FramePose:
        return inputs.read(obj, [obj.pose.bones[name] for name in prepared.names], prepared.parents, scene,
                           depsgraph)

    @staticmethod
    def same(a: jiggle.FramePose, b: jiggle.FramePose) -> bool:
        return inputs.same(a, b)

    @staticmethod
    def refreshed(known: jiggle.FramePose, current: jiggle.FramePose) -> jiggle.FramePose:
        return inputs.refreshed(known, current)

    @staticmethod
    def inputs_animated(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared) -> bool:
        return inputs.animated(obj, scene)

    @staticmethod
    def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared) -> tuple:
        """``motion_key``, and what the soft bodies it sees depend on in this session (their
        records' versions): a change in a soft body's frames starts the rig's over."""
        key = motion_key(obj, scene, prepared)
        return (*key, tuple(seen.session for seen in prepared.around)) if prepared.around else key

    @staticmethod
    def body(prepared: Prepared, key: tuple) -> RigBody:
        return RigBody(prepared.model, key[1])

    @staticmethod
    def control(prepared: Prepared, key: tuple, begin: jiggle.FramePose, end: jiggle.FramePose) -> Control:
        settings = key[1]
        return Control(settings.frame_dt, settings.gravity, (begin, end))

    @staticmethod
    def among(prepared: Prepared, control: Control, state: RigState, frame: int) -> Control:
        """The control of the step to ``frame`` with the surfaces the soft bodies it sees show at
        ``frame`` (one-way: they do not feel the chains), those that can reach a tail in the step
        (``jiggle.reach``) only: a rig with nothing near steps exactly as without them."""
        if not prepared.around or control.goals is None:
            return control
        pose0, pose1 = control.goals
        lo, hi = jiggle.reach(prepared.model, state.chain, pose0, pose1, control.frame_dt)
        found = []
        for seen in prepared.around:
            surface = seen.surface(frame)
            if surface is not None and np.all(surface.bounds_min <= hi) and np.all(surface.bounds_max >= lo):
                collider = surface.collider()
                # built once around all the tails, not bone by bone as the levels ask
                clipped.around(collider, state.chain.positions, float(prepared.model.radius.max()))
                found.append(collider)
        return replace(control, colliders=(*control.colliders, *found)) if found else control

    @staticmethod
    def unstable(obj: bpy.types.Object, frame: int) -> str:
        return (f"{obj.name}: the jiggle became unstable at frame {frame} and was frozen there; raise Steps "
                "per Second or the damping")

    # What a frame shows, and writing it.

    @staticmethod
    def baked(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared, frame: int,
              pose: jiggle.FramePose, slot: frames.Slot) -> np.ndarray | None:
        return bake_store.frame(obj, prepared.names, frame)

    @staticmethod
    def shown(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared, state: RigState,
              pose: jiggle.FramePose) -> np.ndarray:
        """What each jiggle bone's constraint applies: float64 [n, 3, 3], aimed in the state's own
        pose with the influence of ``pose`` (the frame's record: its influence is the one read last,
        ``refreshed``, while the state keeps the one it was stepped with; the influence only scales
        what is shown)."""
        return jiggle.shown(prepared.model, state.chain, state.pose, influence=pose.influence)[0][:, :3, :3]

    @staticmethod
    def blend(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
        """What a subframe F + t shows: each bone's turn at F (``a``, float [n, 3, 3]) and at F + 1
        (``b``) interpolated: the rotation along the shortest arc (slerp), a Stretch bone's
        stretch linearly."""
        return blend_turns(a, b, t)

    @staticmethod
    def write(obj: bpy.types.Object, prepared: Prepared, shown: np.ndarray, depsgraph: bpy.types.Depsgraph) -> None:
        write(obj, prepared.names, shown)

    @staticmethod
    def show_rest(obj: bpy.types.Object) -> None:
        try:
            show_animation(obj)
        except (AttributeError, RuntimeError):  # a rig that is being removed
            pass

    @staticmethod
    def bake_status(obj: bpy.types.Object, scene: bpy.types.Scene, world: None = None) -> "BakeStatus | None":
        return bake_status(obj, scene)

    @staticmethod
    def render_message(obj: bpy.types.Object, scene: bpy.types.Scene, prefix: str) -> str:
        """What a render of the rig says about its bake."""
        rig_bake = bake_status(obj, scene)
        if rig_bake is None or rig_bake.bones_changed:
            return f"{prefix}: rendering the jiggle bones of {obj.name} live (not baked)"
        line = f"{prefix}: rendering the jiggle bones of {obj.name} from its bake ({rig_bake.info.describe()})"
        return line + ("; the bake is outdated" if rig_bake.outdated else "")


KIND = JiggleKind()


def blend_turns(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """Turns float [n, 3, 3] between ``a`` (t = 0) and ``b`` (t = 1): each split into its rotation
    and stretch (polar decomposition, turn = R·S), R slerped, S interpolated linearly."""
    out = np.empty_like(a)
    for i, (m0, m1) in enumerate(zip(a, b)):
        r0, s0 = _polar(m0)
        r1, s1 = _polar(m1)
        rotation = Matrix(r0.tolist()).to_quaternion().slerp(Matrix(r1.tolist()).to_quaternion(), t)
        out[i] = np.array(rotation.to_matrix()) @ ((1.0 - t) * s0 + t * s1)
    return out


def _polar(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(R, S) with m = R·S, R a rotation and S symmetric (``m``: float [3, 3])."""
    u, sigma, vt = np.linalg.svd(m)
    r = u @ vt
    if np.linalg.det(r) < 0.0:
        u[:, -1] *= -1.0
        sigma[-1] *= -1.0
        r = u @ vt
    return r, vt.T @ np.diag(sigma) @ vt


def write(obj: bpy.types.Object, names: tuple[str, ...], turns: np.ndarray) -> None:
    """Set each bone's target empty to its jiggle (float [n, 3, 3]); nothing non-finite is written
    and unchanged empties are left alone (no needless depsgraph updates)."""
    if not np.all(np.isfinite(turns)):
        return
    for name, turn in zip(names, turns):
        pb = obj.pose.bones.get(name)
        empty = rig.target(pb) if pb is not None else None
        if empty is None:
            continue
        m = np.eye(4)
        m[:3, :3] = turn
        if not np.array_equal(np.array(empty.matrix_world, dtype=np.float32), m.astype(np.float32)):
            empty.matrix_world = Matrix(m.tolist())


def show_animation(obj: bpy.types.Object) -> None:
    """Every jiggle target back to the identity: the bones show their animation alone."""
    for pb in obj.pose.bones:
        empty = rig.target(pb)
        if empty is not None and not np.array_equal(np.array(empty.matrix_world), np.eye(4)):
            empty.matrix_world = Matrix.Identity(4)


def state_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
             depsgraph: bpy.types.Depsgraph) -> tuple[Prepared, RigState, jiggle.FramePose]:
    """The simulated state of a rig at ``frame`` and that frame's inputs (bakes).

    Raises:
        TetRigInputError, scene_inputs.InputsUnavailable.
    """
    slot, state, pose = frames.state_at(KIND, obj, scene, frame, depsgraph)
    return slot.prepared, state, pose


def current_fingerprint(obj: bpy.types.Object, scene: bpy.types.Scene) -> str | None:
    """The fingerprint a bake made now would have, or ``None`` when the rig cannot be simulated."""
    try:
        found = frames.find(obj)
        prepared = prepare(obj, scene, found.prepared if found else None)
        if sees_soft_bodies(obj, prepared):  # with the soft bodies' settings now, not at the last frame
            prepared = replace(prepared, around=tuple(soft_surfaces.seen(scene, obj, None)))
        return fingerprint(motion_key(obj, scene, prepared))
    except (TetRigInputError, ValueError):
        return None
