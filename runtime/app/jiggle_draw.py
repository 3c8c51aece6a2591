"""The viewport draws the collision sphere of each selected jiggle bone with a collision radius:
three circles around its tail (a ``gpu`` draw handler of the 3D viewport, in world space)."""

from __future__ import annotations

import math

import bpy
import numpy as np

from . import viewport_draw
from ..jiggle.properties import bone_settings

SEGMENTS = 32
COLOR = (1.0, 0.55, 0.1, 1.0)


def _circles(center: np.ndarray, radius: float) -> np.ndarray:
    """Line-segment endpoints of three great circles: float32 [3·2·SEGMENTS, 3]."""
    a = np.linspace(0.0, 2.0 * math.pi, SEGMENTS + 1)
    ring = np.stack([np.cos(a), np.sin(a)], axis=1) * radius
    out = []
    for i, j in ((0, 1), (1, 2), (0, 2)):
        pts = np.zeros((SEGMENTS + 1, 3))
        pts[:, i], pts[:, j] = ring[:, 0], ring[:, 1]
        out.append(np.repeat(pts, 2, axis=0)[1:-1])
    return (np.concatenate(out) + center).astype(np.float32)


def selected(pb: bpy.types.PoseBone) -> bool:
    """Whether a pose bone is selected (Blender 5.0 moved ``select`` from ``Bone`` to ``PoseBone``)."""
    if "select" in pb.bl_rna.properties:
        return bool(getattr(pb, "select"))
    return bool(getattr(pb.bone, "select"))


def segments(context: bpy.types.Context) -> np.ndarray:
    """What to draw: the collision spheres of the active armature's selected jiggle bones with a
    radius, as line-segment endpoints float32 [k, 3] in world space (Blender units)."""
    obj = context.active_object
    if obj is None or obj.type != "ARMATURE" or obj.pose is None:
        return np.zeros((0, 3), dtype=np.float32)
    world = np.array(obj.matrix_world)
    parts = []
    for pb in obj.pose.bones:
        s = bone_settings(pb)
        if s.enabled and s.collision_radius > 0.0 and selected(pb):
            tail = world[:3, :3] @ np.array(pb.tail) + world[:3, 3]
            parts.append(_circles(tail, s.collision_radius))
    return np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.float32)


def draw() -> None:
    """The draw handler (POST_VIEW)."""
    points = segments(bpy.context)
    if not len(points):
        return
    import gpu
    from gpu_extras.batch import batch_for_shader
    shader = gpu.shader.from_builtin("UNIFORM_COLOR")
    batch = batch_for_shader(shader, "LINES", {"pos": points.tolist()})
    shader.bind()
    shader.uniform_float("color", COLOR)
    batch.draw(shader)


HANDLER = viewport_draw.DrawHandler(draw)
register = HANDLER.register
unregister = HANDLER.unregister
