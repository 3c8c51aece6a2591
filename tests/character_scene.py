"""The test character (tests/test_blender_characters.py, docs/screenshot_character_setup.py): a
cylinder body skinned to a three-bone rig. Only bpy and NumPy, so the real Blender's screenshot
script imports it too."""

from __future__ import annotations

import math

import numpy as np


RINGS = 11  # rings of the body along its height (2 m)
SIDES = 24


def body(bpy, name: str = "Body"):
    """A closed cylinder 2 m tall, radius 0.4 m, along +z from the origin: returns (object, belly
    vertex indices (the +y side), back indices (-y side, the vertex group "Spine")); groups
    Bone0-2 weight the vertices by height."""
    angles = np.linspace(0.0, 2.0 * math.pi, SIDES, endpoint=False)
    verts = [(0.4 * math.cos(a), 0.4 * math.sin(a), 2.0 * r / (RINGS - 1)) for r in range(RINGS) for a in angles]
    faces = [(r * SIDES + s, r * SIDES + (s + 1) % SIDES, (r + 1) * SIDES + (s + 1) % SIDES, (r + 1) * SIDES + s)
             for r in range(RINGS - 1) for s in range(SIDES)]
    faces += [tuple(reversed(range(SIDES))), tuple((RINGS - 1) * SIDES + s for s in range(SIDES))]
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(verts, [], faces)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    co = np.array(verts)
    belly = np.flatnonzero(co[:, 1] > 0.1)
    spine = np.flatnonzero(co[:, 1] < -0.2)
    obj.vertex_groups.new(name="Spine").add([int(i) for i in spine], 1.0, "REPLACE")
    for b, (lo, hi) in enumerate([(-1.0, 0.7), (0.7, 1.4), (1.4, 3.0)]):
        group = obj.vertex_groups.new(name=f"Bone{b}")
        for i in np.flatnonzero((co[:, 2] >= lo) & (co[:, 2] < hi)):
            group.add([int(i)], 1.0, "REPLACE")
    return obj, belly, spine


def armature(bpy):
    """Three bones up the z axis (0-0.7-1.4-2.0 m), each the parent of the next."""
    data = bpy.data.armatures.new("Rig")
    arm = bpy.data.objects.new("Rig", data)
    bpy.context.scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    parent = None
    for b, (lo, hi) in enumerate([(0.0, 0.7), (0.7, 1.4), (1.4, 2.0)]):
        bone = data.edit_bones.new(f"Bone{b}")
        bone.head, bone.tail = (0.0, 0.0, lo), (0.0, 0.0, hi)
        if parent is not None:
            bone.parent, bone.use_connect = parent, True
        parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    return arm


def walk(arm) -> None:
    """Keyframes: the root bone walks 1.5 m along +x over frames 1-13 (its x axis is the world's)
    while the middle bone swings 0.25 rad and back; then it stands."""
    root, middle = arm.pose.bones["Bone0"], arm.pose.bones["Bone1"]
    middle.rotation_mode = "XYZ"
    for frame, x, swing in [(1, 0.0, 0.0), (7, 0.75, 0.25), (13, 1.5, 0.0)]:
        root.location = (x, 0.0, 0.0)
        root.keyframe_insert("location", frame=frame)
        middle.rotation_euler = (0.0, swing, 0.0)
        middle.keyframe_insert("rotation_euler", frame=frame)


def soft_belly(obj) -> None:
    """TetRig settings of the character: its back pinned, soft flesh (5e4 Pa, damping 3/s), no
    ground."""
    s = obj.tetrig
    s.resolution, s.pin_group, s.use_ground = 12, "Spine", False
    s.youngs_modulus, s.damping = 5e4, 3.0
