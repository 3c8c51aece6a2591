"""The compiled kernel and the NumPy reference give the same positions (no Blender)."""

import numpy as np
import pytest
from test_engine_goals_colliders import dropped_ball, uv_sphere

from tetrig_addon import colliders, solver
from tetrig_addon.solver import backend

# The bound per frame; measured differences are about 1e-14 m (summation order).
SAME_POSITIONS = 1e-9


@pytest.mark.parametrize("mode", [solver.MODE_SPRINGS, solver.MODE_CONTINUUM, solver.MODE_PBD])
def test_kernel_and_reference_step_the_same_frames(mode):
    """A ball with goals on its top (weight 0.5) and a pinned cap, dropped on a sphere collider
    and the ground, over frames with the goal moving: each frame both backends step from the same
    state and land within ``SAME_POSITIONS`` of each other."""
    pts, b, model = dropped_ball([0.2, 0.0, 1.4], radius=0.3)
    z = model.rest_positions[:, 2]
    goals = np.where(z > z.max() - 0.05, 1.0, np.where(z > z.max() - 0.2, 0.5, 0.0))
    model = solver.build_model(model.rest_positions, model.tets,
                               contacts=(model.contact_indices, model.contact_weights), goal_weights=goals)
    verts, tris = uv_sphere(0.6)
    sphere = colliders.mesh_collider(verts, tris, thickness_outer=0.02)
    settings = solver.SimSettings(mode=mode, ground_height=0.0, iterations=2).validated()
    state = solver.rest_state(model)
    worst = 0.0
    for frame in range(8):
        offset = np.array([0.02 * frame, 0.0, 0.0])
        goal = (model.rest_positions + offset, model.rest_positions + offset + [0.02, 0.0, 0.0])
        kernel = solver.step(model, state, settings, 1 / 24, goals=goal, colliders=[sphere], use_kernel=True)
        numpy = solver.step(model, state, settings, 1 / 24, goals=goal, colliders=[sphere], use_kernel=False)
        worst = max(worst, np.abs(kernel.positions - numpy.positions).max(),
                    np.abs(kernel.velocities - numpy.velocities).max() / 24)
        np.testing.assert_allclose(kernel.rotations, numpy.rotations, atol=1e-9)
        state = kernel
    assert worst < SAME_POSITIONS
    assert np.abs(state.positions - model.rest_positions).max() > 0.05  # it did move


def test_the_backend_is_named_and_compiled_here():
    assert backend.name() == backend.NUMBA
    assert backend.status().startswith("Numba")
    assert backend.unavailable_reason() is None
