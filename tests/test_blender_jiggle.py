"""Jiggle bones in Blender (real bpy module): set-up, timeline, bake, Bake to Action and glTF,
colliders, presets, the draw handler, the batch script and bad input."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from jiggle_blender import bone_heads, bone_tails, make_chain_rig

from conftest import REPO


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    scene.frame_start, scene.frame_end = 1, 48
    return _bpy


def _play(bpy, obj, frames) -> dict[int, np.ndarray]:
    out = {}
    for f in frames:
        bpy.context.scene.frame_set(f)
        out[f] = bone_tails(obj)
    return out


def _rest_tails(obj) -> np.ndarray:
    """The chain's tails as its animation alone puts them (jiggle muted)."""
    import bpy

    for pb in obj.pose.bones:
        c = pb.constraints.get("TetRig Jiggle")
        if c is not None:
            c.mute = True
    bpy.context.view_layer.update()
    tails = bone_tails(obj)
    for pb in obj.pose.bones:
        c = pb.constraints.get("TetRig Jiggle")
        if c is not None:
            c.mute = False
    bpy.context.view_layer.update()
    return tails


def test_setup_puts_the_jiggle_last_and_leaves_the_users_channels_alone(bpy, addon):
    obj = make_chain_rig()
    pb = obj.pose.bones["Chain.02"]
    c = pb.constraints["TetRig Jiggle"]
    assert c.type == "COPY_TRANSFORMS" and c.mix_mode == "AFTER_FULL" and c.target.hide_render
    assert "Root" in obj.pose.bones and not obj.pose.bones["Root"].constraints
    before = [tuple(p.rotation_quaternion) for p in obj.pose.bones]
    _play(bpy, obj, range(1, 20))
    assert [tuple(p.rotation_quaternion) for p in obj.pose.bones] == before  # channels never written
    # a constraint added later is flagged, and Update Jiggle Rig puts the jiggle last again
    own = pb.constraints.new("LIMIT_ROTATION")
    bpy.context.scene.frame_set(3)
    from tetrig.runtime import scene as driver

    assert "Update Jiggle Rig" in driver.status(obj)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_update_rig() == {"FINISHED"}
    assert pb.constraints[-1].name == "TetRig Jiggle" and pb.constraints[0] == own


def test_the_chain_swings_keeps_its_length_and_follows_a_moving_object(bpy, addon):
    obj = make_chain_rig()
    played = _play(bpy, obj, range(1, 49))
    bpy.context.scene.frame_set(15)
    rest = _rest_tails(obj)
    lag = np.linalg.norm(played[15] - rest, axis=1)
    assert lag[-1] > lag[2] > 0.01  # the tip lags more than the middle
    heads = bone_heads(obj)
    np.testing.assert_allclose(np.linalg.norm(played[15] - heads, axis=1), 0.2, atol=1e-6)
    # moving the armature object itself (no bone animation) swings the chain too
    still = make_chain_rig("Still", animate=False)
    still.location = (2.0, 0.0, 0.0)
    still.keyframe_insert("location", frame=1)
    still.location = (2.5, 0.0, 0.0)
    still.keyframe_insert("location", frame=8)
    moved = _play(bpy, still, range(1, 14))
    assert np.abs(moved[13][-1] - (moved[13][0] + np.array([0, 0, 0.8]))).max() > 0.01


def test_jump_scrub_and_play_give_the_same_frame(bpy, addon):
    from tetrig.runtime import scene as driver

    obj = make_chain_rig()
    played = _play(bpy, obj, range(1, 41))
    driver.free()
    bpy.context.scene.frame_set(37)  # a jump from frame 40, no cache
    assert np.abs(bone_tails(obj) - played[37]).max() < 1e-6
    bpy.context.scene.frame_set(12)  # a scrub back
    assert np.abs(bone_tails(obj) - played[12]).max() < 1e-6
    bpy.context.scene.frame_set(1)
    assert np.abs(bone_tails(obj) - _rest_tails(obj)).max() < 1e-6  # the start frame is at rest


