"""Goals that follow animation and collision objects, in the engine (no Blender)."""

import numpy as np
import pytest
from conftest import obj_triangles, obj_vertices

from tetrig_addon import colliders, solver
from tetrig_addon.cage import bind, blend, build_cage

FPS = 24


def uv_sphere(radius: float, segments: int = 48, rings: int = 24) -> tuple[np.ndarray, np.ndarray]:
    """A closed UV sphere as Blender makes it: poles + rings, outward triangles."""
    theta = np.linspace(0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    verts = np.vstack([[0, 0, 1], ring, [0, 0, -1]]) * radius
    tris = []
    for j in range(segments):
        k = (j + 1) % segments
        tris.append((0, 1 + j, 1 + k))
        for r in range(rings - 2):
            a, b = 1 + r * segments + j, 1 + r * segments + k
            tris += [(a, a + segments, b), (b, a + segments, b + segments)]
        last = 1 + (rings - 2) * segments
        tris.append((len(verts) - 1, last + k, last + j))
    return verts, np.asarray(tris)


def dropped_ball(center, radius=0.3):
    """Suzanne scaled to ``radius``, its cage, binding and model with every vertex a contact."""
    pts = obj_vertices("suzanne")
    pts = (pts - pts.mean(0)) / np.abs(pts - pts.mean(0)).max() * radius + center
    cage = build_cage(pts, resolution=6)
    b = bind(pts, cage.control_points, cage.tets)
    model = solver.build_model(cage.control_points, cage.tets,
                               contacts=(b.control_point_indices, b.weights))
    return pts, b, model


def settle_on(collider, model, b, frames=72):
    settings = solver.SimSettings(damping=2.0).validated()
    state = solver.rest_state(model)
    deepest = []
    for _ in range(frames):
        state = solver.step(model, state, settings, 1 / FPS, colliders=[collider])
        verts = blend(state.positions, b.control_point_indices, b.weights)
        assert np.all(np.isfinite(verts))
        distance, _ = colliders.signed_distance(collider, verts)
        deepest.append(distance.min())
    return state, np.array(deepest)


def test_ball_dropped_on_a_sphere_collider_stays_outside_it():
    verts, tris = uv_sphere(1.0)
    sphere = colliders.mesh_collider(verts, tris, thickness_outer=0.02)
    pts, b, model = dropped_ball([0.1, 0.0, 1.6])
    state, deepest = settle_on(sphere, model, b)
    # touched it (came within the thickness), never sank in by more than the thickness
    assert deepest.min() < 0.02 + 1e-3
    assert deepest.min() > -0.02
    final = blend(state.positions, b.control_point_indices, b.weights)
    assert final[:, 2].max() < pts[:, 2].max() - 0.1  # it fell onto the sphere and slid/rolled


def test_ball_dropped_on_a_mesh_collider_stays_outside_it():
    spot = obj_vertices("spot")[:, [0, 2, 1]] * [1, -1, 1]  # Y-up → Z-up; a closed cow
    collider = colliders.mesh_collider(spot, obj_triangles("spot"),
                                       thickness_outer=0.02, static_friction=0.8,
                                       kinetic_friction=0.8)
    assert collider.closed
    top = spot[np.argmax(spot[:, 2])]
    pts, b, model = dropped_ball(top + [0.0, 0.0, 0.5], radius=0.15)
    state, deepest = settle_on(collider, model, b, frames=48)
    assert deepest.min() < 0.02 + 1e-3
    assert deepest.min() > -0.02


def test_pinned_points_track_the_animation_free_points_lag_overshoot_and_settle():
    pts = obj_vertices("suzanne")[:, [0, 2, 1]] * [1, -1, 1]  # Y-up → Z-up
    cage = build_cage(pts, resolution=6)
    z = cage.control_points[:, 2]
    weights = np.where(z > z.max() - 0.3 * np.ptp(z), 1.0, 0.0)  # the top follows exactly
    model = solver.build_model(cage.control_points, cage.tets, goal_weights=weights)
    pinned = model.inverse_masses == 0.0
    assert pinned.sum() == (weights == 1.0).sum()
    settings = solver.SimSettings(damping=3.0, gravity=(0, 0, 0)).validated()
    # the goal moves 1 m along x in 12 frames (ease in/out), then stops for 108 frames
    offsets = [np.array([0.5 - 0.5 * np.cos(np.pi * min(f, 12) / 12), 0.0, 0.0]) for f in range(121)]
    state = solver.rest_state(model)
    lag, ahead = [], []
    free = ~pinned
    for f in range(1, 121):
        goals = (model.rest_positions + offsets[f - 1], model.rest_positions + offsets[f])
        state = solver.step(model, state, settings, 1 / FPS, goals=goals)
        np.testing.assert_allclose(state.positions[pinned], goals[1][pinned], atol=1e-12)
        shift = (state.positions[free] - model.rest_positions[free])[:, 0].mean()
        (lag if f <= 12 else ahead).append(shift - offsets[f][0])
    assert min(lag) < -0.02  # free parts lag behind while the goal accelerates
    assert max(ahead) > 0.01  # and overshoot when it stops
    assert abs(ahead[-1]) < 5e-3 and np.abs(state.velocities).max() < 0.05  # then settle


def test_goal_weight_pulls_free_points_home_at_its_frequency():
    """One free point, goal weight g, stiffness k: it oscillates at √(g·k)/2π about its goal."""
    model = solver.build_model(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0]]),
                               np.array([[0, 1, 2, 3]]), goal_weights=np.array([1, 1, 1, 0.5]))
    settings = solver.SimSettings(youngs_modulus=1e-9, use_volume=False, damping=0.0,
                                  gravity=(0, 0, 0), goal_stiffness=400.0, goal_damping=0.0,
                                  substeps=40).validated()
    state = solver.State(model.rest_positions + np.array([[0, 0, 0]] * 3 + [[0.1, 0, 0]]), np.zeros((4, 3)))
    xs = []
    for _ in range(96):
        state = solver.step(model, state, settings, 1 / FPS)
        xs.append(state.positions[3, 0])
    xs = np.array(xs)
    crossings = np.flatnonzero((xs[:-1] > 0) & (xs[1:] <= 0))
    t = (crossings + xs[crossings] / (xs[crossings] - xs[crossings + 1])) / FPS
    assert np.diff(t).mean() == pytest.approx(2 * np.pi / np.sqrt(0.5 * 400.0), rel=0.03)


