"""Build, bind, play, save, reload and remove in real Blender (the bpy module)."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
from blender_helpers import (attribute_snapshot, diagonal, evaluated_positions, import_obj,
                             rest_positions, world)


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def build(bpy, obj):
    bpy.context.view_layer.objects.active = obj
    t0 = time.perf_counter()
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    return time.perf_counter() - t0


@pytest.mark.parametrize("name", ["stanford-bunny", "spot"])
def test_real_mesh_binds_every_vertex_and_reconstructs(bpy, addon, name):
    obj = import_obj(name)
    seconds = build(bpy, obj)
    print(f"\n{name}: Build Cage & Bind {seconds * 1000:.0f} ms")
    from tetrig.runtime.cage import export
    data = export.seed_data(obj)
    rest = rest_positions(obj)
    assert data.vertex_bones.shape == (len(rest), 4) == data.weights.shape
    blended = np.einsum("vk,vkj->vj", data.weights, data.bones_rest[data.vertex_bones])
    assert np.abs(blended - rest).max() <= 1e-5 * diagonal(rest)
    from tetrig.tetrig_addon.geometry import tet_volumes
    assert tet_volumes(data.bones_rest, data.tets).min() > 0.0
    # attributes are POINT-domain and named tetrig_*
    names = {a.name: a.domain for a in obj.data.attributes if a.name.startswith("tetrig_")}
    assert names == {**{f"tetrig_cp{k}": "POINT" for k in range(4)},
                     **{f"tetrig_w{k}": "POINT" for k in range(4)}, "tetrig_offset": "POINT"}
    # the cage is a visible wire mesh parented to the source, its edges are the tet edges
    cage = obj.tetrig.cage
    assert cage.parent == obj and cage.display_type == "WIRE" and cage.tetrig.source == obj
    from tetrig.tetrig_addon.geometry import unique_edges
    edges = np.empty(len(cage.data.edges) * 2, np.int32)
    cage.data.edges.foreach_get("vertices", edges)
    assert np.array_equal(np.unique(np.sort(edges.reshape(-1, 2), 1), axis=0), unique_edges(data.tets))


def test_save_reload_and_json_export_are_exact(bpy, addon, tmp_path):
    obj = import_obj("spot")
    build(bpy, obj)
    original = rest_positions(obj).copy()
    from tetrig.runtime.cage import export
    before = export.seed_data(obj)
    json_path = tmp_path / "spot.json"
    assert bpy.ops.tetrig.export_json(filepath=str(json_path)) == {"FINISHED"}
    raw = json.loads(json_path.read_text())
    for key in ("bones_rest", "tets", "vertex_bones", "weights"):
        assert np.array_equal(np.asarray(raw[key]), getattr(before, key)), key
    # save mid-playback, reopen: nothing lost, the state shown is the same
    bpy.context.scene.frame_set(1)
    bpy.context.scene.frame_set(15)
    shown = evaluated_positions(obj)
    path = tmp_path / "spot.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    obj = bpy.data.objects["spot"]
    after = export.seed_data(obj)
    for key in ("bones_rest", "tets", "vertex_bones", "weights"):
        assert np.array_equal(getattr(after, key), getattr(before, key)), key
    assert np.array_equal(rest_positions(obj), original)  # rest shape untouched
    assert obj.tetrig.cage.name == "spot_TetRigCage"
    np.testing.assert_array_equal(evaluated_positions(obj), shown)
    bpy.context.scene.frame_set(1)
    np.testing.assert_array_equal(evaluated_positions(obj), original)


def test_bunny_drop_is_finite_above_ground_moves_and_settles(bpy, addon):
    obj = import_obj("stanford-bunny")
    obj.location.z = 0.3
    obj.tetrig.use_ground = True
    build(bpy, obj)
    sc = bpy.context.scene
    rest_world = world(obj, rest_positions(obj))
    lowest, prev, last_step = [], None, None
    for f in range(1, 121):
        sc.frame_set(f)
        pos = world(obj, evaluated_positions(obj))
        assert np.all(np.isfinite(pos))
        lowest.append(pos[:, 2].min())
        if prev is not None:
            last_step = np.abs(pos - prev).max()
        prev = pos
    diag = diagonal(rest_world)
    # the contact is a stiff penalty (tetrig_addon/solver/contacts.py) whose resting depth what a
    # frame shows leaves out (contacts.project_out); only the impact may sink a little
    assert min(lowest) >= -1e-3 * diag
    assert np.abs(prev - rest_world).max() > 0.2  # it fell ~0.3 m
    # and is nearly at rest by frame 120: its wobble decays as exp(−damping·t) (damping 1/s)
    assert last_step < 2e-3 * diag
    # the cage shows the simulated control points
    cage_pos = world(obj.tetrig.cage, evaluated_positions(obj.tetrig.cage))
    assert cage_pos[:, 2].max() < rest_world[:, 2].max() - 0.2


def test_frame_40_is_the_same_played_jumped_or_scrubbed(bpy, addon):
    obj = import_obj("spot")
    obj.location.z = 1.0
    obj.tetrig.use_ground = True
    original_attrs = attribute_snapshot(obj.data)
    original = rest_positions(obj).copy()
    build(bpy, obj)
    sc = bpy.context.scene
    start = evaluated_positions(obj)
    assert np.array_equal(start, original)  # the start frame is the rest shape, bit for bit
    for f in range(1, 41):
        sc.frame_set(f)
    played = evaluated_positions(obj)
    from tetrig.runtime import scene as driver
    driver.free()  # forget every cached frame: a cold jump
    sc.frame_set(1)
    sc.frame_set(40)
    jumped = evaluated_positions(obj)
    sc.frame_set(60)
    sc.frame_set(40)
    scrubbed = evaluated_positions(obj)
    tol = 1e-6 * diagonal(original)
    assert np.abs(played - original).max() > 100 * tol  # it did move
    assert np.abs(played - jumped).max() <= tol
    assert np.abs(played - scrubbed).max() <= tol
    sc.frame_set(1)
    assert np.array_equal(evaluated_positions(obj), original)
    sc.frame_set(30)
    assert bpy.ops.tetrig.remove() == {"FINISHED"}
    assert np.array_equal(rest_positions(obj), original)
    assert np.array_equal(evaluated_positions(obj), original)
    after = attribute_snapshot(obj.data)
    assert after.keys() == original_attrs.keys()
    for key in after:
        assert np.array_equal(after[key], original_attrs[key]), key
    assert "spot_TetRigCage" not in bpy.data.objects
    assert "TetRig Offset" not in bpy.data.node_groups
    assert len(obj.modifiers) == 0


def test_shape_keys_and_modifiers_keep_working(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add()
    obj = bpy.context.active_object
    obj.shape_key_add(name="Basis")
    key = obj.shape_key_add(name="Lift")
    for p in key.data:
        p.co.z += 0.25
    key.value = 1.0
    obj.modifiers.new("Subdivision", "SUBSURF")
    before = evaluated_positions(obj)
    build(bpy, obj)
    assert [m.name for m in obj.modifiers] == ["TetRig", "Subdivision"]
    assert np.array_equal(evaluated_positions(obj), before)  # rest frame: the shape key still applies
    bpy.context.scene.frame_set(12)
    moved = evaluated_positions(obj)
    assert moved.shape == before.shape and np.abs(moved - before).max() > 0.05
    key.value = 0.0  # the user's shape key still drives the mesh while simulated
    assert np.abs(evaluated_positions(obj)[:, 2] - moved[:, 2]).max() > 0.2


def test_pinned_vertices_hold_the_mesh(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add()
    obj = bpy.context.active_object
    rest = rest_positions(obj)
    top = np.flatnonzero(rest[:, 2] > rest[:, 2].max() - 0.3)
    group = obj.vertex_groups.new(name="Pin")
    group.add(top.tolist(), 1.0, "REPLACE")
    obj.tetrig.pin_group = "Pin"
    build(bpy, obj)
    bpy.context.scene.frame_set(24)
    pos = evaluated_positions(obj)
    assert np.abs(pos[top] - rest[top]).max() < 1e-5  # pinned vertices stay
    assert np.abs(pos - rest).max() < 1.0  # the rest hangs instead of falling away


@pytest.mark.parametrize("make, message", [
    (lambda bpy: _mesh(bpy, [(0, 0, 0), (1, 0, 0), (0, 1, 0)]), "distinct vertices"),
    (lambda bpy: _mesh(bpy, []), "no vertices"),
    (lambda bpy: _mesh(bpy, [(0, 0, 0), (float("nan"), 0, 0), (0, 1, 0), (0, 0, 1)]), "NaN"),
])
def test_bad_meshes_are_refused_and_left_unchanged(bpy, addon, make, message):
    obj = make(bpy)
    before = attribute_snapshot(obj.data)
    with pytest.raises(RuntimeError, match=message):
        bpy.ops.tetrig.build_cage()
    assert attribute_snapshot(obj.data).keys() == before.keys()
    assert obj.tetrig.role == "NONE" and len(obj.modifiers) == 0
    assert len(bpy.data.objects) == 1


def _mesh(bpy, verts):
    mesh = bpy.data.meshes.new("m")
    mesh.from_pydata(verts, [], [])
    obj = bpy.data.objects.new("m", mesh)
    bpy.context.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    return obj


def test_operators_poll_without_a_soft_body(bpy, addon):
    bpy.ops.object.camera_add()
    assert not bpy.ops.tetrig.build_cage.poll()
    assert not bpy.ops.tetrig.remove.poll()
    assert not bpy.ops.tetrig.export_json.poll()
    assert not bpy.ops.tetrig.reset_to_rest.poll()


def test_stale_binding_is_detected_and_not_written(bpy, addon):
    bpy.ops.mesh.primitive_monkey_add()
    obj = bpy.context.active_object
    build(bpy, obj)
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.select_all(action="SELECT")
    bpy.ops.mesh.subdivide()
    bpy.ops.object.mode_set(mode="OBJECT")
    bpy.context.scene.frame_set(10)
    from tetrig.runtime import scene as driver
    assert "changed since binding; press Rebind" in driver.status(obj)
    assert np.array_equal(evaluated_positions(obj), rest_positions(obj))
