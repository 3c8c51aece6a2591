"""Material models: the continuum (corotated FEM) tets against elasticity theory, and the
substep independence of the steady state (no Blender)."""

import numpy as np
import pytest
from conftest import obj_vertices

from tetrig_addon import solver
from tetrig_addon.cage import build_cage
from tetrig_addon.errors import TetRigInputError

G, RHO = 9.81, 1000.0
# A 10 m column of 1 m tets, 2 m square, top face pinned. E is chosen for a 5 % strain at the top
# (ρ·g·L/E = 0.05): small strain, where ρgL²/(2E) holds.
LENGTH, WIDTH = 10.0, 2.0
E = RHO * G * LENGTH / 0.05


def hanging_column(resolution: int = 10) -> tuple[solver.Model, np.ndarray]:
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 5)] * 3, indexing="ij"), -1).reshape(-1, 3)
    cage = build_cage(grid * [WIDTH, WIDTH, LENGTH], resolution=resolution)
    x0 = cage.control_points
    top = x0[:, 2] > x0[:, 2].max() - 1e-9
    bottom = x0[:, 2] < x0[:, 2].min() + 1e-9
    return solver.build_model(x0, cage.tets, density=RHO, pinned=top), bottom


def steady_stretch(mode: str, substeps: int, bulk: float = E, resolution: int = 10) -> float:
    model, bottom = hanging_column(resolution)
    settings = solver.SimSettings(mode=mode, youngs_modulus=E, volume_stiffness=bulk,
                                  substeps=substeps, damping=5.0).validated()
    state = solver.rest_state(model)
    for _ in range(100):
        state = solver.step(model, state, settings, 1 / 24)
    assert np.abs(state.velocities).max() < 1e-3  # settled
    return float((model.rest_positions[bottom, 2] - state.positions[bottom, 2]).mean())


@pytest.mark.parametrize("mode", [solver.MODE_CONTINUUM, solver.MODE_SPRINGS])
def test_hanging_column_stretches_rho_g_l2_over_2e(mode):
    """The continuum tets (the issue's check), and the edge springs calibrated by
    ``solver.spring_moduli`` (uncalibrated, l²/(E·V_e) springs stretched 4.5 times as far)."""
    analytic = RHO * G * LENGTH**2 / (2 * E)  # 0.25 m
    assert steady_stretch(mode, 10) == pytest.approx(analytic, rel=0.15)


@pytest.mark.parametrize("resolution", [8, 14])
def test_continuum_stretch_does_not_depend_on_the_cage_resolution(resolution):
    """64 and 256 tets instead of 184. (Spring networks do depend on it: the calibrated springs
    stretch 0.34-0.90 of the analytic value over these three cages, measured.)"""
    analytic = RHO * G * LENGTH**2 / (2 * E)
    assert steady_stretch(solver.MODE_CONTINUUM, 40, resolution=resolution) == pytest.approx(analytic, rel=0.15)


@pytest.mark.parametrize("mode", [solver.MODE_CONTINUUM, solver.MODE_SPRINGS])
def test_steady_sag_is_the_same_at_10_and_40_substeps(mode):
    assert steady_stretch(mode, 10) == pytest.approx(steady_stretch(mode, 40), rel=0.05)


def test_spring_moduli_give_the_network_the_materials_lame_parameters():
    settings = solver.SimSettings(youngs_modulus=1e5, volume_stiffness=1e6)
    mu, lam = solver.lame_parameters(1e5, 1e6)
    edge, volume = solver.spring_moduli(settings)
    assert edge / 15 == pytest.approx(mu) and edge / 15 + volume == pytest.approx(lam)
    assert solver.spring_moduli(solver.SimSettings(youngs_modulus=1e5, use_volume=False)) == (6e5, 1e6)


