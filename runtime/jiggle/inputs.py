"""What a jiggle rig reads from the scene at a frame: each jiggle bone's animated frame (with its
jiggle taken back out), the armature's world matrix, the influence and the colliders, at any frame.

As for soft bodies, the scene driver records them per rig and frame (``common/frames``): a frame
not seen yet (a jump forward, a bake, a render) is read by setting the scene to it and back. When
the current frame reads differently from its record (``same``: an edited keyframe, a moved
collider, a deleted one), every record of that rig is dropped, so the frame cache starts over.

Reading a bone back: its final pose matrix is ``pre · T`` (``jiggle_rig``), and T is the matrix of
its target empty in the same depsgraph, so ``pre = final · T⁻¹`` exactly, whatever jiggle was shown
when the frame was read. Each bone's frame is passed to the engine relative to its nearest jiggle
ancestor's final frame (chain roots: world space in metres), which is what the engine composes
again with the simulated ancestor.
"""

from __future__ import annotations

from dataclasses import replace

import bpy
import numpy as np

from ...tetrig_addon import jiggle
from ...tetrig_addon.errors import TetRigInputError
from ...tetrig_addon.jiggle.model import MIN_BONE_LENGTH
from . import rig as jiggle_rig
from ..common import scene_inputs
from ..common.animation import transform_animated
from ..common.properties import ROLE_NONE, object_settings
from .properties import SHAPE_AUTO, SHAPE_CAPSULE, SHAPE_MESH, rig_settings

# Inputs of a frame that differ from its record by less than this (metres, or rotation-matrix
# entries) are the same: the record was read with another jiggle shown (float32 rounding).
SAME_TOLERANCE = 1e-5


def unit_world(obj_eval: bpy.types.Object, unit: float) -> np.ndarray:
    """The object's world matrix with lengths in metres: float64 [4, 4]."""
    world = np.array(obj_eval.matrix_world, dtype=np.float64)
    world[:3, :] *= unit
    return world


