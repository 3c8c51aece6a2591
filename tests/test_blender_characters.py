"""Characters in real Blender (the bpy module): soft bodies over an armature, a binding that notices
edits, Mirror and Subdivision around TetRig, Edit Mode, and an object far from the origin."""

from __future__ import annotations

import math

import numpy as np
import pytest
from blender_helpers import evaluated_positions, rest_positions, world
from character_scene import armature, body, soft_belly, walk


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def skinned_body(bpy):
    obj, belly, spine = body(bpy)
    arm = armature(bpy)
    obj.modifiers.new("Armature", "ARMATURE").object = arm
    soft_belly(obj)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    assert [m.type for m in obj.modifiers] == ["ARMATURE", "NODES"]  # TetRig after the pose
    return obj, arm, belly, spine


def posed_positions(obj) -> np.ndarray:
    """What the modifiers before TetRig give (the posed shape), TetRig switched off for a moment."""
    mod = obj.modifiers["TetRig"]
    mod.show_viewport = False
    try:
        return evaluated_positions(obj)
    finally:
        mod.show_viewport = True


def test_the_belly_on_a_walking_rig_lags_and_overshoots_the_posed_shape(bpy):
    """The rig walks 1.5 m along +x in half a second while its middle bone swings, then stops: the
    pinned spine follows the skinning exactly, the belly trails behind the posed shape, swings past
    it when the walk stops, and settles onto it."""
    scene = bpy.context.scene
    scene.use_gravity = False
    obj, arm, belly, spine = skinned_body(bpy)
    walk(arm)
    rest = world(obj, rest_positions(obj).astype(np.float64))
    lag, bend = [], []
    for f in range(1, 97):
        scene.frame_set(f)
        shown = world(obj, evaluated_positions(obj).astype(np.float64))
        posed = world(obj, posed_positions(obj).astype(np.float64))
        np.testing.assert_allclose(shown[spine], posed[spine], atol=1e-5)  # pinned: the skinning exactly
        lag.append((shown[belly] - posed[belly])[:, 0].mean())
        walked = posed - rest
        bend.append(np.ptp(walked[:, 0]))  # how unevenly the skinning moves the body along x
    assert np.mean((posed - rest)[:, 0]) == pytest.approx(1.5, abs=1e-4)  # it walked 1.5 m
    assert max(bend) > 0.1  # the middle bone's swing bends it
    lag = np.array(lag)
    print(f"\nbelly lag behind the posed shape: {lag[1:12].min() * 100:.1f} cm walking, overshoot "
          f"{lag[12:].max() * 100:.1f} cm, last second {np.abs(lag[-24:]).max() * 100:.2f} cm")
    assert lag[1:12].min() < -0.02  # the belly trails the walk by more than 2 cm
    assert lag[12:].max() > 0.01  # and swings past the posed shape when the walk stops
    assert np.abs(lag[-24:]).max() < 0.1 * np.abs(lag).max()  # then settles onto it


def test_with_the_bone_turned_180_degrees_gravity_still_pulls_the_belly_down(bpy):
    """Gravity acts in world space: the rig upside down, the free belly sags toward -z, as it does
    upright (the old stack, TetRig before the Armature, pulled it up by 7 cm)."""
    scene = bpy.context.scene
    obj, arm, belly, spine = skinned_body(bpy)
    sags = {}
    for turn in (0.0, math.pi):
        root = arm.pose.bones["Bone0"]
        root.rotation_mode = "XYZ"
        root.rotation_euler = (turn, 0.0, 0.0)
        scene.frame_set(1)
        bpy.ops.tetrig.reset_to_rest()
        for f in range(1, 25):
            scene.frame_set(f)
        shown = world(obj, evaluated_positions(obj).astype(np.float64))
        posed = world(obj, posed_positions(obj).astype(np.float64))
        np.testing.assert_allclose(shown[spine], posed[spine], atol=1e-5)
        sags[turn] = (shown[belly] - posed[belly])[:, 2].mean()
    print(f"\nbelly sag: {sags[0.0] * 1000:.1f} mm upright, {sags[math.pi] * 1000:.1f} mm upside down")
    assert sags[0.0] < -0.005 and sags[math.pi] < -0.005  # down in both poses
    assert sags[math.pi] == pytest.approx(sags[0.0], rel=0.25)  # about as far


def _edit_positions(bpy, obj):
    obj.data.vertices[0].co.x += 0.05


def _apply_rotation(bpy, obj):
    obj.rotation_euler = (0.3, 0.0, 0.0)
    bpy.ops.object.transform_apply(location=False, rotation=True, scale=False)


def _subdivide(bpy, obj):
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.select_all(action="SELECT")
    bpy.ops.mesh.subdivide()
    bpy.ops.object.mode_set(mode="OBJECT")


