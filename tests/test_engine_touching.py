"""Bodies that touch: cage soft bodies stepped together collide with each other (no Blender)."""

import numpy as np
import pytest
from engine_scenes import box_polygons, fan_triangles, touching_body, uv_sphere_polygons

from tetrig_addon import colliders, solver
from tetrig_addon.body import Control
from tetrig_addon.cage import blend
from tetrig_addon.solver import pairs
from tetrig_addon.touching import TouchingBodies, TouchingState, overlapping

FPS = 24
FALL = Control(1.0 / FPS, (0.0, 0.0, -9.81))
FLOAT = Control(1.0 / FPS, (0.0, 0.0, 0.0))
# The Jelly preset (presets/tetrig/material/Jelly.py) in the Continuum mode: in the Springs mode a
# 0.3 m Jelly cube cannot carry two more (one cube alone at three times the density collapses alike).
JELLY = dict(youngs_modulus=1e4, volume_stiffness=1.67e5, damping=0.5, mode=solver.MODE_CONTINUUM)


def cube_mesh(size: float = 0.3, cuts: int = 6):
    vertices, corners, sizes = box_polygons(size, cuts)
    return vertices, fan_triangles(corners, sizes)


def ball_mesh(radius: float = 0.3):
    vertices, corners, sizes = uv_sphere_polygons(radius, 24, 12)
    return vertices, fan_triangles(corners, sizes)


def bodies_at(mesh, offsets, settings, **kwargs):
    """One body of ``mesh`` (vertices, triangles) at each offset: (TouchingBodies, bindings, rests)."""
    vertices, triangles = mesh
    made = [touching_body(vertices + offset, triangles, settings, **kwargs) for offset in offsets]
    return TouchingBodies(tuple(body for body, _ in made)), [b for _, b in made], triangles


def shown(scene, bindings, state):
    return [blend(p, b.control_point_indices, b.weights) for p, b in zip(scene.shown(state), bindings)]


def deepest(meshes, triangles) -> float:
    """[m] the deepest any body's shown vertex is inside another's closed surface (0: none)."""
    worst = 0.0
    for j, other in enumerate(meshes):
        surface = colliders.mesh_collider(other, triangles)
        for i, mine in enumerate(meshes):
            if i != j:
                worst = max(worst, -float(colliders.signed_distance(surface, mine)[0].min()))
    return worst


def test_bodies_out_of_reach_step_exactly_as_each_alone():
    """Two cubes 1 m apart falling onto the ground: the very numbers of each stepped alone."""
    settings = solver.SimSettings(ground_height=0.0).validated()
    scene, _, _ = bodies_at(cube_mesh(), ([0.0, 0.0, 0.2], [1.0, 0.0, 0.3]), settings)
    state = scene.rest_state([FALL, FALL])
    alone = list(state.states)
    for _ in range(12):
        state = scene.step(state, [FALL, FALL])
        alone = [body.step(s, FALL) for body, s in zip(scene.members, alone)]
        for together, single in zip(state.states, alone):
            assert np.array_equal(together.positions, single.positions)
            assert np.array_equal(together.velocities, single.velocities)


def test_a_frame_stepped_substep_by_substep_is_the_frame():
    """The substep-by-substep path of touching bodies, given no pairs, steps a cube onto the ground
    (contacts, the global step, BDF2 before it lands) as ``solver.step`` does, to 1e-9 m."""
    settings = solver.SimSettings(ground_height=0.0).validated()
    scene, _, _ = bodies_at(cube_mesh(), ([0.0, 0.0, 0.3],), settings)
    body = scene.members[0]
    alone = together = body.rest_state(FALL)
    for _ in range(16):
        alone = body.step(alone, FALL)
        member = pairs.Member(body.model, together, settings, FALL.frame_dt)
        together, = pairs.step_coupled([member], [[]], pairs.ContactSettings())
        assert np.abs(together.positions - alone.positions).max() < 1e-9
        assert np.abs(together.shown() - alone.shown()).max() < 1e-9


@pytest.fixture(scope="module")
def stack():
    """Three 0.3 m Jelly cubes dropped one onto another onto the ground, 8 s: the deepest any
    shown vertex was inside another cube at any frame, the last frame's centres and meshes, and
    how far each centre moved in the last second."""
    settings = solver.SimSettings(ground_height=0.0, **JELLY).validated()
    scene, bindings, triangles = bodies_at(cube_mesh(), [[0.0, 0.0, 0.151 + 0.35 * k] for k in range(3)],
                                           settings, density=1050.0)
    state = scene.rest_state([FALL] * 3)
    worst = 0.0
    for frame in range(1, 8 * FPS + 1):
        state = scene.step(state, [FALL] * 3)
        meshes = shown(scene, bindings, state)
        worst = max(worst, deepest(meshes, triangles))
        if frame == 7 * FPS:
            earlier = [m.mean(axis=0) for m in meshes]
    centres = [m.mean(axis=0) for m in meshes]
    moved = [float(np.linalg.norm(a - b)) for a, b in zip(centres, earlier)]
    return worst, centres, meshes, moved