@pytest.mark.parametrize("substeps", [1, 2])
def test_fast_ball_never_goes_through_an_open_plane_even_at_one_substep(substeps):
    """Dropped from 3 m at 24 fps, one substep moves it ~0.3 m: past the plane's inner thickness
    (0.2 m) in one step. The frame-start side still counts it as a hit (continuous in time)."""
    plane = colliders.mesh_collider(np.array([[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0.0]]),
                                    np.array([[0, 1, 2], [0, 2, 3]]), thickness_outer=0.02,
                                    thickness_inner=0.2)
    assert not plane.closed
    pts, b, model = dropped_ball([0.0, 0.0, 3.0])
    settings = solver.SimSettings(damping=2.0, substeps=substeps).validated()
    state = solver.rest_state(model)
    lowest = []
    for _ in range(72):
        state = solver.step(model, state, settings, 1 / FPS, colliders=[plane])
        lowest.append(blend(state.positions, b.control_point_indices, b.weights)[:, 2].min())
    assert min(lowest) > -0.02 and lowest[-1] < 0.05  # it landed on the plane, not under it


def test_a_stiff_goal_holds_at_one_substep():
    """A goal spring is part of each point's local solve, so goal weight 0.999 with a huge
    stiffness holds its points on the goal even at 1 substep."""
    pts = obj_vertices("suzanne")[:, [0, 2, 1]] * [1, -1, 1]
    cage = build_cage(pts, resolution=6)
    model = solver.build_model(cage.control_points, cage.tets, goal_weights=np.full(cage.control_point_count, 0.999))
    settings = solver.SimSettings(substeps=1, goal_stiffness=1e9).validated()
    state = solver.rest_state(model)
    for _ in range(24):
        state = solver.step(model, state, settings, 1 / 12)
    assert np.abs(state.positions - model.rest_positions).max() < 1e-3
