"""Soft bodies that touch (issue 21; ``runtime/common/touching``): cage soft bodies of one scene with
Soft Bodies on and the same Collision Collection step together as one set, with one frame cache;
a body alone, or with Soft Bodies off, steps exactly as before sets existed (real bpy module)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from blender_helpers import ball, cube, drawn_panel

FRAMES = 12


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def state(obj, frame: int) -> np.ndarray:
    """The control points ``obj`` shows at a frame already simulated (``State.shown``): float64
    [Q, 3] [m], from its own frame cache, or its set's (``frames.Slot.shared``)."""
    from tetrig.runtime.common import frames

    slot = frames.find(obj)
    if slot.shared is None:
        return slot.cache.state_at(frame, None).shown()
    found = slot.shared.state_at(frame, None)
    members = sorted((o for o in obj.users_scene[0].objects if frames.find(o) is not None
                      and frames.find(o).shared is slot.shared), key=lambda o: o.name_full)
    return found.states[members.index(obj)].shown()


def play(bpy, objects, frames=range(1, FRAMES + 1)) -> dict[str, list[np.ndarray]]:
    """Play ``frames`` in order; every object's control points at each."""
    scene = bpy.context.scene
    out: dict[str, list[np.ndarray]] = {o.name: [] for o in objects}
    for f in frames:
        scene.frame_set(f)
        for o in objects:
            out[o.name].append(state(o, f).copy())
    return out


def fresh(bpy) -> None:
    """Forget every cached frame (as a new session would)."""
    from tetrig.runtime import scene as driver

    driver.free()


def assert_same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x, y, rtol=0.0, atol=1e-9)


def test_two_cubes_far_apart_move_as_each_alone_and_as_with_soft_bodies_off(bpy):
    from tetrig.runtime.common import frames

    a, b = cube(bpy, "A", -2.0), cube(bpy, "B", 2.0)
    together = play(bpy, (a, b))
    assert frames.find(a).shared is not None and frames.find(a).shared is frames.find(b).shared
    assert np.abs(together["A"][-1] - together["A"][0]).max() > 0.05  # it fell
    for o in (a, b):
        o.tetrig.use_soft_bodies = False
    fresh(bpy)
    off = play(bpy, (a, b))
    assert frames.find(a).shared is None
    assert_same(together["A"], off["A"])
    assert_same(together["B"], off["B"])
    for o in (a, b):
        o.tetrig.use_soft_bodies = True
    for alone, other in ((a, b), (b, a)):
        other.tetrig.simulate = False
        fresh(bpy)
        solo = play(bpy, (alone,))
        assert frames.find(alone).shared is None
        assert_same(together[alone.name], solo[alone.name])
        other.tetrig.simulate = True


def test_a_set_jumped_to_equals_the_set_played_and_its_bake(bpy):
    from tetrig.runtime import bake
    from tetrig.runtime.cage import kind, model
    from tetrig.runtime.common import bake_store, frames

    b, a = cube(bpy, "B", 2.0), cube(bpy, "A", -2.0)  # made out of the members' order (by name)
    played = play(bpy, (a, b))
    fresh(bpy)
    scene = bpy.context.scene
    scene.frame_set(1)
    scene.frame_set(FRAMES)  # a jump: frames 2-11 are stepped without being shown
    for o in (a, b):
        np.testing.assert_allclose(state(o, FRAMES), played[o.name][-1], rtol=0.0, atol=1e-9)
    scene.frame_set(5)  # scrubbing back reads the cache
    for o in (a, b):
        np.testing.assert_allclose(state(o, 5), played[o.name][4], rtol=0.0, atol=1e-9)
    cache = frames.find(a).shared  # what bakes and exports read is the same set, in the same order
    kind.displacements_at(b, scene, FRAMES, bpy.context.evaluated_depsgraph_get())
    assert frames.find(a).shared is cache and frames.find(b).shared is cache
    # baking one member bakes its set, each from the set's frames
    fresh(bpy)
    results = bake.BakeJob([a], scene, 1, FRAMES).run(bpy.context.evaluated_depsgraph_get())
    assert sorted(r.name for r in results) == ["A", "B"]
    for o in (a, b):
        status = bake.status(o, scene)
        assert status is not None and not status.outdated
        live = model.local_displacements(frames.find(o).prepared, played[o.name][-1])
        np.testing.assert_allclose(bake_store.baked_displacements(o, FRAMES), live, rtol=0.0, atol=1e-6)  # float32
    # a partner's setting outdates the bakes of the whole set
    b.tetrig.damping *= 2.0
    assert bake.status(a, scene).outdated and bake.status(b, scene).outdated


def test_bodies_in_different_scenes_are_never_one_set(bpy):
    from tetrig.runtime.common import touching
    from tetrig.runtime.common import frames

    scene = bpy.context.scene
    a, b = cube(bpy, "A", -2.0), cube(bpy, "B", 2.0)
    other = bpy.data.scenes.new("Other")
    other.frame_start, other.frame_end = 1, 120
    other.collection.objects.link(b)
    scene.collection.objects.unlink(b)
    assert touching.groups(touching.candidates(scene)) == []
    assert touching.groups(touching.candidates(other)) == []
    play(bpy, (a,), range(1, 4))
    assert frames.find(a).shared is None


