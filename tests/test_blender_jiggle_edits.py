"""Jiggle rigs edited after they were set up, in real Blender (the bpy module): bones added,
deleted, renamed or duplicated (issue 23, item 2), Free Bake giving every channel back (item 9),
and settings a script changes showing at once (item 11)."""

from __future__ import annotations

import numpy as np
import pytest
from jiggle_blender import make_chain_rig


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    scene.frame_start, scene.frame_end = 1, 48
    return _bpy


def tails(obj) -> dict[str, np.ndarray]:
    """World-space tail of every bone as Blender shows it, by name."""
    import bpy

    ev = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    m = np.array(ev.matrix_world)
    return {pb.name: m[:3, :3] @ np.array(pb.tail) + m[:3, 3] for pb in ev.pose.bones}


def play(bpy, obj, frames) -> dict[str, np.ndarray]:
    for f in frames:
        bpy.context.scene.frame_set(f)
    return tails(obj)


def from_scratch(bpy, obj) -> dict[str, np.ndarray]:
    """The current frame computed anew: no model, no cache, no recorded inputs."""
    from tetrig.runtime import scene as driver

    driver.free()
    sc = bpy.context.scene
    sc.frame_set(sc.frame_current)
    return tails(obj)


def edit(bpy, obj):
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    return obj.data.edit_bones


def assert_same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(a[name], b[name], atol=1e-6, err_msg=name)


def test_added_deleted_and_renamed_bones_are_picked_up_at_the_next_frame(bpy, addon, capfd):
    from tetrig.runtime import scene as driver

    obj = make_chain_rig()
    play(bpy, obj, range(1, 11))
    # a bone extruded at the tip of the chain, its Jiggle box ticked: before, every frame raised
    # (the recorded inputs of frames 1-10 had a row for 5 bones, the model 6)
    bones = edit(bpy, obj)
    tip = bones.new("Chain.05")
    tip.head, tip.tail = (0, 0, 1.3), (0, 0, 1.5)
    tip.parent, tip.use_connect = bones["Chain.04"], True
    bpy.ops.object.mode_set(mode="OBJECT")
    obj.pose.bones["Chain.05"].tetrig_jiggle.enabled = True
    shown = play(bpy, obj, range(11, 15))
    assert driver.status(obj) == ""
    assert "TetRig Jiggle" in obj.pose.bones["Chain.05"].constraints
    assert np.linalg.norm(shown["Chain.05"] - shown["Chain.04"]) == pytest.approx(0.2, abs=1e-5)
    assert abs(shown["Chain.05"][0] - shown["Root"][0]) > 0.05  # it swings: it lags the moving root
    assert_same(shown, from_scratch(bpy, obj))  # what a fresh start shows at frame 14
    # a bone deleted from the middle (before: "operands could not be broadcast together ... (6,4) (5,4)")
    bones = edit(bpy, obj)
    bones.remove(bones["Chain.02"])
    bpy.ops.object.mode_set(mode="OBJECT")
    shown = play(bpy, obj, range(15, 18))
    assert driver.status(obj) == "" and "Chain.02" not in shown
    assert_same(shown, from_scratch(bpy, obj))
    # a bone renamed
    obj.pose.bones["Chain.01"].name = "Renamed"
    shown = play(bpy, obj, range(18, 21))
    assert driver.status(obj) == "" and "Renamed" in shown
    assert_same(shown, from_scratch(bpy, obj))
    assert "Traceback" not in capfd.readouterr().err


def test_a_duplicated_bone_sharing_its_jiggle_target_asks_for_update_rig(bpy, addon, capfd):
    """Duplicating a bone in Edit Mode copies its constraints: the copy's jiggle would write the
    same target empty as the original's. The panel says so, with Update Jiggle Rig beside it."""
    from tetrig.runtime import scene as driver

    obj = make_chain_rig()
    play(bpy, obj, range(1, 6))
    bones = edit(bpy, obj)
    copy = bones.new("Chain.04.001")
    copy.head, copy.tail = (0.1, 0, 1.1), (0.1, 0, 1.3)
    copy.parent = bones["Chain.03"]
    bpy.ops.object.mode_set(mode="OBJECT")
    pb, original = obj.pose.bones["Chain.04.001"], obj.pose.bones["Chain.04"]
    c = pb.constraints.new("COPY_TRANSFORMS")  # as Blender's bone duplicate leaves it
    c.name, c.target = "TetRig Jiggle", original.constraints["TetRig Jiggle"].target
    from tetrig.runtime.common import hooks
    from tetrig.runtime import scene as scene_driver

    hooks.register_settings_hook(None)  # copied with the bone: no update callback runs
    try:
        pb.tetrig_jiggle.enabled = True
    finally:
        hooks.register_settings_hook(scene_driver.settings_changed)
    play(bpy, obj, range(6, 8))
    assert "shares its jiggle target with Chain.04" in driver.status(obj)
    assert "Update Jiggle Rig" in driver.status(obj)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_update_rig() == {"FINISHED"}
    assert pb.constraints["TetRig Jiggle"].target != original.constraints["TetRig Jiggle"].target
    shown = play(bpy, obj, range(8, 10))
    assert driver.status(obj) == ""
    assert_same(shown, from_scratch(bpy, obj))
    assert "Traceback" not in capfd.readouterr().err