def _edit_shape_key(bpy, obj):
    obj.data.shape_keys.key_blocks["Smile"].data[0].co.z += 0.05


@pytest.mark.parametrize("edit", [_edit_positions, _apply_rotation, _subdivide, _edit_shape_key],
                         ids=["positions", "applied transform", "vertex count", "shape key"])
def test_an_edit_after_binding_gives_the_message_and_the_rest_shape(bpy, edit, capfd):
    """Each edit: no exception, the status and panel say the mesh changed, playback shows the edited
    mesh untouched, exports refuse with the same message; Rebind (Build Cage again) keeps the
    settings and simulates again."""
    from tetrig.runtime import scene as driver
    from tetrig.runtime.cage import export, model as cage_model

    bpy.ops.mesh.primitive_monkey_add(location=(0.0, 0.0, 1.0))
    obj = bpy.context.active_object
    obj.shape_key_add(name="Basis")
    obj.shape_key_add(name="Smile").value = 0.5
    obj.tetrig.resolution, obj.tetrig.damping = 6, 4.0
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.context.scene.frame_set(6)
    assert cage_model.binding_problem(obj) == ""
    bpy.context.scene.frame_set(1)
    edit(bpy, obj)
    for f in range(1, 8):
        bpy.context.scene.frame_set(f)
    message = "the mesh changed since binding; press Rebind"
    assert message in driver.status(obj) and message in cage_model.binding_problem(obj)
    np.testing.assert_array_equal(evaluated_positions(obj), posed_positions(obj))  # untouched
    assert "Traceback" not in "".join(capfd.readouterr())  # the frame handler raised nothing
    with pytest.raises(export.ExportError, match="changed since binding"):
        export.seed_data(obj)
    with pytest.raises(RuntimeError, match="changed since binding"):
        bpy.ops.tetrig.export_json(filepath=str(bpy.app.tempdir) + "stale.json")
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}  # Rebind
    assert obj.tetrig.resolution == 6 and obj.tetrig.damping == 4.0
    assert cage_model.binding_problem(obj) == ""
    bpy.context.scene.frame_set(2)
    bpy.context.scene.frame_set(8)
    assert np.abs(evaluated_positions(obj) - posed_positions(obj)).max() > 0.01  # falling again


def half_box(bpy):
    """The +x half of a 1 m cube cut 3 times per side (open at x = 0), Mirror (merge) and
    Subdivision Surface on it, tilted 0.3 rad about y, its centre 1 m over the ground."""
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    obj = bpy.context.active_object
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.subdivide(number_cuts=3)
    bpy.ops.mesh.select_all(action="DESELECT")
    bpy.ops.object.mode_set(mode="OBJECT")
    for v in obj.data.vertices:
        v.select = v.co.x < -1e-6
    bpy.ops.object.mode_set(mode="EDIT")
    bpy.ops.mesh.delete(type="VERT")
    bpy.ops.object.mode_set(mode="OBJECT")
    mirror = obj.modifiers.new("Mirror", "MIRROR")
    mirror.use_mirror_merge = True
    obj.modifiers.new("Subdivision", "SUBSURF").levels = 1
    obj.location, obj.rotation_euler = (0.0, 0.0, 1.0), (0.0, 0.3, 0.0)
    obj.tetrig.use_ground, obj.tetrig.resolution = True, 8
    obj.tetrig.youngs_modulus, obj.tetrig.damping = 1e6, 2.0  # firm: a fold would stand out of its sag
    return obj


def test_a_mirrored_half_box_lands_as_one_body_and_its_seam_holds(bpy):
    """TetRig simulates the whole mirrored mesh (after Mirror, before Subdivision): the tilted box
    lands on both halves (no V-fold), the merged seam stays merged (the evaluated vertex count is
    the same as at rest), and Subdivision smooths the simulated result."""
    obj = half_box(bpy)
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    assert [m.type for m in obj.modifiers] == ["MIRROR", "NODES", "SUBSURF"]
    scene = bpy.context.scene
    scene.frame_set(1)
    at_rest = evaluated_positions(obj)
    for f in range(1, 97):
        scene.frame_set(f)
    landed = evaluated_positions(obj)
    assert len(landed) == len(at_rest) > 2 * len(obj.data.vertices)  # merged, then subdivided
    subdivision = obj.modifiers["Subdivision"]
    subdivision.show_viewport = False  # TetRig's own output: the vertices that touch the ground
    touching = world(obj, evaluated_positions(obj).astype(np.float64))
    subdivision.show_viewport = True
    for half in (touching[:, 0] > 0.01, touching[:, 0] < -0.01):  # both halves rest on the ground
        low = touching[half, 2].min()
        print(f"\nlowest point of a half: {low * 1000:.2f} mm")
        assert abs(low) < 1e-3
    rest_local = at_rest.astype(np.float64)
    shown = world(obj, landed.astype(np.float64))
    # one body: the shape after landing is the rest shape moved rigidly (within 2 % of its size)
    a, b = rest_local - rest_local.mean(0), shown - shown.mean(0)
    u, _, vt = np.linalg.svd(b.T @ a)
    r = u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt
    assert np.linalg.norm(a @ r.T - b, axis=1).max() < 0.02 * np.linalg.norm(np.ptp(a, axis=0))


