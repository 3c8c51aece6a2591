"""Bake semantics and exports in real Blender (the bpy module), on coarse ico spheres and Suzanne.

Outdated bakes, Bake All / Free All, incremental (modal) baking, PC2 read back by Blender's own
Mesh Cache modifier, and the animation JSON.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from blender_helpers import COARSE_RESOLUTION, ball, evaluated_positions, rest_positions

LAST_FRAME = 16


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    scene.frame_end = LAST_FRAME
    return _bpy


def play(bpy, obj, frames):
    out = {}
    for f in frames:
        bpy.context.scene.frame_set(f)
        out[f] = evaluated_positions(obj)
    return out


def test_an_outdated_bake_keeps_playing_until_baked_again(bpy, addon):
    from tetrig.runtime import bake

    obj = ball(bpy)
    scene = bpy.context.scene
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    baked = play(bpy, obj, [1, 8, LAST_FRAME])
    obj.tetrig.damping = 20.0
    state = bake.status(obj, scene)
    assert state is not None and state.outdated
    assert play(bpy, obj, [8])[8].tobytes() == baked[8].tobytes()  # still the bake
    # frames after the bake are live, with the current settings
    scene.frame_end = LAST_FRAME + 4
    play(bpy, obj, [LAST_FRAME + 4])
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    state = bake.status(obj, scene)
    assert state is not None and not state.outdated and state.info.frame_end == LAST_FRAME + 4
    assert not np.array_equal(play(bpy, obj, [8])[8], baked[8])  # the new damping shows
    obj.location.x += 1.0  # moving the object changes the motion too
    bpy.context.view_layer.update()
    assert bake.status(obj, scene).outdated
    obj.location.x -= 1.0
    bpy.context.view_layer.update()
    assert not bake.status(obj, scene).outdated
    scene.render.fps = 30  # and so does the frame rate
    assert bake.status(obj, scene).outdated


def test_rebuilding_the_cage_drops_the_bake(bpy, addon):
    from tetrig.runtime import bake

    obj = ball(bpy)
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    assert bake.status(obj, bpy.context.scene) is not None
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    assert bake.status(obj, bpy.context.scene) is None


def test_bake_all_and_free_all(bpy, addon):
    from tetrig.runtime import bake

    a, b = ball(bpy, "A", -1.5), ball(bpy, "B", 1.5)
    scene = bpy.context.scene
    assert not bpy.ops.tetrig.free_bake.poll()
    assert bpy.ops.tetrig.bake(all_soft_bodies=True) == {"FINISHED"}
    assert bake.status(a, scene) is not None and bake.status(b, scene) is not None
    bpy.context.view_layer.objects.active = a
    assert bpy.ops.tetrig.free_bake() == {"FINISHED"}
    assert bake.status(a, scene) is None and bake.status(b, scene) is not None
    assert bpy.ops.tetrig.free_bake(all_soft_bodies=True) == {"FINISHED"}
    assert bake.status(b, scene) is None
    assert not bpy.ops.tetrig.free_bake.poll()


def test_bake_refuses_simulate_off_and_changes_nothing(bpy, addon):
    from tetrig.runtime.common import bake_store

    obj = ball(bpy)
    obj.tetrig.simulate = False
    with pytest.raises(RuntimeError, match="Simulate turned off"):
        bpy.ops.tetrig.bake()
    assert bake_store.info(obj.tetrig.cage) is None


def test_baking_a_few_frames_at_a_time_equals_baking_at_once(bpy, addon):
    """The modal operator bakes in slices of ~0.1 s between events; the result must not depend
    on where the slices end."""
    from tetrig.runtime import bake
    from tetrig.runtime.common import bake_store
    from tetrig.runtime import scene as driver

    a, b = ball(bpy, "A", -1.5), ball(bpy, "B", 1.5)
    scene = bpy.context.scene
    depsgraph = bpy.context.evaluated_depsgraph_get()
    job = bake.BakeJob([a, b], scene)
    slices = 0
    while not job.step(depsgraph, budget_s=0.0):  # one frame per slice
        slices += 1
        assert 0 < job.frames_done < job.total_frames
    assert slices == 2 * LAST_FRAME - 1 and job.frames_done == job.total_frames
    sliced = [bake_store.all_positions(o.tetrig.cage) for o in (a, b)]
    driver.free()
    bake.BakeJob([a, b], scene).run(depsgraph)
    for obj, first in zip((a, b), sliced):
        assert np.array_equal(bake_store.all_positions(obj.tetrig.cage), first)


def test_pc2_plays_back_in_blenders_mesh_cache_modifier(bpy, addon, tmp_path):
    from tetrig.tetrig_addon.formats import pc2

    bpy.ops.mesh.primitive_monkey_add(location=(0.0, 0.0, 1.0))
    obj = bpy.context.active_object
    obj.tetrig.resolution = COARSE_RESOLUTION
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    shown = play(bpy, obj, range(1, LAST_FRAME + 1))
    path = tmp_path / "suzanne.pc2"
    assert bpy.ops.tetrig.export_pc2(filepath=str(path)) == {"FINISHED"}
    cache = pc2.read(path)
    assert cache.sample_count == LAST_FRAME and cache.point_count == len(obj.data.vertices)
    assert cache.start_frame == 1.0
    for f in (1, 9, LAST_FRAME):
        assert np.abs(cache.positions[f - 1] - shown[f]).max() <= 1e-6  # what TetRig shows
    # Blender's own reader: the Mesh Cache modifier in place of the TetRig modifier
    obj.modifiers["TetRig"].show_viewport = False
    mod = obj.modifiers.new("Cache", "MESH_CACHE")
    mod.cache_format = "PC2"
    mod.filepath = str(path)
    mod.frame_start = 1.0
    for f in (1, 9, LAST_FRAME):
        bpy.context.scene.frame_set(f)
        assert np.abs(evaluated_positions(obj) - shown[f]).max() <= 1e-6, f
    assert np.abs(shown[LAST_FRAME] - rest_positions(obj)).max() > 0.1  # it did move


def test_animation_json_holds_the_played_control_points(bpy, addon, tmp_path):
    from tetrig.runtime.common import bake_store
    from tetrig.tetrig_addon.formats import animation_json

    obj = ball(bpy)
    scene = bpy.context.scene
    scene.render.fps, scene.render.fps_base = 30, 1.001
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    seed_path, anim_path = tmp_path / "seed.json", tmp_path / "anim.json"
    assert bpy.ops.tetrig.export_json(filepath=str(seed_path)) == {"FINISHED"}
    assert bpy.ops.tetrig.export_animation_json(filepath=str(anim_path)) == {"FINISHED"}
    seed = json.loads(seed_path.read_text())
    data = animation_json.read(anim_path)
    assert (data.frame_start, data.frame_end) == (1, LAST_FRAME)
    assert data.fps == pytest.approx(30 / 1.001)
    assert np.array_equal(data.control_points, bake_store.all_positions(obj.tetrig.cage))
    assert np.array_equal(data.control_points[0], np.asarray(seed["bones_rest"]))
    # the seed's vertex blend of frame 12's control points is the mesh shown at frame 12
    weights, bones = np.asarray(seed["weights"]), np.asarray(seed["vertex_bones"])
    blended = np.einsum("vk,vkj->vj", weights, data.control_points[11][bones])
    scene.frame_set(12)
    assert np.abs(blended - evaluated_positions(obj)).max() <= 1e-6
    # without a bake the same file comes from live simulation
    assert bpy.ops.tetrig.free_bake() == {"FINISHED"}
    live_path = tmp_path / "live.json"
    assert bpy.ops.tetrig.export_animation_json(filepath=str(live_path)) == {"FINISHED"}
    live = animation_json.read(live_path)
    assert np.abs(live.control_points - data.control_points).max() <= 1e-6


def test_the_bake_fingerprint_follows_the_frame_cache_key(bpy, addon):
    """``cage.model.motion_key`` (what a bake's fingerprint digests) must hold every input of the
    live frame cache's key that is saved with the file; only the cage's session id, which changes
    at every load, and the scene-inputs version (per session) are left out. If this fails, ``_model_key`` changed: update ``motion_key``."""
    from tetrig.runtime.common import frames, animation, properties
    from tetrig.runtime.cage import model as cage_model

    obj = ball(bpy)
    scene = bpy.context.scene
    scene.frame_set(3)
    world = animation.rest_world_matrix(obj, bpy.context.evaluated_depsgraph_get())
    cache_key = frames.find(obj).cache.key
    model_key = cache_key[0]
    assert model_key == cage_model.model_key(obj, scene, world)
    assert model_key[-1] == obj.tetrig.cage.session_uid
    motion = cage_model.motion_key(obj, scene, world)
    # the last entry counts this session's drops of recorded scene inputs (scene_inputs.version)
    assert cache_key[-1] == frames.find(obj).version
    assert motion == (*model_key[:-1], *cache_key[1:-1])
    # plasticity on: in both keys, after the frame settings (off, neither has it: older bakes stay current)
    obj.tetrig.use_plasticity = True
    scene.frame_set(4)
    cache_key = frames.find(obj).cache.key
    plastic = cage_model.motion_key(obj, scene, world)
    assert plastic == (*motion, properties.plastic_settings(obj)) == (*cache_key[0][:-1], *cache_key[1:-1])
