"""Subframes (motion blur, ``frame_set(F, subframe=t)``) in real Blender (the bpy module): frame
F + t shows frames F and F + 1 interpolated, live and baked (issue 23, item 7)."""

from __future__ import annotations

import numpy as np
import pytest
from blender_helpers import ball, evaluated_positions
from jiggle_blender import bone_tails, make_chain_rig


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def cage_points(obj) -> np.ndarray:
    """The control points as the cage shows them (rest + ``tetrig_offset``), float32 [Q, 3]."""
    from tetrig.runtime.common import mesh_io

    cage = obj.tetrig.cage.data
    return mesh_io.positions_float32(cage).reshape(-1, 3) + mesh_io.read_attribute(
        cage, "tetrig_offset", np.float32, 3)


def shown_at(bpy, obj, frame: int, subframe: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    bpy.context.scene.frame_set(frame, subframe=subframe)
    return cage_points(obj), evaluated_positions(obj)


def check_between(bpy, obj, t: float) -> None:
    """Frame 10 + t of ``obj`` shows frames 10 and 11 interpolated (control points and mesh)."""
    points10, mesh10 = shown_at(bpy, obj, 10)
    points11, mesh11 = shown_at(bpy, obj, 11)
    points, mesh = shown_at(bpy, obj, 10, t)
    assert points11[:, 2].max() < points10[:, 2].max() - 0.01  # falling: the two frames differ
    np.testing.assert_allclose(points, (1 - t) * points10 + t * points11, atol=2e-6)
    np.testing.assert_allclose(mesh, (1 - t) * mesh10 + t * mesh11, atol=2e-6)
    # strictly between: every control point's height lies between its heights at 10 and 11
    low, high = np.minimum(points10, points11)[:, 2], np.maximum(points10, points11)[:, 2]
    assert np.all((points[:, 2] > low - 1e-6) & (points[:, 2] < high + 1e-6))
    assert np.abs(points - points10).max() > 1e-3 and np.abs(points - points11).max() > 1e-3


@pytest.mark.parametrize("t", [0.5, 0.25])
def test_a_subframe_shows_the_control_points_between_frames_live(bpy, addon, t):
    obj = ball(bpy)
    for f in range(1, 12):
        bpy.context.scene.frame_set(f)
    check_between(bpy, obj, t)
    # a subframe reached by a jump (frame 11 never simulated before) shows the same
    from tetrig.runtime import scene as driver

    expected = shown_at(bpy, obj, 10, t)[0]
    driver.free()
    bpy.context.scene.frame_set(1)
    np.testing.assert_allclose(shown_at(bpy, obj, 10, t)[0], expected, atol=1e-6)
    # and the integer frames are what they were (the subframe recorded nothing as frame 10's)
    assert driver.status(obj) == ""


def test_a_subframe_shows_the_baked_control_points_between_frames(bpy, addon):
    bpy.context.scene.frame_end = 20
    obj = ball(bpy)
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    from tetrig.runtime import scene as driver
    from tetrig.runtime.common import bake_store

    driver.free()  # nothing cached: the frames come from the bake
    check_between(bpy, obj, 0.5)
    assert bake_store.source_bake(obj) is not None
    # the last baked frame has no F + 1 in the bake: it shows the bake's frame 20 (simulating 21 live
    # would show another motion than the bake's)
    last, _ = shown_at(bpy, obj, 20)
    np.testing.assert_allclose(shown_at(bpy, obj, 20, 0.5)[0], last, atol=1e-7)


def test_a_subframe_of_an_animated_goal_body_reads_f_and_f_plus_1_never_the_subframe(bpy, addon):
    """A body whose goals follow its animation: its inputs at 10.5 are the animation's there, but the
    steps use frames 10 and 11; the frames played afterwards are unchanged."""
    obj = ball(bpy)
    obj.tetrig.use_goal = True
    obj.tetrig.goal_default = 0.3
    obj.keyframe_insert("location", frame=1)
    obj.location.x += 1.0
    obj.keyframe_insert("location", frame=12)
    played = {f: shown_at(bpy, obj, f)[1] for f in range(1, 13)}
    m10, m11 = played[10], played[11]
    bpy.context.scene.frame_set(10, subframe=0.5)
    from tetrig.runtime import scene as driver

    assert driver.status(obj) == ""
    # the mesh shows the offsets of 10 and 11 blended, in the object's space at 10.5
    offsets = evaluated_positions(obj) - np.array([v.co for v in obj.data.vertices])
    rest = np.array([v.co for v in obj.data.vertices])
    np.testing.assert_allclose(offsets, 0.5 * (m10 - rest) + 0.5 * (m11 - rest), atol=2e-6)
    for f in (10, 11, 12):  # replayed from the cache, the same as first played
        np.testing.assert_allclose(shown_at(bpy, obj, f)[1], played[f], atol=1e-7)
    driver.free()
    np.testing.assert_allclose(shown_at(bpy, obj, 12)[1], played[12], atol=1e-6)  # and from scratch


def test_a_subframe_shows_the_jiggle_between_frames(bpy, addon):
    """Each bone's jiggle (the turn its target empty holds) at 10.5 is half way along the shortest
    arc between its turns at 10 and 11 (the bones also follow the root's own animation at 10.5)."""
    obj = make_chain_rig()
    scene = bpy.context.scene
    empties = [pb.constraints["TetRig Jiggle"].target for pb in obj.pose.bones if pb.name.startswith("Chain")]

    def turns(frame: int, subframe: float = 0.0) -> list:
        scene.frame_set(frame, subframe=subframe)
        return [np.array(e.matrix_world, dtype=np.float64)[:3, :3] for e in empties]

    def angle(a: np.ndarray, b: np.ndarray) -> float:
        """The angle of the rotation from ``a`` to ``b`` [rad], accurate for small ones."""
        r = a.T @ b
        sine = 0.5 * np.linalg.norm([r[2, 1] - r[1, 2], r[0, 2] - r[2, 0], r[1, 0] - r[0, 1]])
        return float(np.arctan2(sine, 0.5 * (np.trace(r) - 1.0)))

    for f in range(1, 12):
        scene.frame_set(f)
    at10, at11, between = turns(10), turns(11), turns(10, 0.5)
    for r10, r11, r in zip(at10, at11, between):
        arc = angle(r10, r11)
        assert arc > 1e-3  # the jiggle turns between the two frames
        assert angle(r10, r) == pytest.approx(arc / 2, abs=2e-6)
        assert angle(r, r11) == pytest.approx(arc / 2, abs=2e-6)
    tips = bone_tails(obj)[-1]
    scene.frame_set(10)
    assert np.abs(bone_tails(obj)[-1] - tips).max() > 1e-3  # and the bones show it
