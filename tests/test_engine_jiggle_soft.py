"""Jiggle chains against soft bodies' surfaces (issue 21): the clipped collider of a deforming
surface (``colliders.clipped``), a rig stepped with a surface in its control, and the box a step
stays in (``jiggle.reach``). Engine only, no Blender."""

from __future__ import annotations

import numpy as np

from jiggle_scenes import chain_rig, rig_pose, smooth_motion
from tetrig_addon import colliders, jiggle
from tetrig_addon.body import Control
from tetrig_addon.colliders import clipped


def sphere(radius: float, center: tuple[float, float, float], rings: int = 24,
           segments: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """A closed UV sphere: vertices float64 [V, 3] [m], triangles int32 [T, 3] counterclockwise
    seen from outside."""
    theta = np.linspace(0.0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], axis=-1).reshape(-1, 3)
    verts = np.concatenate([[[0.0, 0.0, 1.0]], ring, [[0.0, 0.0, -1.0]]]) * radius + np.asarray(center)
    top, bottom = 0, len(verts) - 1

    def at(r: int, s: int) -> int:
        return 1 + r * segments + s % segments

    tris = [(top, at(0, s), at(0, s + 1)) for s in range(segments)]
    for r in range(rings - 2):
        for s in range(segments):
            tris += [(at(r, s), at(r + 1, s), at(r + 1, s + 1)), (at(r, s), at(r + 1, s + 1), at(r, s + 1))]
    tris += [(bottom, at(rings - 2, s + 1), at(rings - 2, s)) for s in range(segments)]
    return verts, np.array(tris, dtype=np.int32)


def longest_edge(verts: np.ndarray, tris: np.ndarray) -> float:
    corners = verts[tris]
    return float(np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2).max())


def test_the_clipped_collider_measures_as_the_whole_surface_near_the_points():
    verts, tris = sphere(0.3, (0.0, 0.0, 0.0))
    whole = colliders.mesh_collider(verts, tris, thickness_outer=0.0)
    surface = clipped.clipped_surface(verts, tris, longest_edge(verts, tris))
    rng = np.random.default_rng(3)
    direction = np.array([0.3, 0.2, 1.0]) / np.linalg.norm([0.3, 0.2, 1.0])
    points = direction * 0.3 + rng.uniform(-0.03, 0.03, (200, 3))
    part = clipped.around(surface, points, 0.05)
    assert part is not None and len(part.triangles) < len(whole.triangles) / 2  # a patch, not the ball
    mine, mine_n = colliders.signed_distance(part, points)
    theirs, theirs_n = colliders.signed_distance(whole, points)
    within = np.abs(theirs) <= 0.05
    assert within.sum() > 150
    np.testing.assert_allclose(mine[within], theirs[within], rtol=0.0, atol=1e-12)
    np.testing.assert_allclose(mine_n[within], theirs_n[within], rtol=0.0, atol=1e-9)
    assert clipped.around(surface, points[:20] * 0.999, 0.05) is part  # inside its region: kept
    assert clipped.around(surface, np.array([[2.0, 0.0, 0.0]]), 0.05) is None  # nothing near


def _drop(meshes_in_pose: bool, seconds: float = 2.0) -> tuple[jiggle.ChainModel, list, np.ndarray, np.ndarray]:
    """A 5-bone chain (radius 2 cm) sagging under gravity onto a ball below it, stepped as a rig
    body with the ball's surface in each frame's control (a soft body), or in the pose (a mesh
    collider): (model, states, ball vertices, triangles)."""
    model, _, offsets = chain_rig(1, 5, length=0.08, stiffness=4.0, damping=12.0, radius=0.02)
    verts, tris = sphere(0.25, (0.05, 0.25, -0.28))
    edge = longest_edge(verts, tris)
    whole = colliders.mesh_collider(verts, tris, thickness_outer=0.0)
    fps = 24
    settings = jiggle.JiggleSettings(frame_dt=1.0 / fps, substeps=10, gravity=(0.0, 0.0, -9.81))
    body = jiggle.RigBody(model, settings)
    root = smooth_motion(0.0, 1.0, 0.1)

    def pose(f: int) -> jiggle.FramePose:
        extra = {"meshes": (whole,)} if meshes_in_pose else {}
        return rig_pose(model, offsets, root(f / fps), **extra)

    p = pose(0)
    states = [body.rest_state(Control(settings.frame_dt, settings.gravity, (p, p)))]
    for f in range(1, int(seconds * fps) + 1):
        nxt = pose(f)
        soft = () if meshes_in_pose else (clipped.clipped_surface(verts, tris, edge),)
        states.append(body.step(states[-1], Control(settings.frame_dt, settings.gravity, (p, nxt), soft)))
        p = nxt
    return model, states, verts, tris


def test_a_chain_falling_onto_a_soft_surface_rests_on_it_as_on_a_mesh_collider():
    model, states, verts, tris = _drop(meshes_in_pose=False)
    whole = colliders.mesh_collider(verts, tris, thickness_outer=0.0)
    tails = np.array([s.chain.positions for s in states])
    dist, _ = colliders.signed_distance(whole, tails.reshape(-1, 3))
    clearance = dist.reshape(len(states), -1) - model.radius
    assert clearance.min() >= -1e-4  # never inside the radius (the length kept after the push: 11 µm)
    assert clearance[-1].min() < 1e-3  # resting on the ball
    assert np.abs(states[-1].chain.velocities).max() < 0.05  # at rest
    assert not states[-1].pose.meshes  # the frame's surface is not kept in the state
    _, as_mesh, _, _ = _drop(meshes_in_pose=True)
    np.testing.assert_allclose(tails, np.array([s.chain.positions for s in as_mesh]), rtol=0.0, atol=1e-9)


def test_reach_holds_every_tail_of_a_step():
    model, _, offsets = chain_rig(2, 4, length=0.1, stiffness=30.0, damping=2.0, radius=0.03)
    root = smooth_motion(0.0, 0.5, 0.8)
    settings = jiggle.JiggleSettings(frame_dt=1.0 / 24, substeps=10, gravity=(0.0, 0.0, -9.81))
    p = rig_pose(model, offsets, root(0.0))
    state = jiggle.rest_state(model, p)
    for f in range(1, 30):
        nxt = rig_pose(model, offsets, root(f / 24))
        lo, hi = jiggle.reach(model, state, p, nxt, settings.frame_dt)
        state = jiggle.step(model, state, p, nxt, settings)
        reached = state.positions[:, None, :] + np.array([-1.0, 1.0])[None, :, None] * model.radius[:, None, None]
        assert np.all(reached >= lo) and np.all(reached <= hi)
        assert np.all(hi - lo < 2.0)  # a box about the rig, not everything
        p = nxt