def test_edit_mode_is_safe_everywhere(bpy, tmp_path, capfd):
    """In Edit Mode: frame changes leave the edited mesh alone, every operator that cannot run says
    why in its poll message, nothing raises a traceback; out of Edit Mode it simulates again."""
    from blender_helpers import ball

    obj = ball(bpy)
    scene = bpy.context.scene
    scene.frame_end = 12
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    bpy.ops.object.mode_set(mode="EDIT")
    for f in (3, 7, 1, 12):
        scene.frame_set(f)
    for call in (lambda: bpy.ops.tetrig.reset_to_rest(), lambda: bpy.ops.tetrig.free_bake(),
                 lambda: bpy.ops.tetrig.bake(), lambda: bpy.ops.tetrig.build_cage(),
                 lambda: bpy.ops.tetrig.export_json(filepath=str(tmp_path / "a.json")),
                 lambda: bpy.ops.tetrig.export_pc2(filepath=str(tmp_path / "a.pc2")),
                 lambda: bpy.ops.tetrig.export_animation_json(filepath=str(tmp_path / "b.json"))):
        with pytest.raises(RuntimeError, match="Leave Edit Mode first|in Object Mode"):
            call()
    assert not list(tmp_path.iterdir())  # no export wrote anything
    bpy.ops.object.mode_set(mode="OBJECT")
    scene.frame_set(1)
    rest = evaluated_positions(obj)
    scene.frame_set(10)
    assert (evaluated_positions(obj) - rest)[:, 2].max() < -0.05  # it plays its bake again
    assert "Traceback" not in "".join(capfd.readouterr())


@pytest.mark.parametrize("far", [0.0, 1e5])
def test_a_small_ball_far_from_the_origin_rests_on_its_ground(bpy, far):
    """A 1 cm ball 1e5 m from the origin lands on a ground there within 0.1 mm and moves as the
    same ball at the origin does, to 1e-6 of its size (its local positions)."""
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.005, location=(far, far, 0.02))
    obj = bpy.context.active_object
    obj.tetrig.use_ground, obj.tetrig.ground_height = True, 0.0
    obj.tetrig.resolution = 6
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    scene = bpy.context.scene
    for f in range(1, 49):
        scene.frame_set(f)
    local = evaluated_positions(obj).astype(np.float64)
    low = (local @ np.array(obj.matrix_world)[:3, :3].T)[:, 2].min() + obj.matrix_world[2][3]
    print(f"\n1 cm ball at {far:g} m: lowest point {low * 1e3:.4f} mm above the ground")
    assert abs(low) < 1e-4
    _FAR_RESULTS[far] = local
    if len(_FAR_RESULTS) == 2:
        np.testing.assert_allclose(_FAR_RESULTS[1e5], _FAR_RESULTS[0.0], atol=1e-6 * 0.01)


_FAR_RESULTS: dict[float, np.ndarray] = {}


def test_an_open_shell_binds_with_the_hull_and_the_info_line_says_why(bpy):
    """A shell with no inside (an open tube, like a car body's panels) still binds with Cage: Fit:
    the hull, every vertex reconstructed, and the note in the panel and the report says why."""
    from blender_helpers import import_obj
    from tetrig.runtime.cage import export

    bpy.ops.mesh.primitive_cylinder_add(vertices=24, radius=0.5, depth=2.0, end_fill_type="NOTHING")
    tube = bpy.context.active_object
    assert tube.tetrig.cage_method == "FIT"
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    assert "hull" in tube.tetrig.cage_note and "inside" in tube.tetrig.cage_note
    data = export.seed_data(tube)
    blended = np.einsum("vk,vkj->vj", data.weights, data.bones_rest[data.vertex_bones])
    np.testing.assert_allclose(blended, rest_positions(tube), atol=1e-5 * 2.3)
    woody = import_obj("woody")  # a public model that is open in places
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    print(f"\nopen tube: {tube.tetrig.cage_note}\nwoody: {woody.tetrig.cage_note}")
    assert woody.tetrig.cage_note
