"""What a soft body reads from the rest of the scene at a frame: its own world matrix (the goals
follow it), the collision objects and, for a posed mesh, where its control points rest; and how
TetRig visits frames other than the current one to read them.

The state at frame F depends on these inputs at every frame from the start to F (the timeline
rule, ``tetrig_addon.timeline``). The driver (``frames``) records them per body and frame; frames not seen yet (a jump
forward, a bake, a batch run) are read by setting the scene to each of them and back
(``sample_frames``; the frame handler skips these changes). A body whose inputs cannot change
between frames reads one set for all frames and never samples.

Sampling changes the scene's frame, so it only runs in the main thread and never while a UI render
job runs (its thread reads the scene): such a render of frames nobody has played yet raises
``InputsUnavailable`` (play or bake first). Command-line renders (``blender -b -f N``) sample.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from typing import Callable, Iterator

import bpy
import numpy as np

from ...tetrig_addon import colliders as collision
from .animation import transform_animated
from .properties import ROLE_NONE, ROLE_SOURCE, object_settings


class InputsUnavailable(RuntimeError):
    """Inputs of an earlier frame are needed but cannot be sampled now; the message says why."""


@dataclass(frozen=True)
class FrameInputs:
    """One frame's inputs of one soft body.

    Attributes:
        world: float64 [4, 4], the object's evaluated world matrix (Blender units).
        colliders: the collision objects, world space, metres.
        fingerprint: bytes that change when any of it changes.
        collider_digest: bytes that change when the colliders change.
        posed: float64 [Q, 3], object space (Blender units): where the control points rest in
            this frame's pose of a posed mesh (``stack``, ``tetrig_addon.posing``); ``None`` for
            the others.
    """

    world: np.ndarray
    colliders: tuple[collision.Collider, ...]
    fingerprint: bytes
    collider_digest: bytes = b""
    posed: np.ndarray | None = None


# Hex digits of one frame's ``motion_digest``.
DIGEST_HEX = 32


def motion_digest(inputs: FrameInputs, follows: bool) -> str:
    """What the motion took from the scene at one frame, as ``DIGEST_HEX`` hex digits: the world
    matrix when the soft body follows its animation (otherwise it moves rigidly with it and the
    matrix does not change the motion) and the colliders. A bake stores one per frame."""
    digest = hashlib.blake2b(inputs.collider_digest, digest_size=DIGEST_HEX // 2)
    if follows:
        digest.update(inputs.world.round(12).tobytes())
    if inputs.posed is not None:
        digest.update(inputs.posed.round(9).tobytes())
    return digest.hexdigest()


_collider_cache: dict[bytes, collision.Collider] = {}
# Colliders kept for reuse across frames (a static collider is built once); oldest dropped first.
COLLIDER_CACHE_SIZE = 64
# Blender's cloth friction (0-80 in the UI) is Coulomb's μ in hundredths (collision.cc: pdef_cfrict·0.01).
COLLISION_FRICTION_SCALE = 0.01
_sampling = False


def sampling() -> bool:
    """Whether the scene's frame is being moved to sample inputs (the frame handler then waits)."""
    return _sampling


def forget_colliders() -> None:
    """Forget the colliders kept for reuse (a new file, an undo)."""
    _collider_cache.clear()


def has_collision(o: bpy.types.Object) -> bool:
    """Whether ``o`` has Collision physics turned on (a Collision modifier and its settings' Use)."""
    return o.collision is not None and o.collision.use and any(m.type == "COLLISION" for m in o.modifiers)


def collision_objects(scene: bpy.types.Scene, obj: bpy.types.Object) -> list[bpy.types.Object]:
    """Mesh objects of the scene with Collision physics turned on, other than TetRig soft bodies
    and cages: a soft body's shape at a frame depends on its own simulation, which reading another
    frame's inputs does not run, so soft bodies are never colliders; they touch each other by being
    stepped together (``runtime/common/touching``, their Soft Bodies setting)."""
    if not object_settings(obj).use_colliders:
        return []
    return [o for o in scene.objects
            if o.type == "MESH" and object_settings(o).role == ROLE_NONE and has_collision(o)]


def unused_collisions(scene: bpy.types.Scene, obj: bpy.types.Object) -> list[str]:
    """What the Collisions panel of ``obj`` says of the Collision modifiers TetRig does not use:
    one line for ``obj``'s own, one naming the other soft bodies that have one (``collision_objects``
    leaves them out: soft bodies touch each other only through their Soft Bodies setting, stepped
    together, issue 21). A Collision modifier is never ignored without a word."""
    lines = []
    if has_collision(obj):
        lines.append("Its Collision modifier is for Blender's Cloth and Soft Body; TetRig soft bodies touch "
                     "each other through Soft Bodies instead")
    others = sorted(o.name for o in scene.objects
                    if o is not obj and o.type == "MESH" and object_settings(o).role == ROLE_SOURCE
                    and has_collision(o))
    if others and object_settings(obj).use_colliders:
        names = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        lines.append(f"Collision on {names} not used as a collider: soft bodies touch each other only "
                     "through Soft Bodies")
    return lines


