"""The time integrator (``solver.integrator``): BDF2 keeps a swing that implicit Euler damps, rests
where implicit Euler rests, and restarts from implicit Euler where its history cannot go on (no
Blender)."""

import numpy as np
import pytest
from engine_scenes import column_stretch, slide_on_slope

from tetrig_addon import solver
from tetrig_addon.cage import build_cage
from tetrig_addon.errors import TetRigInputError
from tetrig_addon.solver.integrator import history_start


def kicked_bar_swing(integrator: str) -> tuple[float, float]:
    """A 1 × 0.1 × 0.1 m bar (Springs, E = 1e8 Pa, 1000 kg/m³) pinned at x = 0, no gravity and no
    damping, kicked upwards at 0.1 m/s per metre from the pin, stepped 1 s at 24 fps with the
    default rate and 3 global iterations (a converged solve, so the integrator shows): the tip's
    largest |sag| [m] in the first and in the last third of the second (an undamped swing keeps its
    height: about 6.2 mm, 2.6 Hz)."""
    grid = np.stack(np.meshgrid(np.linspace(0, 1, 21), np.linspace(0, 0.1, 3), np.linspace(0, 0.1, 3),
                                indexing="ij"), -1).reshape(-1, 3)
    cage = build_cage(grid, resolution=10)
    x0 = cage.control_points
    pinned = x0[:, 0] < x0[:, 0].min() + 1e-3
    tip = x0[:, 0] > x0[:, 0].max() - 1e-3
    model = solver.build_model(x0, cage.tets, density=1000.0, pinned=pinned)
    settings = solver.SimSettings(youngs_modulus=1e8, volume_stiffness=1e8 / 1.2, damping=0.0, gravity=(0, 0, 0),
                                  global_iterations=3, integrator=integrator).validated()
    velocities = np.zeros_like(x0)
    velocities[~pinned, 2] = 0.1 * (x0[~pinned, 0] - x0[:, 0].min())
    state = solver.State(x0.copy(), velocities, solver.rest_state(model).rotations)
    sag = []
    for _ in range(24):
        state = solver.step(model, state, settings, 1 / 24)
        sag.append(float((state.positions[tip, 2] - x0[tip, 2]).mean()))
    sag = np.abs(sag)
    return float(sag[:8].max()), float(sag[16:].max())


def test_bdf2_keeps_a_free_swing_that_implicit_euler_damps():
    """Measured: implicit Euler keeps 62 % of the swing after a second (5.80 → 3.58 mm), BDF2
    100 % (6.09 → 6.07 mm; the same bar at 2,400 steps/s: 6.26 → 6.14 mm)."""
    first, last = kicked_bar_swing(solver.INTEGRATOR_BDF2)
    assert first == pytest.approx(6.26e-3, rel=0.05)
    assert last == pytest.approx(first, rel=0.05)
    first, last = kicked_bar_swing(solver.INTEGRATOR_EULER)
    assert last < 0.7 * first


def test_bdf2_hangs_a_column_where_implicit_euler_does():
    """The resting shape is the material's whatever the integrator (within 1 % here)."""
    euler = column_stretch(24)
    assert euler > 0.02
    assert column_stretch(24, integrator=solver.INTEGRATOR_BDF2) == pytest.approx(euler, rel=0.01)


def test_the_history_carries_over_only_where_it_can():
    """A BDF2 frame leaves the substep before its last in the state; the next frame goes on from it
    at the same step length only: a halted state, another rate, or implicit Euler start afresh."""
    cage = build_cage(np.random.default_rng(1).random((60, 3)), resolution=4)
    model = solver.build_model(cage.control_points, cage.tets)
    bdf2 = solver.SimSettings(integrator=solver.INTEGRATOR_BDF2).validated()
    state = solver.step(model, solver.rest_state(model), bdf2, 1 / 24)
    positions, velocities, step = state.history
    assert step == pytest.approx(1 / 240)
    assert positions.shape == velocities.shape == state.positions.shape
    assert not np.array_equal(positions, state.positions)  # one substep back
    x_old, v_old = history_start(state, bdf2, 1 / 240)
    assert np.array_equal(x_old, positions) and x_old is not positions
    assert np.array_equal(v_old, velocities)
    assert history_start(state, bdf2, 1 / 120) is None
    euler = solver.SimSettings(integrator=solver.INTEGRATOR_EULER).validated()
    assert history_start(state, euler, 1 / 240) is None
    assert history_start(state.halted(), bdf2, 1 / 240) is None
    assert solver.step(model, state, euler, 1 / 24).history is None
    with pytest.raises(TetRigInputError, match="integrator"):
        solver.SimSettings(integrator="RK4").validated()


