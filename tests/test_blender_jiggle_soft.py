"""Jiggle chains against soft bodies (issue 21, real bpy module): a tail falling onto a cage soft
body rests on the surface the soft body shows, the same played, jumped to and baked; soft bodies of
other scenes, with Soft Bodies off, or a rig with Colliders off pass through (``runtime/soft_colliders``)."""

from __future__ import annotations

import numpy as np
import pytest
from blender_helpers import COARSE_RESOLUTION, evaluated_positions, world
from jiggle_blender import armature_in_edit_mode

FRAMES = 30
RADIUS = 0.02


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    scene.frame_start, scene.frame_end = 1, FRAMES
    return _bpy


def soft_box(bpy):
    """A 0.4 m cube soft body standing on the ground (coarse cage), top at z = 0.4."""
    bpy.ops.mesh.primitive_cube_add(size=0.4, location=(0.0, 0.0, 0.2))
    obj = bpy.context.active_object
    obj.name = "Box"
    obj.tetrig.resolution = COARSE_RESOLUTION
    obj.tetrig.use_ground = True
    obj.tetrig.ground_height = 0.0
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    return obj


def tail_rig(bpy):
    """An armature whose root holds a level chain of 5 jiggle bones (8 cm each, Collision Radius 2 cm,
    soft: stiffness 4/s², damping 12/s) 15 cm above the box's top: gravity lays it onto the box."""
    obj = armature_in_edit_mode("Tail")
    data = obj.data
    parent = data.edit_bones.new("Root")
    parent.head, parent.tail = (-0.25, 0.0, 0.55), (-0.15, 0.0, 0.55)
    for i in range(5):
        b = data.edit_bones.new(f"Chain.{i:02d}")
        b.head, b.tail = (-0.15 + 0.08 * i, 0.0, 0.55), (-0.07 + 0.08 * i, 0.0, 0.55)
        b.parent, b.use_connect = parent, True
        parent = b
    bpy.ops.object.mode_set(mode="OBJECT")
    for pb in obj.pose.bones:
        if pb.name.startswith("Chain"):
            s = pb.tetrig_jiggle
            s.stiffness, s.damping, s.collision_radius = 4.0, 12.0, RADIUS
            s.enabled = True
    return obj


def shown(bpy, rig) -> tuple[np.ndarray, np.ndarray]:
    """The chain's tails float64 [5, 3] and pose matrices [5, 4, 4] as Blender shows them."""
    ev = rig.evaluated_get(bpy.context.evaluated_depsgraph_get())
    bones = [pb for pb in ev.pose.bones if pb.name.startswith("Chain")]
    m = np.array(ev.matrix_world)
    return (np.array([m[:3, :3] @ np.array(pb.tail) + m[:3, 3] for pb in bones]),
            np.array([np.array(pb.matrix) for pb in bones]))


def clearance(bpy, box, tails: np.ndarray) -> np.ndarray:
    """Signed distance [m] of each tail to the box's shown (closed) surface, minus the radius."""
    from tetrig.tetrig_addon import colliders

    box.data.calc_loop_triangles()
    tris = np.empty(len(box.data.loop_triangles) * 3, dtype=np.int32)
    box.data.loop_triangles.foreach_get("vertices", tris)
    surface = colliders.mesh_collider(world(box, evaluated_positions(box).astype(np.float64)), tris.reshape(-1, 3),
                                      thickness_outer=0.0)
    return colliders.signed_distance(surface, tails)[0] - RADIUS


def play(bpy, rig, frames=range(1, FRAMES + 1)) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for f in frames:
        bpy.context.scene.frame_set(f)
        out[f] = shown(bpy, rig)
    return out


def play_onto(bpy, rig, body) -> tuple[dict[int, tuple[np.ndarray, np.ndarray]], float]:
    """Play frames 1-FRAMES: (what the rig shows at each, ``shown``; the least clearance [m] of any
    tail to ``body``'s shown surface over them, ``clearance``)."""
    played, worst = {}, np.inf
    for f in range(1, FRAMES + 1):
        bpy.context.scene.frame_set(f)
        played[f] = shown(bpy, rig)
        worst = min(worst, float(clearance(bpy, body, played[f][0]).min()))
    return played, worst


def test_a_tail_falling_onto_a_soft_body_rests_on_its_surface_played_jumped_and_baked(bpy):
    from tetrig.runtime import scene as driver
    from tetrig.runtime.jiggle import bake as jiggle_bake

    box, rig = soft_box(bpy), tail_rig(bpy)
    played, worst = play_onto(bpy, rig, box)
    assert worst >= -1e-3  # never deeper than 1 mm inside the radius
    assert clearance(bpy, box, played[FRAMES][0]).min() < 2e-3  # lying on the box
    speed = np.linalg.norm(played[FRAMES][0] - played[FRAMES - 1][0], axis=1).max() * 24.0
    assert speed < 0.05  # come to rest [m/s]
    assert played[FRAMES][0][:, 2].min() < 0.45  # it fell from 0.55 m
    # a jump from the start frame, with nothing cached, shows the same bones
    driver.free()
    bpy.context.scene.frame_set(1)
    bpy.context.scene.frame_set(FRAMES)
    np.testing.assert_allclose(shown(bpy, rig)[1], played[FRAMES][1], rtol=0.0, atol=1e-6)
    # the rig's bake shows what was played (the soft body live), and says what it saw
    bpy.context.view_layer.objects.active = rig
    assert bpy.ops.tetrig.jiggle_bake() == {"FINISHED"}
    assert not jiggle_bake.status(rig, bpy.context.scene).outdated
    driver.free()
    for f, (tails, matrices) in play(bpy, rig, [FRAMES, 12, 20]).items():
        np.testing.assert_allclose(matrices, played[f][1], rtol=0.0, atol=1e-6)
    box.tetrig.damping *= 2.0  # a change of the soft body it collided with outdates it
    assert jiggle_bake.status(rig, bpy.context.scene).outdated