def test_bake_equals_live_and_plays_after_reload(bpy, addon, tmp_path):
    from tetrig.runtime import scene as driver
    from tetrig.runtime.jiggle import bake as jiggle_bake

    obj = make_chain_rig()
    live = _play(bpy, obj, range(1, 49))
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_bake() == {"FINISHED"}
    state = jiggle_bake.status(obj, bpy.context.scene)
    assert state is not None and not state.outdated and state.info.frame_count == 48
    driver.free()
    baked = _play(bpy, obj, [30, 5, 48])
    for f in (30, 5, 48):
        assert np.abs(baked[f] - live[f]).max() < 1e-6
    path = str(tmp_path / "baked.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Rig"]
    calls = []
    from tetrig.tetrig_addon import jiggle
    original = jiggle.step
    jiggle.step = lambda *a, **k: calls.append(1) or original(*a, **k)
    try:
        reloaded = _play(bpy, obj, [33, 20])
    finally:
        jiggle.step = original
    assert not calls  # read from the bake, nothing simulated
    assert np.abs(reloaded[33] - live[33]).max() < 1e-6
    assert np.abs(reloaded[20] - live[20]).max() < 1e-6
    # a changed setting marks it outdated; it still plays as baked until baked again or freed
    obj.pose.bones["Chain.03"].tetrig_jiggle.damping = 9.0
    assert jiggle_bake.status(obj, bpy.context.scene).outdated
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_free_bake() == {"FINISHED"}
    assert jiggle_bake.status(obj, bpy.context.scene) is None


def test_bake_to_action_and_gltf_carry_the_motion(bpy, addon, tmp_path):
    obj = make_chain_rig()
    live = _play(bpy, obj, range(1, 49))
    original = obj.animation_data.action
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_bake_action() == {"FINISHED"}
    action = obj.animation_data.action
    assert action != original and action.name.endswith("_Jiggle") and not obj.tetrig_jiggle.enabled
    keyed = _play(bpy, obj, [14, 30])
    assert np.abs(keyed[14] - live[14]).max() < 1e-4  # the keys alone play the jiggle
    assert np.abs(keyed[30] - live[30]).max() < 1e-4
    path = str(tmp_path / "rig.glb")
    for o in bpy.context.scene.objects:
        o.select_set(o == obj)
    bpy.ops.export_scene.gltf(filepath=path, export_format="GLB", use_selection=True, export_animations=True,
                              export_animation_mode="ACTIVE_ACTIONS")
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.frame_start, bpy.context.scene.frame_end = 1, 48
    bpy.ops.import_scene.gltf(filepath=path)
    imported = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    fps_ratio = 1  # the exporter writes the scene's frames; the importer maps them back
    for f in (14, 30):
        bpy.context.scene.frame_set(f * fps_ratio)
        dg = bpy.context.evaluated_depsgraph_get()
        ev = imported.evaluated_get(dg)
        m = np.array(ev.matrix_world)
        heads = np.array([m[:3, :3] @ np.array(ev.pose.bones[f"Chain.{i:02d}"].head) + m[:3, 3]
                          for i in range(1, 5)])
        # glTF stores heads (joints): the head of bone i+1 is the tail of bone i
        assert np.abs(heads - live[f][:4]).max() < 1e-3, f
    assert np.abs(live[14][:4] - live[1][:4]).max() > 0.05  # and there was motion to carry
    # Free Bake brings the original action and the live jiggle back (in the original file)


def test_free_bake_after_bake_to_action_restores_the_animation(bpy, addon):
    obj = make_chain_rig()
    original = obj.animation_data.action
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_bake_action() == {"FINISHED"}
    assert bpy.ops.tetrig.jiggle_free_bake() == {"FINISHED"}
    assert obj.animation_data.action == original and obj.tetrig_jiggle.enabled
    assert not any(a.name.endswith("_Jiggle") for a in bpy.data.actions)


def _collider(bpy, kind: str):
    if kind == "sphere":
        empty = bpy.data.objects.new("Ball", None)
        empty.empty_display_type = "SPHERE"
        empty.empty_display_size = 0.15
        empty.location = (0.3, 0.0, 0.85)
        bpy.context.scene.collection.objects.link(empty)
        empty.tetrig_jiggle.use_as_collider = True  # empties have no Collision physics in Blender
        return empty
    else:
        bpy.ops.mesh.primitive_cylinder_add(radius=0.08, depth=1.0, location=(0.3, 0.0, 0.7),
                                            rotation=(math.pi / 2, 0.0, 0.0))
        obj = bpy.context.active_object
        obj.tetrig_jiggle.collider_shape = "CAPSULE"
        obj.modifiers.new("Collision", "COLLISION")
        obj.collision.thickness_outer = 0.0
    return obj