def test_a_collision_collection_restricts_who_is_in_a_set(bpy):
    from tetrig.runtime.common import touching

    scene = bpy.context.scene
    a, b, c = cube(bpy, "A", -2.0), cube(bpy, "B", 0.0), cube(bpy, "C", 2.0)

    def sets() -> list[list[str]]:
        return [[o.name for o in members] for members in touching.groups(touching.candidates(scene))]

    assert sets() == [["A", "B", "C"]]
    group = bpy.data.collections.new("Touching")
    scene.collection.children.link(group)
    group.objects.link(a)
    group.objects.link(b)
    a.tetrig.soft_body_collection = group  # A touches only bodies in the group that have it too
    assert sets() == [["B", "C"]]
    b.tetrig.soft_body_collection = group
    assert sets() == [["A", "B"]]
    c.tetrig.soft_body_collection = group  # C is not in the group: it touches no soft body
    assert touching.group_key(c) is None and sets() == [["A", "B"]]
    b.tetrig.use_soft_bodies = False
    assert sets() == []
    play(bpy, (a, b, c), range(1, 3))


def test_the_soft_bodies_panel_draws_its_settings_and_who_touches(bpy):
    from tetrig.panels import collisions as main

    scene = bpy.context.scene
    a = cube(bpy, "A", -2.0)
    context = SimpleNamespace(active_object=a, region=SimpleNamespace(width=600),
                              preferences=SimpleNamespace(system=SimpleNamespace(ui_scale=1.0)), scene=scene)
    assert main.TETRIG_PT_soft_body_collisions.poll(context)
    shown = drawn_panel(main.TETRIG_PT_soft_body_collisions, context)
    assert shown[:2] == ["soft_body_distance", "soft_body_collection"]
    assert "it steps alone" in " ".join(shown)
    cube(bpy, "B", 2.0)
    assert "Simulated together with B" in " ".join(drawn_panel(main.TETRIG_PT_soft_body_collisions, context))
    a.modifiers.new("Collision", "COLLISION")
    notes = " ".join(drawn_panel(main.TETRIG_PT_collisions, context))  # wrapped to the sidebar's width
    assert "Its Collision modifier is for Blender's Cloth and Soft Body; TetRig soft bodies touch each other " \
        "through Soft Bodies instead" in notes


def test_bodies_placed_inside_each_other_say_so_in_the_panel_and_part_gently(bpy):
    from tetrig.panels import collisions as main
    from tetrig.runtime.common import touching

    scene = bpy.context.scene
    # 1 m balls 20 cm into each other (two cubes in line 10 cm into each other have no vertex deep
    # inside the other: the corners of each lie on the other's faces)
    a, b = ball(bpy, "A", 0.0), ball(bpy, "B", 0.8)
    far = ball(bpy, "C", 3.0)
    positions = play(bpy, [a, b], range(1, 7))
    assert touching.placed_inside(a) == ["B"] and touching.placed_inside(b) == ["A"]
    assert touching.placed_inside(far) == []
    for name, shown in positions.items():  # apart gently: no control point faster than 1 m/s sideways
        for before, after in zip(shown, shown[1:]):
            assert np.all(np.isfinite(after))
            assert np.abs(after[:, 0] - before[:, 0]).max() * scene.render.fps < 1.0, name
    context = SimpleNamespace(active_object=a, region=SimpleNamespace(width=600),
                              preferences=SimpleNamespace(system=SimpleNamespace(ui_scale=1.0)), scene=scene)
    assert "Placed inside B at the start frame" in " ".join(drawn_panel(main.TETRIG_PT_soft_body_collisions, context))


def _world_mesh(bpy, obj) -> tuple[np.ndarray, np.ndarray]:
    """What Blender shows of ``obj``: world-space vertices float64 [N, 3] and triangles int [T, 3]."""
    from blender_helpers import evaluated_positions, world

    obj.data.calc_loop_triangles()
    tris = np.empty(len(obj.data.loop_triangles) * 3, dtype=np.int32)
    obj.data.loop_triangles.foreach_get("vertices", tris)
    return world(obj, evaluated_positions(obj).astype(np.float64)), tris.reshape(-1, 3)


def test_two_soft_balls_dropped_one_onto_the_other_rest_one_on_the_other(bpy):
    """The issue's report: two 0.6 m soft balls, one dropped onto the other, passed 238 mm into each
    other at frame 9. Now the upper one lands on the lower and rests on it, and at no frame is a
    vertex Blender shows more than 1 mm inside the other ball."""
    from tetrig.tetrig_addon import colliders

    balls = []
    for name, z in (("Lower", 0.31), ("Upper", 1.0)):
        bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.3, location=(0.05, 0.0, z))
        obj = bpy.context.active_object
        obj.name = name
        obj.tetrig.use_ground = True
        assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
        balls.append(obj)
    scene = bpy.context.scene
    worst = 0.0
    for frame in range(1, 49):
        scene.frame_set(frame)
        (lower, tris), (upper, _) = (_world_mesh(bpy, o) for o in balls)
        for mine, other in ((lower, upper), (upper, lower)):
            surface = colliders.mesh_collider(other, tris)
            worst = max(worst, -float(colliders.signed_distance(surface, mine)[0].min()))
    assert worst <= 1e-3
    assert upper.mean(axis=0)[2] - lower.mean(axis=0)[2] > 0.5  # on it, not through it (0.6 m apart at rest)