def _target_matrix(pb: bpy.types.PoseBone, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    c = jiggle_rig.constraint(pb)
    empty = getattr(c, "target", None) if c is not None else None
    if c is None or c.mute or empty is None:
        return np.eye(4)
    return np.array(empty.evaluated_get(depsgraph).matrix_world, dtype=np.float64)


def collider_objects(scene: bpy.types.Scene, obj: bpy.types.Object) -> list[bpy.types.Object]:
    """Meshes of the scene with Collision physics and empties with Jiggle Collider on (empties have
    no Collision physics in Blender); never TetRig's own objects (soft bodies, cages, targets)."""
    if not rig_settings(obj).use_colliders:
        return []
    found = []
    for o in scene.objects:
        if o.type not in {"MESH", "EMPTY"} or o == obj or jiggle_rig.is_target(o):
            continue
        if object_settings(o).role != ROLE_NONE:  # soft bodies and cages
            continue
        if o.type == "EMPTY":
            if rig_settings(o).use_as_collider:
                found.append(o)
            continue
        if scene_inputs.has_collision(o):
            found.append(o)
    return found


def _box(o_eval: bpy.types.Object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre [3], half extents [3] along the local axes, unit local axes [3, 3] as columns), world."""
    m = np.array(o_eval.matrix_world, dtype=np.float64)
    if o_eval.type == "EMPTY":
        size = o_eval.empty_display_size
        lo, hi = np.full(3, -size), np.full(3, size)
    else:
        corners = np.array([tuple(c) for c in o_eval.bound_box], dtype=np.float64)
        lo, hi = corners.min(axis=0), corners.max(axis=0)
    axes = m[:3, :3]
    scale = np.linalg.norm(axes, axis=0)
    center = m[:3, :3] @ ((lo + hi) / 2) + m[:3, 3]
    return center, (hi - lo) / 2 * scale, axes / np.maximum(scale, 1e-12)


def read_colliders(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                   unit: float) -> dict:
    """The colliders at the depsgraph's frame: {"spheres": [s, 4], "capsules": [c, 7], "meshes": (...)},
    metres. Each radius grows by the object's Thickness Outer."""
    spheres, capsules, meshes = [], [], []
    for o in collider_objects(scene, obj):
        shape = rig_settings(o).collider_shape
        o_eval = o.evaluated_get(depsgraph)
        pad = o.collision.thickness_outer if o.type == "MESH" and o.collision is not None else 0.0
        if shape == SHAPE_MESH or (shape == SHAPE_AUTO and o.type == "MESH"):
            if o.type == "MESH":
                found = scene_inputs.mesh_collider(o, depsgraph, unit)
                if found is not None:
                    meshes.append(found)
            continue
        center, half, axes = _box(o_eval)
        if shape == SHAPE_CAPSULE:
            long = int(np.argmax(half))
            radius = float(np.delete(half, long).max())
            reach = max(float(half[long]) - radius, 0.0)
            a, b = center - axes[:, long] * reach, center + axes[:, long] * reach
            capsules.append([*(a * unit), *(b * unit), (radius + pad) * unit])
        else:  # a sphere: AUTO on an empty, or SPHERE
            spheres.append([*(center * unit), (float(half.max()) + pad) * unit])
    return {"spheres": np.array(spheres, dtype=np.float64).reshape(-1, 4),
            "capsules": np.array(capsules, dtype=np.float64).reshape(-1, 7), "meshes": tuple(meshes)}


def read(obj: bpy.types.Object, bones: list[bpy.types.PoseBone], parents: np.ndarray,
         scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> jiggle.FramePose:
    """A rig's inputs as the depsgraph has them now.

    Args:
        bones: the jiggle bones (original data), parents first; parents: int [n], each one's
            nearest jiggle ancestor in ``bones`` or −1.

    Raises:
        TetRigInputError: a non-uniform or negative scale reached a jiggle bone.
    """
    unit = scene.unit_settings.scale_length
    obj_eval = obj.evaluated_get(depsgraph)
    world = unit_world(obj_eval, unit)
    finals = np.empty((len(bones), 4, 4))
    jiggles = np.empty((len(bones), 4, 4))
    for i, pb in enumerate(bones):
        finals[i] = np.array(obj_eval.pose.bones[pb.name].matrix, dtype=np.float64)
        jiggles[i] = _target_matrix(pb, depsgraph)
    axes = np.linalg.norm(finals[:, :3, :3], axis=1).min(axis=1)
    if np.any(axes * np.array([pb.bone.length for pb in bones]) < MIN_BONE_LENGTH):
        squashed = bones[int(np.argmin(axes))].name
        raise TetRigInputError(f"{obj.name}: the bone {squashed} has zero length at frame {scene.frame_current} "
                               "(a pose scale of 0 on it or a parent); give it a scale above 0")
    pre = finals @ np.linalg.inv(jiggles)
    local = np.empty_like(pre)
    roots = parents < 0
    local[roots] = world @ pre[roots]
    if np.any(~roots):
        local[~roots] = np.linalg.inv(finals[parents[~roots]]) @ pre[~roots]
    influence = float(rig_settings(obj_eval).influence)
    return jiggle.pose_from_matrices(local, world=world, influence=influence,
                                     **read_colliders(obj, scene, depsgraph, unit))


def same(a: jiggle.FramePose, b: jiggle.FramePose) -> bool:
    """Whether two readings of a frame are the same inputs of the simulation (within
    ``SAME_TOLERANCE``). The influence is not one: it only scales what is shown (``refreshed``)."""
    if (a.rotation.shape != b.rotation.shape or a.spheres.shape != b.spheres.shape
            or a.capsules.shape != b.capsules.shape or len(a.meshes) != len(b.meshes)):
        return False
    pairs = ((a.rotation * np.sign(a.rotation[:, :1] + 1e-300), b.rotation * np.sign(b.rotation[:, :1] + 1e-300)),
             (a.scale, b.scale), (a.translation, b.translation), (a.world, b.world),
             (a.spheres, b.spheres), (a.capsules, b.capsules))
    if any(np.abs(x - y).max(initial=0.0) > SAME_TOLERANCE for x, y in pairs):
        return False
    return all(m.vertices.shape == n.vertices.shape and np.array_equal(m.vertices, n.vertices)
               for m, n in zip(a.meshes, b.meshes))


def refreshed(known: jiggle.FramePose, current: jiggle.FramePose) -> jiggle.FramePose:
    """The record of a frame read again with the same inputs (``same``), with the influence just
    read: a changed, unkeyed Influence shows without simulating anything again."""
    return known if known.influence == current.influence else replace(known, influence=current.influence)


def animated(obj: bpy.types.Object, scene: bpy.types.Scene) -> bool:
    """Whether a rig's inputs can differ between frames: animation, drivers or constraints on the
    armature (object or bones other than the jiggle's own) or its parents, or a collider that moves.
    A rig where none of that is true reads one set of inputs for every frame."""
    anim = obj.animation_data
    if transform_animated(obj) or (anim is not None and (anim.action is not None or len(anim.drivers))):
        return True
    if any(c.name != jiggle_rig.CONSTRAINT_NAME for pb in obj.pose.bones for c in pb.constraints):
        return True
    return any(transform_animated(c) or any(m.type != "COLLISION" for m in c.modifiers)
               for c in collider_objects(scene, obj))