@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_blender_colliders_keep_tails_out(bpy, addon, kind):
    collider = _collider(bpy, kind)
    obj = make_chain_rig()
    for pb in obj.pose.bones:
        pb.tetrig_jiggle.collision_radius = 0.03
    played = _play(bpy, obj, range(1, 49))
    tails = np.array(list(played.values()))
    if kind == "sphere":
        gap = np.linalg.norm(tails - np.array([0.3, 0.0, 0.85]), axis=2) - 0.15 - 0.03
    else:
        a, b = np.array([0.3, -0.42, 0.7]), np.array([0.3, 0.42, 0.7])  # the capsule's core
        t = np.clip(np.einsum("fni,i->fn", tails - a, b - a) / np.dot(b - a, b - a), 0, 1)
        gap = np.linalg.norm(tails - (a + t[..., None] * (b - a)), axis=2) - 0.08 - 0.03
    assert gap.min() > -1e-6
    assert gap.min() < 0.02  # the chain did reach it
    # a deleted collider: nothing breaks, the chain moves on without it
    bpy.data.objects.remove(collider)
    from tetrig.runtime import scene as driver

    bpy.context.scene.frame_set(20)
    assert driver.status(obj) == ""


def test_presets_critical_and_apply_to_chain(bpy, addon, tmp_path, monkeypatch):
    from tetrig.runtime.app import presets

    user_scripts = tmp_path / "scripts"  # stands in for the user's scripts folder

    def user_resource(kind, path="", create=False):
        folder = user_scripts / path
        folder.mkdir(parents=True, exist_ok=True)
        return str(folder)

    monkeypatch.setattr(bpy.utils, "user_resource", user_resource)

    obj = make_chain_rig()
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="POSE")
    root = obj.pose.bones["Chain.00"]
    obj.data.bones.active = root.bone
    names = sorted(os.path.basename(p)[:-3] for p in presets.shipped(presets.JIGGLE_SHIPPED_DIR))
    assert names == ["Ears", "Hair", "Soft", "Stiff", "Tail"]
    bpy.ops.script.execute_preset(filepath=os.path.join(presets.JIGGLE_SHIPPED_DIR, "Ears.py"),
                                  menu_idname="TETRIG_MT_jiggle_presets")
    s = root.tetrig_jiggle
    assert math.sqrt(s.stiffness) / (2 * math.pi) == pytest.approx(3.0, rel=1e-4)
    assert bpy.ops.tetrig.jiggle_critical_damping() == {"FINISHED"}
    assert s.damping == pytest.approx(2 * math.sqrt(s.stiffness), rel=1e-6)
    assert bpy.ops.tetrig.jiggle_apply_chain() == {"FINISHED"}
    for i in range(1, 5):
        t = obj.pose.bones[f"Chain.{i:02d}"].tetrig_jiggle
        assert t.enabled and t.stiffness == pytest.approx(s.stiffness) and t.damping == pytest.approx(s.damping)
    assert bpy.ops.tetrig.jiggle_preset_add(name="Mine") == {"FINISHED"}
    written = user_scripts / "presets" / "tetrig" / "jiggle" / "Mine.py"
    assert f"settings.damping = {s.damping}" in written.read_text()
    assert bpy.ops.tetrig.jiggle_preset_add(name="Ears", remove_name=True) == {"CANCELLED"}
    assert os.path.isfile(os.path.join(presets.JIGGLE_SHIPPED_DIR, "Ears.py"))


def test_draw_handler_shows_the_collision_radius_of_selected_bones(bpy, addon):
    from types import SimpleNamespace

    from tetrig.runtime.app import jiggle_draw

    obj = make_chain_rig()
    pb = obj.pose.bones["Chain.04"]
    pb.tetrig_jiggle.collision_radius = 0.05
    from tetrig.runtime.app.jiggle_draw import selected

    def select(name: str, value: bool) -> None:
        target = obj.pose.bones[name] if "select" in obj.pose.bones[name].bl_rna.properties else obj.data.bones[name]
        target.select = value

    for b in obj.pose.bones:
        select(b.name, b.name == "Chain.04")
    assert selected(pb)
    points = jiggle_draw.segments(SimpleNamespace(active_object=obj))
    assert len(points) == 3 * 2 * jiggle_draw.SEGMENTS
    tail = np.array(obj.matrix_world) @ np.append(np.array(pb.tail), 1.0)
    np.testing.assert_allclose(np.linalg.norm(points - tail[:3], axis=1), 0.05, rtol=1e-5)
    select("Chain.04", False)
    assert len(jiggle_draw.segments(SimpleNamespace(active_object=obj))) == 0


def test_the_panel_draws_for_an_armature_and_a_collider(bpy, addon):
    from types import SimpleNamespace

    from tetrig.panels.jiggle import TETRIG_PT_jiggle

    obj = make_chain_rig()
    assert TETRIG_PT_jiggle.poll(SimpleNamespace(active_object=obj))
    mesh = bpy.data.objects.new("Plain", bpy.data.meshes.new("Plain"))
    assert not TETRIG_PT_jiggle.poll(SimpleNamespace(active_object=mesh))