def inputs_animated(obj: bpy.types.Object, scene: bpy.types.Scene, follows: bool) -> bool:
    """Whether the inputs can differ between frames: the object's transform when the soft body
    follows it, or a collider's transform or deforming modifiers."""
    if follows and transform_animated(obj):
        return True
    return any(transform_animated(c) or any(m.type != "COLLISION" for m in c.modifiers)
               for c in collision_objects(scene, obj))


def _collider(c: bpy.types.Object, depsgraph: bpy.types.Depsgraph, unit: float) -> collision.Collider | None:
    evaluated = c.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        mesh.calc_loop_triangles()
        verts = np.empty(len(mesh.vertices) * 3)
        mesh.vertices.foreach_get("co", verts)
        tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
        mesh.loop_triangles.foreach_get("vertices", tris)
    finally:
        evaluated.to_mesh_clear()
    if tris.shape[0] == 0:
        return None
    m = np.array(evaluated.matrix_world, dtype=np.float64)
    world = (verts.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]) * unit
    settings = c.collision
    # Blender's collision settings have one friction coefficient, "Friction" of the Softbody & Cloth
    # panel, which Blender's cloth uses as Coulomb's μ = Friction / 100 (collision.cc): TetRig
    # reads it the same way, for sticking and for sliding.
    friction = settings.cloth_friction * COLLISION_FRICTION_SCALE
    params = np.array([settings.thickness_outer * unit, settings.thickness_inner * unit, friction])
    key = hashlib.blake2b(world.tobytes() + tris.tobytes() + params.tobytes(), digest_size=16).digest()
    cached = _collider_cache.get(key)
    if cached is None:
        cached = collision.mesh_collider(world, tris.reshape(-1, 3), thickness_outer=params[0],
                                         thickness_inner=params[1], static_friction=float(params[2]),
                                         kinetic_friction=float(params[2]))
        if len(_collider_cache) >= COLLIDER_CACHE_SIZE:
            _collider_cache.pop(next(iter(_collider_cache)))
        _collider_cache[key] = cached
    return cached


# Reads where a posed mesh's control points rest now (``runtime/cage``): (object, depsgraph) -> [Q, 3].
PoseReader = Callable[[bpy.types.Object, bpy.types.Depsgraph], np.ndarray]


def mesh_collider(c: bpy.types.Object, depsgraph: bpy.types.Depsgraph, unit: float) -> collision.Collider | None:
    """The collider of one mesh object with Collision physics as the depsgraph has it (world space,
    metres; built once per shape), or ``None`` for a mesh without triangles. Jiggle bones use it too."""
    return _collider(c, depsgraph, unit)


def read(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
         pose: PoseReader | None = None) -> FrameInputs:
    """The inputs as the depsgraph has them now (with the posed control points when ``pose``)."""
    unit = scene.unit_settings.scale_length
    world = np.array(obj.evaluated_get(depsgraph).matrix_world, dtype=np.float64)
    posed = None if pose is None else pose(obj, depsgraph)
    found = [_collider(c, depsgraph, unit) for c in collision_objects(scene, obj)]
    colliders = tuple(c for c in found if c is not None)
    collider_digest = hashlib.blake2b(digest_size=16)
    for c in colliders:
        collider_digest.update(c.vertices.tobytes())
        collider_digest.update(c.triangles.tobytes())
        collider_digest.update(np.array([c.thickness_outer, c.thickness_inner, c.static_friction,
                                         c.kinetic_friction]).tobytes())
    digest = hashlib.blake2b(world.round(12).tobytes() + collider_digest.digest(), digest_size=16)
    if posed is not None:
        digest.update(posed.round(9).tobytes())
    return FrameInputs(world, colliders, digest.digest(), collider_digest.digest(), posed)


def at_frames(scene: bpy.types.Scene, frames: list[int],
              read: Callable[[bpy.types.Depsgraph], np.ndarray]) -> list[np.ndarray]:
    """``read(depsgraph)`` at each of ``frames``, setting the scene to each and back (the frame
    handler waits meanwhile); for exports, in the main thread.

    Raises:
        InputsUnavailable: this is a render or another thread.
    """
    message = "the frames cannot be visited now (a render runs); try again after it"
    return [read(graph) for _, graph in sample_frames(scene, frames, message)]


def sample_frames(scene: bpy.types.Scene, frames: list[int], message: str) -> Iterator[tuple[int, bpy.types.Depsgraph]]:
    """Set the scene to each of ``frames`` in turn, yielding (frame, depsgraph) to read it, and back
    to where it was; the frame handler skips these changes (``sampling``). Soft bodies and jiggle
    rigs read their earlier frames this way.

    Raises:
        InputsUnavailable(message): not in the main thread, a UI render job runs (its thread is
            reading the scene), or already sampling.
    """
    global _sampling
    # A render from the command line (blender -b -f/-a) runs in the main thread and may move the
    # frame between its own evaluations; a UI render job's thread is reading the scene meanwhile.
    if (_sampling or threading.current_thread() is not threading.main_thread()
            or bpy.app.is_job_running("RENDER")):
        raise InputsUnavailable(message)
    frame0, subframe0 = scene.frame_current, scene.frame_subframe
    _sampling = True
    try:
        for f in frames:
            scene.frame_set(f)
            yield f, bpy.context.evaluated_depsgraph_get()
    finally:
        scene.frame_set(frame0, subframe=subframe0)
        _sampling = False
