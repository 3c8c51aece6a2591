"""Linked duplicates (Alt+D) and deletes (X) in real Blender (the bpy module): an Alt+D copy of a
soft body is another instance of it, simulated from where it stands (issue 23, item 1); deleting a
soft body takes its cage with it, and Ctrl+Z brings both back, as for a jiggle rig's targets (item 3)."""

from __future__ import annotations

import numpy as np
import pytest
from blender_helpers import ball, evaluated_positions, rest_positions, world


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    scene.frame_end = 40
    return _bpy


def select(bpy, *objects) -> None:
    bpy.ops.object.select_all(action="DESELECT")
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[0]


def alt_d(bpy, obj, offset):
    """Alt+D (Duplicate Linked) of ``obj`` moved by ``offset``, as the UI does it."""
    select(bpy, obj)
    bpy.ops.object.duplicate_move_linked(TRANSFORM_OT_translate={"value": offset})
    copy = bpy.context.active_object
    assert copy != obj and copy.data == obj.data  # one mesh: the binding is shared
    bpy.context.view_layer.update()  # the depsgraph update after the operator
    return copy


def lowest(obj) -> float:
    """The lowest vertex shown, world z [m]."""
    return float(world(obj, evaluated_positions(obj))[:, 2].min())


def play(bpy, last: int, first: int = 1) -> None:
    for f in range(first, last + 1):
        bpy.context.scene.frame_set(f)


def test_an_alt_d_copy_is_another_instance_that_falls_from_where_it_stands(bpy, addon):
    from tetrig.runtime import scene as driver
    from tetrig.runtime.common import mesh_io

    original = ball(bpy)  # 1 m up (its bottom at 0.5 m), ground on
    copy = alt_d(bpy, original, (2.0, 0.0, 1.0))  # 1 m higher, 2 m aside
    cage, own = original.tetrig.cage, copy.tetrig.cage
    assert own is not None and own != cage and own.tetrig.source == copy and own.parent == copy
    assert len(own.data.vertices) == len(cage.data.vertices) and own.data != cage.data
    assert copy.tetrig.offsets.tetrig.source == copy and original.tetrig.offsets.tetrig.source == original
    play(bpy, 6)
    # both fall, each from its own height: at frame 6 (0.21 s) neither is on the ground yet
    drop_original = 0.5 - lowest(original)
    drop_copy = 1.5 - lowest(copy)
    assert drop_original == pytest.approx(drop_copy, abs=1e-4) and drop_original > 0.15
    play(bpy, 40, 7)
    for obj in (original, copy):  # both on the ground at frame 40, and nothing in the panel
        assert -2e-3 < lowest(obj) < 0.02, obj.name
        assert driver.status(obj) == ""
    # the shared mesh keeps one binding, and its own offsets stay zero: each shows its own
    shared = mesh_io.read_attribute(original.data, "tetrig_offset", np.float32, 3)
    assert not shared.any()
    assert np.array_equal(rest_positions(original), rest_positions(copy))
    # each bakes on its own cage; playback of the bakes equals the live frames
    live = {o.name: world(o, evaluated_positions(o)) for o in (original, copy)}
    select(bpy, original)
    assert bpy.ops.tetrig.bake(all_soft_bodies=True) == {"FINISHED"}
    from tetrig.runtime.common import bake_store

    assert bake_store.source_bake(original) is not None and bake_store.source_bake(copy) is not None
    assert bake_store.holder(copy) == own
    driver.free()
    bpy.context.scene.frame_set(40)
    for obj in (original, copy):
        np.testing.assert_allclose(world(obj, evaluated_positions(obj)), live[obj.name], atol=1e-5)


