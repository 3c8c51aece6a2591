"""The compiled kernel and the NumPy reference give the same positions (no Blender)."""

import numpy as np
import pytest
from test_engine_goals_colliders import dropped_ball, uv_sphere

from tetrig_addon import colliders, solver
from tetrig_addon.solver import backend, contacts

# The bound per frame; measured differences are about 1e-14 m (summation order).
SAME_POSITIONS = 1e-9


@pytest.mark.parametrize("mode, global_iterations, integrator", [
    (solver.MODE_SPRINGS, 0, solver.INTEGRATOR_EULER), (solver.MODE_CONTINUUM, 0, solver.INTEGRATOR_EULER),
    (solver.MODE_PBD, 0, solver.INTEGRATOR_EULER), (solver.MODE_SPRINGS, 2, solver.INTEGRATOR_EULER),
    (solver.MODE_CONTINUUM, 2, solver.INTEGRATOR_EULER), (solver.MODE_SPRINGS, 0, solver.INTEGRATOR_BDF2),
    (solver.MODE_CONTINUUM, 2, solver.INTEGRATOR_BDF2)])
def test_kernel_and_reference_step_the_same_frames(mode, global_iterations, integrator):
    """A ball with goals on its top (weight 0.5) and a pinned cap, dropped on a sphere collider
    and the ground, over frames with the goal moving: each frame both backends step from the same
    state and land within ``SAME_POSITIONS`` of each other; also with the global step
    (``global_solve``), whose contacts, goals and material both backends assemble, and with BDF2
    (``integrator``), whose history both carry to the next frame."""
    pts, b, model = dropped_ball([0.2, 0.0, 1.4], radius=0.3)
    z = model.rest_positions[:, 2]
    goals = np.where(z > z.max() - 0.05, 1.0, np.where(z > z.max() - 0.2, 0.5, 0.0))
    model = solver.build_model(model.rest_positions, model.tets,
                               contacts=(model.contact_indices, model.contact_weights), goal_weights=goals)
    verts, tris = uv_sphere(0.6)
    sphere = colliders.mesh_collider(verts, tris, thickness_outer=0.02)
    settings = solver.SimSettings(mode=mode, ground_height=0.0, iterations=2, global_iterations=global_iterations,
                                  integrator=integrator).validated()
    state = solver.rest_state(model)
    worst = 0.0
    for frame in range(8):
        offset = np.array([0.02 * frame, 0.0, 0.0])
        goal = (model.rest_positions + offset, model.rest_positions + offset + [0.02, 0.0, 0.0])
        kernel = solver.step(model, state, settings, 1 / 24, goals=goal, colliders=[sphere], use_kernel=True)
        numpy = solver.step(model, state, settings, 1 / 24, goals=goal, colliders=[sphere], use_kernel=False)
        worst = max(worst, np.abs(kernel.positions - numpy.positions).max(),
                    np.abs(kernel.velocities - numpy.velocities).max() / 24,
                    np.abs(kernel.shown() - numpy.shown()).max())
        np.testing.assert_allclose(kernel.rotations, numpy.rotations, atol=1e-9)
        assert (kernel.history is None) == (numpy.history is None) == (not settings.second_order)
        if settings.second_order:
            worst = max(worst, np.abs(kernel.history[0] - numpy.history[0]).max(),
                        np.abs(kernel.history[1] - numpy.history[1]).max() / 24)
            assert kernel.history[2] == numpy.history[2] == 1 / 24 / settings.substeps
        state = kernel
    assert worst < SAME_POSITIONS
    assert np.abs(state.positions - model.rest_positions).max() > 0.05  # it did move


def test_kernel_and_reference_plan_the_same_contacts():
    """The frame's contact plan (candidates, shares, stiffness, per-point incidences) and the
    projection of the shown positions are the same from the kernel and from NumPy, on a ball
    resting in the ground after a frame."""
    pts, b, model = dropped_ball([0.0, 0.0, 0.31], radius=0.3)
    settings = solver.SimSettings(ground_height=0.0).validated()
    state = solver.step(model, solver.rest_state(model), settings, 1 / 24)
    state = solver.step(model, state, settings, 1 / 24)
    kernel = backend.kernel()
    sim_dt = 1 / 24 / settings.substeps
    fast = contacts.plan(model, state, settings, (), 1 / 24, sim_dt, kernel)
    slow = contacts.plan(model, state, settings, (), 1 / 24, sim_dt, None)
    assert fast.contact_count == slow.contact_count > 20
    for name in ("indices", "weights", "shares", "normals", "surfaces", "stiffness", "point_offsets",
                 "point_contacts", "point_corners", "free_weights", "free_shares"):
        a, b = getattr(fast, name), getattr(slow, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, err_msg=name)
    lowest = contacts.contact_points(model, state.positions)[:, 2].min()
    sunk = state.positions - [0.0, 0.0, lowest + 0.002]  # the lowest vertex 2 mm in the ground
    shown_fast = contacts.project_out(sunk, model.inverse_masses, slow, compiled=kernel)
    shown_slow = contacts.project_out(sunk, model.inverse_masses, slow)
    assert np.abs(shown_fast - shown_slow).max() < SAME_POSITIONS
    lowest = contacts.contact_points(model, shown_slow)[:, 2].min()
    assert -1e-4 < lowest <= 0.0  # from 2 mm deep to within 0.1 mm of the ground (4 Jacobi passes)


def test_the_backend_is_named_and_compiled_here():
    assert backend.name() == backend.NUMBA
    assert backend.status().startswith("Numba")
    assert backend.unavailable_reason() is None
