"""Frame cache: frame F gives the same state however it is reached (no Blender)."""

import numpy as np
import pytest
from conftest import obj_vertices

from tetrig_addon import solver
from tetrig_addon.cage import build_cage
from tetrig_addon.timeline import FrameCache


def make(integrator=solver.INTEGRATOR_EULER, fall=0.2):
    cage = build_cage(obj_vertices("suzanne"), resolution=5)
    model = solver.build_model(cage.control_points, cage.tets)
    settings = solver.SimSettings(ground_height=float(cage.control_points[:, 2].min()) - fall, integrator=integrator)
    calls = []

    def advance(state, frame):
        calls.append(frame)
        return solver.step(model, state, settings, 1 / 24)

    return model, advance, calls


@pytest.mark.parametrize("integrator", solver.INTEGRATORS)
def test_jump_play_and_scrub_back_agree(integrator):
    """Also with BDF2, whose state carries the substep before the last (``State.history``): a 2 m
    fall (BDF2 in the air) and the landing (implicit Euler in contact) and back."""
    model, advance, calls = make(integrator, fall=2.0)
    played = FrameCache(1, solver.rest_state(model), "k")
    for f in range(1, 41):
        a = played.state_at(f, advance)
    jumped = FrameCache(1, solver.rest_state(model), "k").state_at(40, advance)
    scrub = FrameCache(1, solver.rest_state(model), "k")
    scrub.state_at(60, advance)
    n = len(calls)
    back = scrub.state_at(40, advance)
    assert len(calls) == n  # going back recomputes nothing
    assert np.array_equal(a.positions, jumped.positions)
    assert np.array_equal(a.positions, back.positions)
    in_air = played.state_at(10, advance)
    assert (in_air.history is not None) == (integrator == solver.INTEGRATOR_BDF2)
    jumped = FrameCache(1, solver.rest_state(model), "k").state_at(10, advance)
    assert np.array_equal(in_air.positions, jumped.positions)


def test_frames_before_start_are_rest():
    model, advance, _ = make()
    cache = FrameCache(10, solver.rest_state(model), "k")
    assert np.array_equal(cache.state_at(3, advance).positions, model.rest_positions)


def test_non_finite_step_freezes_at_last_good_state():
    model, advance, _ = make()

    def explode(state, frame):
        nxt = advance(state, frame)
        if frame >= 5:
            nxt.positions[0, 0] = np.nan
        return nxt

    cache = FrameCache(1, solver.rest_state(model), "k")
    good = cache.state_at(5, explode).positions.copy()
    later = cache.state_at(20, explode)
    assert cache.first_bad_frame == 6
    assert np.all(np.isfinite(later.positions))
    assert np.array_equal(later.positions, good)
