"""Self Collision of Surface bodies in Blender (issue 21; ``tetrig_addon.solver.self_contact``): the
Collisions panel's Self Collision subpanel and its Distance, the body's keys, and a cloth dropped
edge-on onto a cage ball that folds onto itself without passing through itself, played, jumped to
and baked alike (real bpy module)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from blender_helpers import COARSE_RESOLUTION, evaluated_positions, shown_mesh
from intersections import count_intersections
from test_blender_touching import fresh

FRAMES = 16


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def ball_and_cloth(bpy, self_collision=True):
    """A cage ball (ico sphere, r = 0.2 m) on the ground and a 0.8 m Surface cloth (24 × 24 quads,
    limp) held upright 2 cm over it, Self Collision on or off: (ball, cloth)."""
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.2, location=(0.0, 0.0, 0.21))
    ball = bpy.context.active_object
    ball.name = "Ball"
    ball.tetrig.resolution = COARSE_RESOLUTION
    ball.tetrig.use_ground = True
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=24, y_subdivisions=24, size=0.8, location=(0.0, 0.0, 0.84),
                                    rotation=(math.pi / 2, 0.0, 0.0))
    cloth = bpy.context.active_object
    cloth.name = "Cloth"
    cloth.tetrig.body_type = "SURFACE"
    cloth.tetrig.use_ground = True
    cloth.tetrig.bending = 1e-4
    cloth.tetrig.use_self_collision = self_collision
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    return ball, cloth


def intersections(bpy, cloth, frames=range(1, FRAMES + 1)) -> list[int]:
    """The cloth's triangle–triangle intersections (neighbours excluded) at each frame played."""
    counts = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        counts.append(count_intersections(*shown_mesh(cloth)))
    return counts


def test_the_self_collision_subpanel_and_its_keys(bpy):
    """Off by default, Distance 1 cm; the subpanel shows for a Surface body and a cage; on,
    it changes the body's bake fingerprint, off again it is the fingerprint of before (bakes made
    without it stay current)."""
    from types import SimpleNamespace

    from blender_helpers import drawn_panel
    from tetrig.panels import collisions
    from tetrig.runtime.surface.kind import SurfaceKind

    ball, cloth = ball_and_cloth(bpy, self_collision=False)
    assert cloth.tetrig.self_distance == pytest.approx(0.01)
    context = SimpleNamespace(active_object=cloth, region=SimpleNamespace(width=600),
                              preferences=SimpleNamespace(system=SimpleNamespace(ui_scale=1.0)),
                              scene=bpy.context.scene)
    assert collisions.TETRIG_PT_self_collision.poll(context)
    assert drawn_panel(collisions.TETRIG_PT_self_collision, context) == ["self_distance"]
    # a soft body's too, with what counts as its neighbours (``cage_self``)
    on_ball = SimpleNamespace(**{**vars(context), "active_object": ball})
    assert collisions.TETRIG_PT_self_collision.poll(on_ball)
    drawn = drawn_panel(collisions.TETRIG_PT_self_collision, on_ball)
    assert drawn[0] == "self_distance" and " ".join(drawn[1:]) == "Parts nearer than 4× this at rest never collide"
    scene, matrix = bpy.context.scene, np.asarray(cloth.matrix_world)
    before = SurfaceKind().fingerprint(cloth, scene, matrix)
    cloth.tetrig.use_self_collision = True
    assert SurfaceKind().fingerprint(cloth, scene, matrix) != before
    cloth.tetrig.self_distance = 0.02
    on = SurfaceKind().fingerprint(cloth, scene, matrix)
    cloth.tetrig.use_self_collision = False
    assert SurfaceKind().fingerprint(cloth, scene, matrix) == before != on


def test_a_cloth_folding_on_a_ball_never_passes_through_itself(bpy):
    """Acceptance, in what Blender shows: dropped edge-on onto the ball, the cloth folds through
    itself with Self Collision off, and with it on no two of its triangles that are not neighbours
    ever meet; the frames jumped to and baked are those played."""

    ball, cloth = ball_and_cloth(bpy, self_collision=False)
    assert max(intersections(bpy, cloth)) > 0
    cloth.tetrig.use_self_collision = True
    fresh(bpy)
    assert intersections(bpy, cloth) == [0] * FRAMES  # played up to FRAMES
    assert_jumped_and_baked_as_played(bpy, cloth, ["Ball", "Cloth"])


def assert_jumped_and_baked_as_played(bpy, obj, baked: list[str]) -> None:
    """Frame ``FRAMES`` just played shows the same when jumped to from frame 1 (1e-9 m) and when
    baked (1e-5 m, float32); the bake of ``obj`` bakes the objects named ``baked``."""
    from tetrig.runtime import bake

    played = evaluated_positions(obj).copy()
    fresh(bpy)
    scene = bpy.context.scene
    scene.frame_set(1)
    scene.frame_set(FRAMES)  # a jump
    np.testing.assert_allclose(evaluated_positions(obj), played, rtol=0.0, atol=1e-9)
    fresh(bpy)
    results = bake.BakeJob([obj], scene, 1, FRAMES).run(bpy.context.evaluated_depsgraph_get())
    assert sorted(r.name for r in results) == baked
    fresh(bpy)
    scene.frame_set(FRAMES)
    np.testing.assert_allclose(evaluated_positions(obj), played, rtol=0.0, atol=1e-5)  # float32


def soft_u(bpy, self_collision: bool):
    """The soft U in Blender (``engine_scenes.soft_u_object``): (object, its mesh's vertices)."""
    from engine_scenes import soft_u_object

    return soft_u_object(bpy, self_collision)


def upper_arm_lowest(bpy, obj, points, frames) -> list[float]:
    """[m] the lowest shown vertex of the free part of the U's upper arm at each frame played."""
    from engine_scenes import GAP, THICK

    upper = (points[:, 2] > THICK + GAP / 2) & (points[:, 0] > 0.2)
    lowest = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        lowest.append(float(evaluated_positions(obj)[upper, 2].min()))
    return lowest


def test_a_soft_body_rests_on_itself(bpy):
    """A soft body (cage) with Self Collision: the upper arm of a U sags onto its pinned lower arm
    (top at 6 cm) and rests on it, never 1 mm inside, where without it falls through; the frames
    jumped to and baked are those played."""
    obj, points = soft_u(bpy, self_collision=False)
    assert min(upper_arm_lowest(bpy, obj, points, range(1, FRAMES + 1))) < 0.0
    obj.tetrig.use_self_collision = True
    fresh(bpy)
    lowest = upper_arm_lowest(bpy, obj, points, range(1, FRAMES + 1))
    assert min(lowest) > 0.06 - 0.001
    assert lowest[-1] < 0.08  # on it
    assert_jumped_and_baked_as_played(bpy, obj, ["U"])