def bottom_rows(bpy, path) -> tuple[int, int]:
    """The lowest image row (from the bottom) the left and the right half of a transparent render
    cover (alpha > 0.5)."""
    image = bpy.data.images.load(str(path))
    try:
        width, height = image.size
        pixels = np.empty(width * height * 4, np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    covered = pixels.reshape(height, width, 4)[:, :, 3] > 0.5  # row 0 is the bottom one
    half = width // 2
    return (int(np.flatnonzero(covered[:, :half].any(axis=1))[0]),
            int(np.flatnonzero(covered[:, half:].any(axis=1))[0]))


def test_both_instances_render_where_each_stands(bpy, addon, tmp_path):
    """F12 shows each instance with its own offsets: at frame 1 the copy (1 m higher) is about
    22 pixels higher in the picture (a camera 6 m away: 22.2 px per metre), at frame 40 both stand
    on the ground, on the same row."""
    scene = bpy.context.scene
    original = ball(bpy)
    alt_d(bpy, original, (2.0, 0.0, 1.0))
    bpy.ops.object.camera_add(location=(1.0, -6.0, 1.0), rotation=(1.5708, 0.0, 0.0))
    scene.camera = bpy.context.active_object
    bpy.ops.object.light_add(type="SUN", location=(0.0, 0.0, 5.0))
    scene.render.engine = "CYCLES"
    scene.cycles.samples, scene.cycles.use_denoising = 1, False
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 96, 72, 100
    scene.render.film_transparent = True
    scene.render.image_settings.file_format, scene.render.image_settings.color_mode = "PNG", "RGBA"
    rows = {}
    for frame in (1, 40):
        play(bpy, frame)
        scene.render.filepath = str(tmp_path / f"frame_{frame}.png")
        assert bpy.ops.render.render(write_still=True) == {"FINISHED"}
        rows[frame] = bottom_rows(bpy, tmp_path / f"frame_{frame}.png")
    left, right = rows[1]
    assert 18 <= right - left <= 26, rows
    left, right = rows[40]
    assert abs(right - left) <= 1 and left < rows[1][0] - 8, rows


def test_a_baked_original_keeps_playing_its_bake_after_alt_d(bpy, addon):
    """Before, the copy's failed frame wrote zeros into the shared mesh: the baked original froze."""
    original = ball(bpy)
    select(bpy, original)
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    bpy.context.scene.frame_set(20)
    baked = world(original, evaluated_positions(original))
    copy = alt_d(bpy, original, (2.0, 0.0, 0.0))
    bpy.context.scene.frame_set(19)
    bpy.context.scene.frame_set(20)
    np.testing.assert_allclose(world(original, evaluated_positions(original)), baked, atol=1e-6)
    # the copy is live (its cage has no bake) and, standing as high, falls as far
    np.testing.assert_allclose(world(copy, evaluated_positions(copy)) - [2.0, 0.0, 0.0], baked, atol=1e-4)


def test_rebuild_on_an_instance_rebuilds_every_instance(bpy, addon):
    original = ball(bpy)
    copy = alt_d(bpy, original, (2.0, 0.0, 0.0))
    points = len(original.tetrig.cage.data.vertices)
    copy.tetrig.resolution = original.tetrig.resolution = 6
    select(bpy, copy)
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}  # before: "mesh is shared by 2 objects"
    finer = len(copy.tetrig.cage.data.vertices)
    assert finer > points and len(original.tetrig.cage.data.vertices) == finer
    assert original.tetrig.cage != copy.tetrig.cage and original.tetrig.bind_id == copy.tetrig.bind_id
    play(bpy, 8)
    from tetrig.runtime import scene as driver

    for obj in (original, copy):
        assert driver.status(obj) == "" and 0.5 - lowest(obj) > 0.05
    # Remove Soft Body on one instance leaves the other one simulating, with its binding
    select(bpy, copy)
    assert bpy.ops.tetrig.remove() == {"FINISHED"}
    assert np.array_equal(evaluated_positions(copy), rest_positions(copy))
    play(bpy, 12, 9)
    assert driver.status(original) == "" and 0.5 - lowest(original) > 0.2


def objects(bpy) -> set[str]:
    return {o.name for o in bpy.data.objects}


def delete(bpy, *targets) -> None:
    """X in the viewport: the operator and its undo step, then the depsgraph update that follows
    them (the bpy module has no event loop to push the operator's undo step: pushed by hand)."""
    select(bpy, *targets)
    bpy.ops.object.delete()
    bpy.ops.ed.undo_push(message="Delete")
    bpy.context.view_layer.update()


def test_deleting_a_soft_body_deletes_its_cage_and_undo_brings_both_back(bpy, addon):
    obj = ball(bpy)
    play(bpy, 5)
    before = objects(bpy)
    assert before == {"Ball", "Ball_TetRigCage"}
    bpy.ops.ed.undo_push(message="before the delete")
    delete(bpy, obj)
    assert objects(bpy) == set()  # before: Ball_TetRigCage stayed, parented to nothing
    bpy.ops.ed.undo()
    assert objects(bpy) == before
    obj = bpy.data.objects["Ball"]
    assert obj.tetrig.cage == bpy.data.objects["Ball_TetRigCage"] and obj.tetrig.cage.parent == obj
    play(bpy, 8)  # and it simulates again
    from tetrig.runtime import scene as driver

    assert driver.status(obj) == "" and 0.5 - lowest(obj) > 0.05


def test_deleting_one_instance_leaves_the_other_and_undo_brings_it_back(bpy, addon):
    original = ball(bpy)
    copy = alt_d(bpy, original, (2.0, 0.0, 0.0))
    names = objects(bpy)
    assert names == {"Ball", "Ball_TetRigCage", "Ball_TetRigOffsets", "Ball.001", "Ball.001_TetRigCage",
                     "Ball.001_TetRigOffsets"}
    bpy.ops.ed.undo_push(message="before the delete")
    delete(bpy, original)
    assert objects(bpy) == {"Ball.001", "Ball.001_TetRigCage", "Ball.001_TetRigOffsets"}
    copy = bpy.data.objects["Ball.001"]
    play(bpy, 8)
    from tetrig.runtime import scene as driver

    assert driver.status(copy) == "" and 0.5 - lowest(copy) > 0.05
    bpy.ops.ed.undo()
    assert objects(bpy) == names


def test_deleting_an_armature_deletes_its_jiggle_targets_and_undo_brings_them_back(bpy, addon):
    from jiggle_blender import make_chain_rig

    rig = make_chain_rig()
    play(bpy, 3)
    before = objects(bpy)
    assert sum(name.endswith(".jiggle") for name in before) == 5
    bpy.ops.ed.undo_push(message="before the delete")
    delete(bpy, rig)
    assert objects(bpy) == set()
    bpy.ops.ed.undo()
    assert objects(bpy) == before
    rig = bpy.data.objects["Rig"]
    assert all(pb.constraints["TetRig Jiggle"].target is not None for pb in rig.pose.bones
               if pb.name.startswith("Chain"))
    # a bone deleted in Edit Mode: its target goes at the next change of the scene's objects
    bpy.context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    rig.data.edit_bones.remove(rig.data.edit_bones["Chain.04"])
    bpy.ops.object.mode_set(mode="OBJECT")
    from tetrig.runtime import scene as driver

    driver.objects_changed(bpy.context.scene)
    assert sum(name.endswith(".jiggle") for name in objects(bpy)) == 4