def test_three_jelly_cubes_come_to_rest_stacked(stack):
    _, centres, meshes, moved = stack
    # in the last second: the lower two are at rest, the top one still rocks a little (measured,
    # a drop from 0.35 m apart: 7.6 mm at 6 s, 3.6 mm at 8 s, 3.3 mm at 10 s; the Jelly's damping of
    # 0.5/s lets a jelly wobble for seconds)
    assert max(moved[:2]) < 0.001 and moved[2] < 0.01
    for below, above in zip(centres, centres[1:]):
        assert above[2] - below[2] > 0.15  # one on the other (a squashed Jelly cube, 0.3 m high unloaded)
    assert max(np.hypot(c[0], c[1]) for c in centres) < 0.1  # over the middle third of the one below


def test_no_stacked_cube_is_ever_a_millimetre_inside_another(stack):
    assert stack[0] <= 1e-3


def test_the_numpy_reference_steps_touching_bodies_as_the_kernel():
    """Two cubes 5 mm apart (inside the contact distance), 3 frames: the same to 1e-9 m."""
    settings = solver.SimSettings(ground_height=0.0).validated()
    scene, _, _ = bodies_at(cube_mesh(), ([0.0, 0.0, 0.1505], [0.02, 0.0, 0.4555]), settings)
    kernel = reference = scene.rest_state([FALL, FALL])
    for _ in range(3):
        kernel = scene.step(kernel, [FALL, FALL], use_kernel=True)
        reference = scene.step(reference, [FALL, FALL], use_kernel=False)
        assert pairs.frame_pairs([pairs.Member(b.model, s, settings, FALL.frame_dt, triangles=b.triangles)
                                  for b, s in zip(scene.members, kernel.states)], scene.contact)[0]
        for k, r in zip(kernel.states, reference.states):
            assert np.abs(k.positions - r.positions).max() < 1e-9


@pytest.mark.parametrize("mesh, size, overlap, reported", [
    (ball_mesh(), 0.6, 0.15, True), (ball_mesh(), 0.6, 0.015, False),
    (cube_mesh(), 0.3, 0.05, True), (cube_mesh(), 0.3, 0.005, False)])
def test_bodies_placed_overlapping_separate_gently(mesh, size, overlap, reported):
    """No gravity, two bodies placed ``overlap`` into each other (the upper one 5 cm and 4 cm aside):
    within a second they are apart, no shown vertex ever moving faster than 1 m/s, nothing
    non-finite. Vertices deeper inside than the contact distance (1 cm) are left alone, and
    ``overlapping`` says so for the panel: the shallower ones around them push the bodies apart,
    and the deep ones come out as they do. (Two boxes whose sides are in line within the contact
    distance push each other aside at up to 1.4 m/s: docs/solver-notes.md.)"""
    settings = solver.SimSettings().validated()
    scene, bindings, triangles = bodies_at(mesh, ([0.0, 0.0, 0.0], [0.05, 0.04, size - overlap]), settings)
    state = scene.rest_state([FLOAT, FLOAT])
    before = shown(scene, bindings, state)
    assert bool(overlapping(scene.members, state.states)) == reported
    assert deepest(before, triangles) > 0.4 * overlap
    for _ in range(FPS):
        state = scene.step(state, [FLOAT, FLOAT])
        assert state.finite()
        now = shown(scene, bindings, state)
        assert max(float(np.linalg.norm(a - b, axis=1).max()) for a, b in zip(now, before)) * FPS < 1.0
        before = now
    assert deepest(before, triangles) == 0.0


def test_a_touching_state_is_finite_and_halts_as_its_members():
    settings = solver.SimSettings().validated()
    scene, _, _ = bodies_at(cube_mesh(), ([0.0, 0.0, 0.0], [1.0, 0.0, 0.0]), settings)
    state = scene.step(scene.rest_state([FALL, FALL]), [FALL, FALL])
    halted = state.halted()
    assert isinstance(halted, TouchingState) and halted.finite()
    assert all(not s.velocities.any() for s in halted.states)
    assert all(np.array_equal(h.positions, s.positions) for h, s in zip(halted.states, state.states))


def test_contact_settings_refuse_bad_values():
    with pytest.raises(Exception, match="contact distance"):
        pairs.ContactSettings(thickness=-1.0)
    with pytest.raises(Exception, match="static at least sliding"):
        pairs.ContactSettings(static_friction=0.1, kinetic_friction=0.5)
