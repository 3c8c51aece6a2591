"""The step does not change the material: substeps follow a rate in steps per second, and the
resting shape is the converged one at the default rate (no Blender)."""

import numpy as np
import pytest
from conftest import obj_vertices
from engine_scenes import RATE, body, column_stretch, settle, standing_on_ground, surface

from tetrig_addon import solver


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
    model, _ = body(standing_on_ground(obj_vertices(name)))
    sizes = [settle(model, youngs, rate, iterations).deformation for rate, iterations in ((RATE, 1), (4 * RATE, 4))]
    assert sizes[0] == pytest.approx(sizes[1], rel=0.05)