def test_lame_parameters_match_e_and_k():
    mu, lam = solver.lame_parameters(1e5, 1e6)
    assert 9 * (lam + 2 * mu / 3) * mu / (3 * (lam + 2 * mu / 3) + mu) == pytest.approx(1e5)  # E
    assert lam + 2 * mu / 3 == pytest.approx(1e6)  # K
    with pytest.raises(TetRigInputError, match="third of the stiffness"):
        solver.SimSettings(mode=solver.MODE_CONTINUUM, youngs_modulus=1e5, volume_stiffness=3e4).validated()


def test_continuum_rest_is_an_equilibrium_and_rotations_cost_nothing():
    cage = build_cage(obj_vertices("spot"))
    model = solver.build_model(cage.control_points, cage.tets)
    settings = solver.SimSettings(mode=solver.MODE_CONTINUUM, gravity=(0, 0, 0))
    state = solver.step(model, solver.rest_state(model), settings, 1 / 24)
    assert np.abs(state.positions - model.rest_positions).max() < 1e-12
    angle = 1.0  # a rigid turn about z, with each tet's rotation estimate where motion left it
    c, s = np.cos(angle), np.sin(angle)
    rotated = model.rest_positions @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T
    quaternions = np.tile([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)], (model.tet_count, 1))
    state = solver.step(model, solver.State(rotated, np.zeros_like(rotated), quaternions), settings, 1 / 24)
    assert np.abs(state.positions - rotated).max() < 1e-9


def test_continuum_rotation_estimates_converge_from_rest():
    """Started at identity, each tet's rotation estimate reaches the rotation of its deformation
    gradient (polar decomposition by SVD) within a frame of a 1 rad turn, up to the motion since
    the tet was last visited in the frame's last sweep."""
    from tetrig_addon.solver import continuum

    cage = build_cage(obj_vertices("spot"))
    model = solver.build_model(cage.control_points, cage.tets)
    settings = solver.SimSettings(mode=solver.MODE_CONTINUUM, gravity=(0, 0, 0), damping=50.0)
    c, s = np.cos(1.0), np.sin(1.0)
    rotated = model.rest_positions @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T
    state = solver.State(rotated, np.zeros_like(rotated), solver.rest_state(model).rotations)
    state = solver.step(model, state, settings, 1 / 24)
    p = state.positions[model.tets]
    f = np.transpose(p[:, 1:] - p[:, :1], (0, 2, 1)) @ model.inverse_rest_shapes
    u, _, vt = np.linalg.svd(f)
    polar = u @ vt
    estimate = np.array(continuum.rotation_matrix(*state.rotations.T)).T.reshape(-1, 3, 3)
    assert np.abs(estimate - polar).max() < 1e-3


@pytest.mark.parametrize("substeps,youngs,global_iterations", [(1, 1e9, 0), (1, 1.0, 0), (10, 1e7, 0),
                                                                (1, 1e9, 2), (1, 1.0, 2)])
def test_continuum_extreme_settings_stay_finite(substeps, youngs, global_iterations):
    """Every point flung at up to 50 m/s: finite and within reach. With the global step too, which
    is skipped while tets are inverted (without that guard this went to NaN)."""
    cage = build_cage(obj_vertices("suzanne"), resolution=6)
    model = solver.build_model(cage.control_points, cage.tets, density=1e-3)
    settings = solver.SimSettings(mode=solver.MODE_CONTINUUM, substeps=substeps, youngs_modulus=youngs,
                                  volume_stiffness=youngs * 10, max_speed=50.0, global_iterations=global_iterations,
                                  ground_height=float(cage.control_points[:, 2].min()) - 1.0).validated()
    state = solver.rest_state(model)
    state.velocities[:] = np.random.default_rng(3).normal(scale=1e4, size=state.velocities.shape)
    for _ in range(24):
        state = solver.step(model, state, settings, 1 / 12)
        assert np.all(np.isfinite(state.positions))
    assert np.abs(state.positions - model.rest_positions).max() < 24 / 12 * 50.0 + 10.0
