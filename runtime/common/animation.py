"""Time and animation as TetRig reads them from a scene: the frame duration, whether an object's
transform is animated, and the pose a body rests in."""

from __future__ import annotations

import bpy
import numpy as np

from .properties import object_settings


def frame_dt(scene: bpy.types.Scene) -> float:
    """Duration of one frame [s]."""
    return scene.render.fps_base / scene.render.fps


def transform_animated(obj: bpy.types.Object) -> bool:
    """Whether the world matrix of ``obj`` can change with the frame: an action, drivers or
    constraints on the object or any parent. A static object's current matrix is its rest pose."""
    node: bpy.types.Object | None = obj
    while node is not None:
        anim = node.animation_data
        if node.constraints or (anim is not None and (anim.action is not None or len(anim.drivers))):
            return True
        node = node.parent
    return False


def rest_world_matrix(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """The object's world matrix at the start frame, float64 [4, 4]: the pose the simulation rests in.

    The body simulates in the start-frame pose, and the mesh shows the result in object space, so
    an animated transform carries the soft body along rigidly and never invalidates the frame
    cache (following the animation with inertia is the job of goals). The matrix is read from the
    depsgraph (right after a file load the original object's ``matrix_world`` is not computed yet).
    A static object's current matrix is its rest pose (moving it moves the rest pose); an animated
    one's is remembered in ``Object.tetrig.rest_matrix`` whenever the scene is at or before its
    start frame, so that later frames, reached in any order, use the same one.
    """
    current = np.array(obj.evaluated_get(depsgraph).matrix_world, dtype=np.float64)
    settings = object_settings(obj)
    scene = depsgraph.scene
    stored = np.array(settings.rest_matrix, dtype=np.float64).reshape(4, 4)
    at_start = scene is None or scene.frame_current <= scene.frame_start
    if at_start or not settings.has_rest_matrix or not transform_animated(obj):
        # compared as stored (float32): a matrix float32 cannot hold exactly (a location of 0.12)
        # was written again at every call, and each write re-evaluated the object and redrew the
        # viewport (a bake of the bunny waited 0.3 s for it after every step)
        if not settings.has_rest_matrix or not np.array_equal(stored, current.astype(np.float32)):
            settings.rest_matrix = current.ravel().tolist()
            settings.has_rest_matrix = True
        return current
    return stored


def recorded_rest_matrix(obj: bpy.types.Object) -> np.ndarray:
    """The start-frame pose as last recorded (``rest_world_matrix``), without a depsgraph: the
    stored one of an animated object, else its current matrix; float64 [4, 4]."""
    settings = object_settings(obj)
    if settings.has_rest_matrix and transform_animated(obj):
        return np.array(settings.rest_matrix, dtype=np.float64).reshape(4, 4)
    return np.array(obj.matrix_world, dtype=np.float64)
