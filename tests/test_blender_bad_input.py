"""Bad input in real Blender: refused with one clear message and no change, or handled."""

from __future__ import annotations

import numpy as np
import pytest
from blender_helpers import attribute_snapshot, evaluated_positions, rest_positions


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def test_shared_mesh_is_refused(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add()
    first = bpy.context.active_object
    second = first.copy()  # a linked duplicate: same mesh
    bpy.context.collection.objects.link(second)
    before = attribute_snapshot(first.data)
    with pytest.raises(RuntimeError, match="shared by 2 objects"):
        bpy.ops.tetrig.build_cage()
    assert attribute_snapshot(first.data).keys() == before.keys()
    assert len(bpy.data.objects) == 2 and len(first.modifiers) == 0


def test_flat_plane_is_thickened_and_simulates(bpy, addon):
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=8, y_subdivisions=8, size=2, location=(0, 0, 1))
    obj = bpy.context.active_object
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.context.scene.frame_set(6)
    moved = evaluated_positions(obj) - rest_positions(obj)
    assert np.all(np.isfinite(moved)) and moved[:, 2].max() < -0.05  # it falls


@pytest.mark.parametrize("scale", [(1e-4, 1e-4, 1e-4), (1e4, 1e4, 1e4), (-1.0, 1.0, 1.0), (2.0, 0.5, 1.0)])
def test_tiny_huge_negative_and_nonuniform_scale(bpy, addon, scale):
    bpy.ops.mesh.primitive_monkey_add()
    obj = bpy.context.active_object
    obj.scale = scale
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    sc = bpy.context.scene
    for f in range(1, 9):
        sc.frame_set(f)
    pos = evaluated_positions(obj)
    assert np.all(np.isfinite(pos))
    # free fall for 7 frames: world z drops by about ½·g·t², whatever the scale
    m = np.array(obj.matrix_world)
    drop = (rest_positions(obj) @ m[:3, :3].T - pos @ m[:3, :3].T)[:, 2].mean()
    t = 7 / 24
    assert drop == pytest.approx(0.5 * 9.81 * t * t, rel=0.1)
    from tetrig.runtime import scene as driver
    assert driver.status(obj) == ""


def test_deleting_the_cage_while_playing_is_reported_not_fatal(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add()
    obj = bpy.context.active_object
    bpy.ops.tetrig.build_cage()
    bpy.context.scene.frame_set(3)
    bpy.data.objects.remove(obj.tetrig.cage, do_unlink=True)
    bpy.context.scene.frame_set(4)
    from tetrig.runtime import scene as driver
    assert "cage object is gone" in driver.status(obj)
    assert np.array_equal(evaluated_positions(obj), rest_positions(obj))  # rest, not a stale frame


def test_deleting_the_source_while_playing_leaves_the_handler_working(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add()
    obj = bpy.context.active_object
    bpy.ops.tetrig.build_cage()
    bpy.ops.mesh.primitive_cube_add(location=(3, 0, 2))
    other = bpy.context.active_object
    bpy.ops.tetrig.build_cage()
    bpy.context.scene.frame_set(3)
    bpy.data.objects.remove(obj, do_unlink=True)
    bpy.context.scene.frame_set(6)  # the other soft body still simulates
    assert (evaluated_positions(other) - rest_positions(other))[:, 2].max() < -0.05


def test_mesh_with_shape_keys_and_armature(bpy, addon):
    bpy.ops.object.armature_add(location=(0, 0, 0))
    arm = bpy.context.active_object
    bpy.ops.mesh.primitive_monkey_add()
    obj = bpy.context.active_object
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="Key").value = 0.5
    mod = obj.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    # TetRig goes after the pose (shape keys, Armature): it simulates on top of the posed shape
    assert [m.name for m in obj.modifiers] == ["Armature", "TetRig"]
    bpy.context.scene.frame_set(5)
    assert np.all(np.isfinite(evaluated_positions(obj)))


def test_a_duplicate_never_destroys_the_original_cage(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add(location=(0, 0, 2))
    original = bpy.context.active_object
    bpy.ops.tetrig.build_cage()
    cage = original.tetrig.cage
    bpy.ops.object.duplicate()  # Shift+D: copies the object and its settings, cage pointer included
    copy = bpy.context.active_object
    assert copy != original and copy.tetrig.cage == cage
    bpy.context.scene.frame_set(4)
    from tetrig.runtime import scene as driver
    assert "shares its cage" in driver.status(copy)
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}  # the copy gets its own cage
    assert copy.tetrig.cage != cage and original.tetrig.cage == cage and cage.name in bpy.data.objects
    bpy.context.view_layer.objects.active = copy
    assert bpy.ops.tetrig.remove() == {"FINISHED"}
    assert cage.name in bpy.data.objects  # still the original's
    bpy.context.scene.frame_set(8)
    assert (evaluated_positions(original) - rest_positions(original))[:, 2].max() < -0.05


def test_an_animated_object_does_not_resimulate_every_frame(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add(location=(0, 0, 2))
    obj = bpy.context.active_object
    obj.keyframe_insert("location", frame=1)
    obj.location.x = 6.0
    obj.keyframe_insert("location", frame=48)
    bpy.ops.tetrig.build_cage()
    sc = bpy.context.scene
    from tetrig.tetrig_addon import solver
    calls = []
    real_step = solver.step
    solver.step = lambda *a, **k: calls.append(1) or real_step(*a, **k)
    try:
        for f in range(1, 25):
            sc.frame_set(f)
    finally:
        solver.step = real_step
    assert len(calls) == 23  # one step per new frame, not a replay from the start each time
    played = evaluated_positions(obj)
    from tetrig.runtime import scene as driver
    driver.free()
    sc.frame_set(24)  # a cold jump gives the same frame
    np.testing.assert_allclose(evaluated_positions(obj), played, atol=1e-6)


def test_baking_an_animated_object_is_not_reported_outdated(bpy, addon):
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, location=(0, 0, 2))
    obj = bpy.context.active_object
    obj.keyframe_insert("location", frame=1)
    obj.location.x = 3.0
    obj.keyframe_insert("location", frame=12)
    obj.tetrig.resolution = 4
    bpy.ops.tetrig.build_cage()
    sc = bpy.context.scene
    sc.frame_end = 12
    sc.frame_set(1)
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    from tetrig.runtime import bake
    for f in (1, 6, 12):
        sc.frame_set(f)
        assert not bake.status(obj, sc).outdated, f