def test_soft_bodies_elsewhere_or_switched_off_are_passed_through(bpy):
    from tetrig.runtime import scene as driver

    box, rig = soft_box(bpy), tail_rig(bpy)
    rig.tetrig_jiggle.use_colliders = False
    free = play(bpy, rig)
    assert clearance(bpy, box, free[FRAMES][0]).min() < -0.01  # it would go through
    rig.tetrig_jiggle.use_colliders = True
    box.tetrig.use_soft_bodies = False  # the box touches no other body
    driver.free()
    off = play(bpy, rig)
    box.tetrig.use_soft_bodies = True
    other = bpy.data.scenes.new("Other")
    other.frame_start, other.frame_end = 1, FRAMES
    other.collection.objects.link(box)
    bpy.context.scene.collection.objects.unlink(box)
    driver.free()
    elsewhere = play(bpy, rig)
    for f in range(1, FRAMES + 1):
        np.testing.assert_allclose(off[f][1], free[f][1], rtol=0.0, atol=1e-6)  # float32 matrices
        np.testing.assert_allclose(elsewhere[f][1], free[f][1], rtol=0.0, atol=1e-6)


def surface_pillow(bpy):
    """A closed Surface body with pressure (UV sphere 16 × 8, r = 0.2 m, 1e4 Pa) resting on the
    ground, top at about z = 0.4 m, under the tail."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=16, ring_count=8, radius=0.2, location=(0.0, 0.0, 0.205))
    obj = bpy.context.active_object
    obj.name = "Pillow"
    s = obj.tetrig
    s.body_type = "SURFACE"
    s.areal_density, s.stretch, s.shear, s.bending, s.pressure = 10.0, 3e3, 3e2, 0.01, 1e4
    s.use_ground, s.ground_height, s.damping = True, 0.0, 2.0
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    return obj


def test_a_tail_falling_onto_a_surface_body_rests_on_it_live_and_on_its_bake(bpy):
    """A Surface body is a collider of chains as a cage soft body is: the tail lies on the pillow's
    shown surface, never 1 mm inside its radius; once the pillow is baked the tail reads the bake
    and lies where it lay on the live pillow."""
    from tetrig.runtime import scene as driver

    pillow, rig = surface_pillow(bpy), tail_rig(bpy)
    played, worst = play_onto(bpy, rig, pillow)
    assert worst >= -1e-3  # never deeper than 1 mm inside the radius
    assert clearance(bpy, pillow, played[FRAMES][0]).min() < 2e-3  # lying on the pillow
    assert played[FRAMES][0][:, 2].min() < 0.45  # it fell from 0.55 m
    rig.tetrig_jiggle.use_colliders = False  # without the pillow it would fall through it
    driver.free()
    free = play(bpy, rig, [FRAMES])
    assert clearance(bpy, pillow, free[FRAMES][0]).min() < -0.01
    rig.tetrig_jiggle.use_colliders = True
    bpy.context.view_layer.objects.active = pillow
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    driver.free()
    for f, (tails, _) in play(bpy, rig, [1, 12, FRAMES]).items():
        np.testing.assert_allclose(tails, played[f][0], rtol=0.0, atol=1e-4)  # the bake's float32 offsets


def test_a_torn_sheet_is_seen_by_chains_as_it_shows_live_and_baked(scene):
    """What a rig sees of a torn Surface sheet (``soft_colliders.surface_body``) is the split mesh it
    shows: live, the engine's split mesh (a vertex per particle, the torn edges open); from its bake,
    the same triangles at the same corners (float32 rounding), the hooks' pose read back."""
    import bpy
    from test_blender_surface import PULL_FRAMES, pulled_sheet

    from tetrig.runtime import scene as driver
    from tetrig.runtime import soft_colliders
    from tetrig.runtime.common import frames

    scene.frame_start, scene.frame_end = 1, 1 + PULL_FRAMES
    sheet, _, _ = pulled_sheet(bpy, scene)
    for f in range(1, 2 + PULL_FRAMES):
        scene.frame_set(f)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    live = soft_colliders.surface_body(sheet, scene, depsgraph, 1 + PULL_FRAMES).collider()
    slot = frames.find(sheet)
    split = slot.prepared.body.split_mesh(slot.cache._states[1 + PULL_FRAMES])
    assert live.vertices.shape[0] == split.positions.shape[0] > len(sheet.data.vertices) + 10  # torn
    assert np.array_equal(live.vertices, split.positions)
    corners = live.vertices[live.triangles]
    driver.free()
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    driver.free()
    baked = soft_colliders.surface_body(sheet, scene, bpy.context.evaluated_depsgraph_get(), 1 + PULL_FRAMES).collider()
    assert np.array_equal(baked.triangles, live.triangles)
    assert np.abs(baked.vertices[baked.triangles] - corners).max() < 1e-5  # float32 offsets on a 1 m scene