def channels(obj) -> dict[str, tuple]:
    """Every pose bone's own channels (what Bake to Action keys and sets)."""
    return {pb.name: (tuple(pb.rotation_quaternion), tuple(pb.rotation_euler), tuple(pb.rotation_axis_angle),
                      tuple(pb.scale), tuple(pb.location)) for pb in obj.pose.bones}


def test_free_bake_gives_every_channel_back_and_a_replay_equals_the_first_play(bpy, addon):
    """A 5-bone chain whose action keys only the root: Bake to Action keys and sets the chain's
    rotations; Free Bake sets them back (before: up to 0.22 off, the replay 22.8 cm off at the tip)."""
    obj = make_chain_rig()
    first = {f: tails(obj) for f in range(1, 31) if not bpy.context.scene.frame_set(f)}
    before = channels(obj)  # at frame 30, where the bake leaves the scene
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_bake_action() == {"FINISHED"}
    assert channels(obj) != before  # the bake set the chain's rotations (the last frame's)
    assert bpy.ops.tetrig.jiggle_free_bake() == {"FINISHED"}
    assert channels(obj) == before  # bit for bit
    replay = {f: tails(obj) for f in range(1, 31) if not bpy.context.scene.frame_set(f)}
    for f in first:
        assert_same(replay[f], first[f])
    # and again: each Free Bake gives back what its bake found
    assert bpy.ops.tetrig.jiggle_bake_action() == {"FINISHED"}
    assert bpy.ops.tetrig.jiggle_free_bake() == {"FINISHED"}
    assert channels(obj) == before and "_channels_before_bake" not in obj.tetrig_jiggle.keys()


def muted_tails(bpy, obj) -> dict[str, np.ndarray]:
    """The bones as the animation alone puts them (every jiggle constraint muted)."""
    for pb in obj.pose.bones:
        if "TetRig Jiggle" in pb.constraints:
            pb.constraints["TetRig Jiggle"].mute = True
    bpy.context.view_layer.update()
    out = tails(obj)
    for pb in obj.pose.bones:
        if "TetRig Jiggle" in pb.constraints:
            pb.constraints["TetRig Jiggle"].mute = False
    bpy.context.view_layer.update()
    return out


def test_settings_set_from_a_script_show_at_once(bpy, addon):
    """Influence (not keyed) and the other settings a script may set show at the next depsgraph
    update, as a keyed value shows at the next frame (before: stale until something else updated)."""
    obj = make_chain_rig()
    scene = bpy.context.scene
    play(bpy, obj, range(1, 13))
    animation = muted_tails(bpy, obj)
    full = tails(obj)
    tip = "Chain.04"
    assert np.linalg.norm(full[tip] - animation[tip]) > 0.05  # the jiggle shows
    # what a keyed influence of 0.3 shows at frame 12
    settings = obj.tetrig_jiggle
    settings.influence = 0.3
    settings.keyframe_insert("influence", frame=12)
    scene.frame_set(11)
    keyed = play(bpy, obj, [12])
    settings.keyframe_delete("influence", frame=12)
    settings.influence = 1.0
    bpy.context.view_layer.update()
    assert_same(tails(obj), full)
    # the same 0.3, set by a script: shown at once, as keyed
    settings.influence = 0.3
    bpy.context.view_layer.update()
    assert_same(tails(obj), keyed)
    settings.influence = 0.0
    bpy.context.view_layer.update()
    assert_same(tails(obj), animation)
    settings.influence = 1.0
    # Jiggle Bones off and on
    settings.enabled = False
    bpy.context.view_layer.update()
    assert_same(tails(obj), animation)
    settings.enabled = True
    bpy.context.view_layer.update()
    assert_same(tails(obj), full)
    # a bone's stiffness, and the steps: frame 12 simulated again with them, what a fresh start shows
    obj.pose.bones[tip].tetrig_jiggle.stiffness *= 4.0
    settings.steps_per_second = 480.0
    bpy.context.view_layer.update()
    changed = tails(obj)
    assert np.linalg.norm(changed[tip] - full[tip]) > 1e-3
    assert_same(changed, from_scratch(bpy, obj))