def test_bad_input_is_refused_with_a_message_and_nothing_lost(bpy, addon, tmp_path):
    from tetrig.runtime import scene as driver
    from tetrig.runtime.jiggle import rig as jiggle_rig

    # a non-armature object
    bpy.ops.mesh.primitive_cube_add()
    cube = bpy.context.active_object
    with pytest.raises(RuntimeError, match="Cube is a mesh, not an armature"):
        bpy.ops.tetrig.jiggle_update_rig()
    assert "not an armature" in jiggle_rig.rig_problem(cube)
    # negative and non-uniform scale: refused, settings kept, animation shown
    obj = make_chain_rig()
    settings = [pb.tetrig_jiggle.stiffness for pb in obj.pose.bones]
    for scale, word in (((1, 2, 1), "non-uniform"), ((-1, 1, 1), "negative")):
        obj.scale = scale
        bpy.context.scene.frame_set(9)
        assert word in driver.status(obj)
        bpy.context.view_layer.objects.active = obj
        with pytest.raises(RuntimeError, match=word):
            bpy.ops.tetrig.jiggle_update_rig()
        assert [pb.tetrig_jiggle.stiffness for pb in obj.pose.bones] == settings
    obj.scale = (1, 1, 1)
    bpy.context.scene.frame_set(10)
    assert driver.status(obj) == ""
    # a bone squashed to zero length by its pose scale
    obj.pose.bones["Chain.02"].scale = (0, 0, 0)
    bpy.context.scene.frame_set(11)
    assert "zero" in driver.status(obj) or "scale" in driver.status(obj)
    obj.pose.bones["Chain.02"].scale = (1, 1, 1)
    bpy.context.scene.frame_set(12)
    assert driver.status(obj) == ""
    # bones renamed after set-up and baking: live jiggle goes on; the bake is kept, not played
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.jiggle_bake() == {"FINISHED"}
    obj.data.bones["Chain.03"].name = "Renamed"
    from tetrig.runtime.jiggle import bake as jiggle_bake

    state = jiggle_bake.status(obj, bpy.context.scene)
    assert state is not None and state.bones_changed and "renamed" in state.describe()
    bpy.context.scene.frame_set(15)
    assert driver.status(obj) == ""
    assert obj.pose.bones["Renamed"].constraints["TetRig Jiggle"].target is not None


def test_a_linked_armature_asks_for_a_library_override(bpy, addon, tmp_path):
    make_chain_rig()
    library = str(tmp_path / "library.blend")
    bpy.ops.wm.save_as_mainfile(filepath=library)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    with bpy.data.libraries.load(library, link=True) as (source, target):
        target.objects = ["Rig"]
    linked = target.objects[0]
    bpy.context.scene.collection.objects.link(linked)
    bpy.context.view_layer.objects.active = linked
    from tetrig.runtime.jiggle import rig as jiggle_rig

    assert "Library Override" in jiggle_rig.rig_problem(linked)
    for op in (bpy.ops.tetrig.jiggle_update_rig, bpy.ops.tetrig.jiggle_bake, bpy.ops.tetrig.jiggle_bake_action):
        with pytest.raises(RuntimeError, match="linked from .*library.blend: make a Library Override"):
            op()
    assert not linked.pose.bones["Chain.00"].constraints["TetRig Jiggle"].mute  # nothing changed


def test_batch_bakes_a_rig_headless(bpy, addon, tmp_path):
    make_chain_rig()
    source = str(tmp_path / "rig.blend")
    bpy.ops.wm.save_as_mainfile(filepath=source)
    out = str(tmp_path / "out.blend")
    run = subprocess.run([sys.executable, str(REPO / "scripts" / "batch.py"), source, "--", "--object", "Rig",
                          "--frames", "1", "30", "--output", out], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "Rig: 5 jiggle bones, frames 1-30 baked" in run.stdout
    bpy.ops.wm.open_mainfile(filepath=out)
    from tetrig.runtime.jiggle import bake as jiggle_bake

    state = jiggle_bake.status(bpy.data.objects["Rig"], bpy.context.scene)
    assert state is not None and state.info.frame_end == 30 and not state.outdated
    bad = subprocess.run([sys.executable, str(REPO / "scripts" / "batch.py"), source, "--", "--object", "Rig",
                          "--json", str(tmp_path / "x.json")], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "an armature has none" in bad.stderr
