"""Jiggle rigs for the Blender tests: armatures with chains, built with Blender's own data API."""

from __future__ import annotations

import numpy as np


def make_chain_rig(name: str = "Rig", bones: int = 5, length: float = 0.2, animate: bool = True,
                   frames: tuple[int, int] = (1, 48), sideways: float = 0.5, collider: bool = False):
    """An armature with a root bone (keyed to move sideways along x, then stop) and a chain of
    ``bones`` jiggle bones hanging off it along +z, set up with Apply to Chain's settings.

    Returns the armature object (active, in Object Mode)."""
    import bpy

    data = bpy.data.armatures.new(name)
    obj = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    bpy.ops.object.mode_set(mode="EDIT")
    root = data.edit_bones.new("Root")
    root.head, root.tail = (0, 0, 0), (0, 0, 0.3)
    parent = root
    for i in range(bones):
        b = data.edit_bones.new(f"Chain.{i:02d}")
        b.head = (0, 0, 0.3 + i * length)
        b.tail = (0, 0, 0.3 + (i + 1) * length)
        b.parent = parent
        b.use_connect = True
        parent = b
    bpy.ops.object.mode_set(mode="POSE")
    if animate:
        pb = obj.pose.bones["Root"]
        first, last = frames
        for frame, x in ((first, 0.0), (first + 10, sideways), (first + 20, sideways), (first + 30, 0.0)):
            pb.location = (x, 0.0, 0.0)
            pb.keyframe_insert("location", frame=frame)
    bpy.ops.object.mode_set(mode="OBJECT")
    for pb in obj.pose.bones:
        if pb.name.startswith("Chain"):
            s = pb.tetrig_jiggle
            s.stiffness = (2 * np.pi * 1.5) ** 2
            s.damping = 2.0
            s.enabled = True
    return obj


def armature_in_edit_mode(name: str):
    """A new armature object ``name`` in the scene, active, in Edit Mode (for its bones)."""
    import bpy

    obj = bpy.data.objects.new(name, bpy.data.armatures.new(name))
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    return obj


def bone_tails(obj) -> np.ndarray:
    """World-space tails of the chain bones as Blender shows them: float64 [n, 3]."""
    import bpy

    dg = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(dg)
    m = np.array(ev.matrix_world)
    tails = [np.array(pb.tail) for pb in ev.pose.bones if pb.name.startswith("Chain")]
    return np.array([m[:3, :3] @ t + m[:3, 3] for t in tails])


def bone_heads(obj) -> np.ndarray:
    import bpy

    dg = bpy.context.evaluated_depsgraph_get()
    ev = obj.evaluated_get(dg)
    m = np.array(ev.matrix_world)
    return np.array([m[:3, :3] @ np.array(pb.head) + m[:3, 3] for pb in ev.pose.bones if pb.name.startswith("Chain")])
