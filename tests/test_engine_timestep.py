"""The step does not change the material: substeps follow a rate in steps per second, and the
resting shape is the converged one at the default rate (no Blender)."""

import numpy as np
import pytest
from conftest import obj_vertices
from engine_scenes import body, cube_points, rigid_fit, surface
from test_engine_materials import hanging_column

from tetrig_addon import solver

RATE = solver.DEFAULT_STEPS_PER_SECOND


def column_stretch(fps: int, mode: str = solver.MODE_SPRINGS, rate: float = RATE,
                   iterations: int = 1, youngs: float = 1e5) -> float:
    """Steady stretch [m] of a 0.2 × 0.2 × 1 m column (10 cm tets, two across), top pinned,
    after 5 s at ``fps`` with substeps from ``rate``."""
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 5)] * 3, indexing="ij"), -1).reshape(-1, 3)
    from tetrig_addon.cage import build_cage
    cage = build_cage(grid * [0.2, 0.2, 1.0], resolution=10)
    x0 = cage.control_points
    top, bottom = x0[:, 2] > x0[:, 2].max() - 1e-9, x0[:, 2] < x0[:, 2].min() + 1e-9
    model = solver.build_model(x0, cage.tets, density=1000.0, pinned=top)
    settings = solver.SimSettings(mode=mode, youngs_modulus=youngs, volume_stiffness=youngs,
                                  substeps=solver.substeps_for(rate, 1 / fps), iterations=iterations,
                                  damping=5.0).validated()
    state = solver.rest_state(model)
    for _ in range(5 * fps):
        state = solver.step(model, state, settings, 1 / fps)
    return float((model.rest_positions[bottom, 2] - state.positions[bottom, 2]).mean())


@pytest.mark.parametrize("mode", [solver.MODE_SPRINGS, solver.MODE_CONTINUUM])
def test_hanging_column_matches_elasticity_and_its_converged_run_at_the_default_rate(mode):
    """The issue's column (0.2 × 0.2 × 1 m, two cells across, E = 1e5 Pa): within 15 % of
    ρgL²/(2E), and the default rate within 5 % of a converged run (4× the rate, 4 sweeps)."""
    analytic = 1000.0 * 9.81 * 1.0**2 / (2 * 1e5)
    default = column_stretch(24, mode)
    converged = column_stretch(24, mode, rate=4 * RATE, iterations=4)
    assert default == pytest.approx(analytic, rel=0.15)
    assert default == pytest.approx(converged, rel=0.05)


def test_hanging_column_is_the_same_at_12_and_60_fps():
    """240 steps/s: 20 substeps at 12 fps, 4 at 60 fps, the same step."""
    assert column_stretch(12) == pytest.approx(column_stretch(60), rel=0.05)


def test_substeps_follow_the_rate():
    assert [solver.substeps_for(RATE, 1 / fps) for fps in (12, 24, 25, 30, 60, 120, 240, 1000)] == \
        [20, 10, 10, 8, 4, 2, 1, 1]


def test_a_stiff_ball_keeps_its_height_at_any_frame_rate():
    """E = 1e7 Pa at rest on the ground: 0.98 m tall at 24 fps, 0.55 at 2 and 0.16 at 1 fps with
    the old solver. Substeps from the rate keep it within 1 % of its own height."""
    points = obj_vertices("suzanne")
    points = (points - points.mean(0)) / np.ptp(points, axis=0).max() + [0.0, 0.0, 0.6]
    model, b = body(points, resolution=6)
    heights = []
    for fps in (24, 2, 1):
        settings = solver.SimSettings(youngs_modulus=1e7, volume_stiffness=1e8, ground_height=0.0,
                                      substeps=solver.substeps_for(RATE, 1 / fps), damping=3.0).validated()
        state = solver.rest_state(model)
        for _ in range(int(3 * fps)):
            state = solver.step(model, state, settings, 1 / fps)
        heights.append(np.ptp(surface(model, b, state)[:, 2]))
    assert max(heights) - min(heights) < 0.01 * np.ptp(points[:, 2])


@pytest.mark.parametrize("name,youngs", [("stanford-bunny", 1e4), ("stanford-bunny", 1e6), ("spot", 1e6), ("teapot", 1e5)])
def test_resting_shape_at_the_default_rate_is_the_converged_one(name, youngs):
    """A shared mesh at rest on the ground: its deformation (after taking out the rigid motion)
    at the default rate is within 5 % of a converged run (4× the rate, 4 sweeps per substep)."""
    points = obj_vertices(name)[:, [0, 2, 1]] * [1, -1, 1]  # Y-up → Z-up
    points -= [points[:, 0].mean(), points[:, 1].mean(), points[:, 2].min() - 1e-3 * np.ptp(points[:, 2])]
    model, b = body(points)
    sizes = []
    for rate, iterations in ((RATE, 1), (4 * RATE, 4)):
        settings = solver.SimSettings(youngs_modulus=youngs, volume_stiffness=10 * youngs, ground_height=0.0,
                                      substeps=solver.substeps_for(rate, 1 / 24), iterations=iterations,
                                      damping=3.0).validated()
        state = solver.rest_state(model)
        for _ in range(5 * 24):
            state = solver.step(model, state, settings, 1 / 24)
        rotation, shift = rigid_fit(model.rest_positions, state.positions)
        deformation = state.positions - (model.rest_positions @ rotation.T + shift)
        sizes.append(np.sqrt(model.masses @ (deformation**2).sum(1) / model.masses.sum()))
    assert sizes[0] == pytest.approx(sizes[1], rel=0.05)
