"""Surface bodies that touch (issue 21; ``runtime/common/touching``): a Surface body with Soft Bodies
on joins the set of the cage soft bodies of its scene, collides with them, shares their frame cache
and bakes with them; with Soft Bodies off it steps exactly as alone (real bpy module)."""

from __future__ import annotations

import numpy as np
import pytest
from blender_helpers import COARSE_RESOLUTION, evaluated_positions, shown_mesh
from test_blender_touching import assert_same, fresh, play

FRAMES = 8


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def ball_and_sheet(bpy):
    """A cage ball (ico sphere, r = 0.3 m) resting on the ground, and a 1 m Surface sheet (8 × 8)
    5 cm over its top, ground on: (ball, sheet)."""
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.3, location=(0.0, 0.0, 0.31))
    ball = bpy.context.active_object
    ball.name = "Ball"
    ball.tetrig.resolution = COARSE_RESOLUTION
    ball.tetrig.use_ground = True
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=8, y_subdivisions=8, size=1.0, location=(0.0, 0.0, 0.66))
    sheet = bpy.context.active_object
    sheet.name = "Sheet"
    sheet.tetrig.body_type = "SURFACE"
    sheet.tetrig.use_ground = True
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    return ball, sheet


def deepest(bpy, ball, sheet, frames=range(1, FRAMES + 1)) -> float:
    """[m] the deepest any shown sheet vertex is inside the shown ball over ``frames`` played."""
    from tetrig.tetrig_addon import colliders

    worst = 0.0
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        (ball_points, tris), (sheet_points, _) = shown_mesh(ball), shown_mesh(sheet)
        found = colliders.signed_distance(colliders.mesh_collider(ball_points, tris), sheet_points)[0]
        worst = max(worst, -float(found.min()))
    return worst


def test_a_surface_sheet_lands_on_a_cage_ball_and_soft_bodies_off_steps_it_alone(bpy):
    from tetrig.runtime.common import frames, touching

    ball, sheet = ball_and_sheet(bpy)
    assert touching.groups(touching.candidates(bpy.context.scene)) == [[ball, sheet]]
    assert deepest(bpy, ball, sheet) <= 1e-3  # measured: not inside at any frame
    assert frames.find(sheet).shared is not None and frames.find(sheet).shared is frames.find(ball).shared
    top = shown_mesh(ball)[0][:, 2].max()
    points = shown_mesh(sheet)[0]
    middle = points[np.argmin(np.hypot(points[:, 0], points[:, 1])), 2]  # the grid's middle vertex
    assert top < middle < top + 0.03  # on the ball, the contact distance (1 cm) over it
    together = play(bpy, (ball, sheet), range(1, FRAMES + 1))

    sheet.tetrig.use_soft_bodies = False  # each alone: the sheet falls through the ball
    fresh(bpy)
    assert deepest(bpy, ball, sheet) > 0.05
    off = play(bpy, (ball, sheet), range(1, FRAMES + 1))
    assert frames.find(sheet).shared is None
    ball.tetrig.simulate = False
    fresh(bpy)
    solo = play(bpy, (sheet,), range(1, FRAMES + 1))
    assert_same(off["Sheet"], solo["Sheet"])
    ball.tetrig.simulate = True
    assert np.abs(together["Sheet"][-1] - off["Sheet"][-1]).max() > 0.05


def test_a_mixed_set_jumped_to_equals_it_played_and_bakes_as_it_plays(bpy):
    from tetrig.runtime import bake

    ball, sheet = ball_and_sheet(bpy)
    scene = bpy.context.scene
    played = play(bpy, (ball, sheet), range(1, FRAMES + 1))
    shown = {o.name: evaluated_positions(o).copy() for o in (ball, sheet)}
    fresh(bpy)
    scene.frame_set(1)
    scene.frame_set(FRAMES)  # a jump: the frames between are stepped without being shown
    jumped = play(bpy, (ball, sheet), [FRAMES])
    for o in (ball, sheet):
        np.testing.assert_allclose(jumped[o.name][0], played[o.name][-1], rtol=0.0, atol=1e-9)
    # baking the sheet bakes its set, each from the set's frames
    fresh(bpy)
    results = bake.BakeJob([sheet], scene, 1, FRAMES).run(bpy.context.evaluated_depsgraph_get())
    assert sorted(r.name for r in results) == ["Ball", "Sheet"]
    fresh(bpy)
    scene.frame_set(1)
    scene.frame_set(FRAMES)
    for o in (ball, sheet):
        status = bake.status(o, scene)
        assert status is not None and not status.outdated
        np.testing.assert_allclose(evaluated_positions(o), shown[o.name], rtol=0.0, atol=1e-5)  # float32
    ball.tetrig.damping *= 2.0  # a partner's setting outdates the bakes of the whole set
    assert bake.status(sheet, scene).outdated and bake.status(ball, scene).outdated


def test_the_soft_bodies_panel_shows_for_a_surface_body(bpy):
    from types import SimpleNamespace

    from blender_helpers import drawn_panel
    from tetrig.panels import collisions

    ball, sheet = ball_and_sheet(bpy)
    context = SimpleNamespace(active_object=sheet, region=SimpleNamespace(width=600),
                              preferences=SimpleNamespace(system=SimpleNamespace(ui_scale=1.0)),
                              scene=bpy.context.scene)
    assert collisions.TETRIG_PT_soft_body_collisions.poll(context)
    assert "Simulated together with Ball" in " ".join(drawn_panel(collisions.TETRIG_PT_soft_body_collisions,
                                                                  context))