def test_frames_in_contact_step_with_implicit_euler():
    """BDF2 with one sweep does not damp what the unconverged contacts leave (measured with BDF2 in
    contact: a cube on a 15° slope with μ = 0.5 slid 35 mm in 5 s), so a frame with contact
    candidates steps with implicit Euler: the same positions as Euler's from the same state, and
    the cube holds on the slope (under 5 mm, as with implicit Euler); a frame in the air differs."""
    ball = build_cage(np.random.default_rng(2).normal(size=(200, 3)) * 0.1, resolution=5)
    model = solver.build_model(ball.control_points - [0.0, 0.0, ball.control_points[:, 2].min() - 0.6], ball.tets)
    euler, bdf2 = (solver.SimSettings(ground_height=0.0, integrator=i).validated() for i in solver.INTEGRATORS)
    state = solver.step(model, solver.rest_state(model), bdf2, 1 / 24)
    assert state.history is not None  # in the air: BDF2's
    assert not np.array_equal(solver.step(model, state, bdf2, 1 / 24).positions,
                              solver.step(model, state, euler, 1 / 24).positions)
    for _ in range(12):
        state = solver.step(model, state, bdf2, 1 / 24)
    assert state.positions[:, 2].min() < 0.01  # landed
    assert np.array_equal(solver.step(model, state, bdf2, 1 / 24).positions,
                          solver.step(model, state, euler, 1 / 24).positions)
    assert abs(slide_on_slope(0.5, 10, integrator=solver.INTEGRATOR_BDF2)) < 0.005


@pytest.mark.parametrize("integrator", solver.INTEGRATORS)
def test_damping_and_goal_damping_act_at_their_rate_whatever_the_integrator(integrator):
    """Damping d [1/s]: a free body's velocity decays as exp(−d·t) and a fall's top speed is g/d
    (a helper found BDF2 damping 1.5× as much: exp(−3) for exp(−2)); goal damping c on points of
    goal weight w: their speed relative to the goal decays as exp(−c·w·t) (within 3 %)."""
    cage = build_cage(np.random.default_rng(3).random((80, 3)) * 0.3, resolution=4)
    model = solver.build_model(cage.control_points, cage.tets)
    state = solver.rest_state(model)
    moving = solver.State(state.positions, np.tile([1.0, 0.0, 0.0], (model.particle_count, 1)), state.rotations)
    free = solver.SimSettings(damping=2.0, gravity=(0, 0, 0), integrator=integrator).validated()
    s = moving
    for _ in range(24):
        s = solver.step(model, s, free, 1 / 24)
    assert s.velocities[:, 0].mean() == pytest.approx(np.exp(-2.0), rel=0.03)
    fall = solver.SimSettings(damping=4.0, integrator=integrator).validated()
    s = state
    for _ in range(72):
        s = solver.step(model, s, fall, 1 / 24)
    assert -s.velocities[:, 2].mean() == pytest.approx(9.81 / 4.0, rel=0.03)
    held = solver.build_model(cage.control_points, cage.tets, goal_weights=np.full(model.particle_count, 0.5))
    goal = solver.SimSettings(damping=0.0, gravity=(0, 0, 0), goal_stiffness=0.0, goal_damping=2.0,
                              integrator=integrator).validated()
    s = moving
    for _ in range(24):
        s = solver.step(held, s, goal, 1 / 24)
    assert s.velocities[:, 0].mean() == pytest.approx(np.exp(-1.0), rel=0.03)
