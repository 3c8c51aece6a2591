"""Jiggle bones engine (tetrig_addon/jiggle): the analytic oscillator, frame-rate and scale
independence, chains (lag, cone, length), colliders, teleports, the compiled path, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import curve_fit

from jiggle_scenes import chain_rig, damped, rig_pose, simulate, smooth_motion, step_motion
from tetrig_addon import colliders, jiggle
from tetrig_addon.errors import TetRigInputError
from tetrig_addon.jiggle import backend

FREQ = 1.5  # Hz, the undamped swing of the test bones
K = (2.0 * math.pi * FREQ) ** 2
STEP = 0.02  # m: the parent's jump, small against the 1 m bone (linear regime)
STEP_AT = 0.5  # s


@pytest.fixture(scope="module", autouse=True)
def compiled_jiggle():
    """Steps take the compiled kernel where it loads (the NumPy path is run explicitly too)."""
    backend.warm_up()


def _single(damping: float, fps: float, scale: float = 1.0, seconds: float = 3.5, stiffness: float = K):
    model, _, offsets = chain_rig(1, 1, length=1.0, stiffness=stiffness, damping=damping, gravity_scale=0.0)
    run = simulate(model, offsets, step_motion(STEP_AT, STEP * scale), fps, seconds, scale=scale)
    y = (run.tails[:, 0, 0] - run.targets[:, 0, 0]) / scale  # the tail's lag behind its target
    # The frames only say that the parent moved between the last frame before STEP_AT and STEP_AT;
    # it moves linearly over that frame (as Blender interpolates), so the step is at its middle.
    return run.times - (STEP_AT - 0.5 / fps), y


def _fit(t: np.ndarray, y: np.ndarray, guess_wd: float, guess_sigma: float) -> tuple[float, float]:
    after = t > 0.0

    def model(tt, a, sigma, wd, phase):
        return a * np.exp(-sigma * tt) * np.cos(wd * tt + phase)

    (a, sigma, wd, phase), _ = curve_fit(model, t[after], y[after], p0=(-STEP, guess_sigma, guess_wd, 0.0))
    return wd, sigma


@pytest.mark.parametrize("zeta", [0.1, 0.3])
def test_single_bone_matches_the_analytic_oscillator(zeta):
    c = 2.0 * zeta * math.sqrt(K)
    t, y = _single(c, fps=24)
    wd_exact, sigma_exact = math.sqrt(K) * math.sqrt(1 - zeta ** 2), c / 2.0
    wd, sigma = _fit(t, y, wd_exact * 1.1, sigma_exact * 0.9)
    assert wd == pytest.approx(wd_exact, rel=0.03)
    assert sigma == pytest.approx(sigma_exact, rel=0.03)
    after = t > 1.0 / 24
    assert np.abs(y[after] - damped(t[after], -STEP, K, c)).max() < 0.05 * STEP


def test_critical_damping_never_overshoots():
    c = jiggle.critical_damping(K)
    assert c == pytest.approx(2.0 * math.sqrt(K))
    t, y = _single(c, fps=24)
    assert y.min() == pytest.approx(-STEP, rel=0.05)  # it did lag behind
    assert y.max() <= 1e-6 * STEP  # and came back without crossing over
    assert np.abs(y[t > 1.0 / 24] - damped(t[t > 1.0 / 24], -STEP, K, c)).max() < 0.05 * STEP


def test_the_same_motion_at_12_24_and_60_fps():
    k = (2.0 * math.pi) ** 2  # 1 Hz: a step between two frames 1/12 s apart is still a step
    c = 2.0 * 0.2 * math.sqrt(k)
    curves = {fps: _single(c, fps, stiffness=k) for fps in (12, 24, 60)}
    common = np.arange(0.0, 2.5, 1.0 / 12)
    sampled = {fps: np.interp(common, t, y) for fps, (t, y) in curves.items()}
    for fps in (24, 60):
        assert np.abs(sampled[fps] - sampled[12]).max() <= 0.05 * STEP, fps
    # a smooth motion needs no alignment at all: the same curve in time at every frame rate
    model, _, offsets = chain_rig(1, 1, length=1.0, stiffness=k, damping=c, gravity_scale=0.0)
    runs = {fps: simulate(model, offsets, smooth_motion(0.5, 0.25, 0.05), fps, 2.5) for fps in (12, 24, 60)}
    lag = {fps: np.interp(common, r.times, r.tails[:, 0, 0] - r.animated[:, 0, 0]) for fps, r in runs.items()}
    size = np.abs(lag[60]).max()
    assert size > 0.01  # the bone swung by centimetres
    for fps in (12, 24):
        assert np.abs(lag[fps] - lag[60]).max() <= 0.05 * size, fps


def test_frequency_ignores_the_rig_scale_and_bone_length():
    c = 2.0 * 0.15 * math.sqrt(K)
    t1, y1 = _single(c, fps=24, scale=1.0)
    t10, y10 = _single(c, fps=24, scale=10.0)
    np.testing.assert_allclose(y10, y1, atol=1e-3 * STEP)
    model, _, offsets = chain_rig(1, 1, length=0.05, stiffness=K, damping=c, gravity_scale=0.0)
    run = simulate(model, offsets, step_motion(STEP_AT, 0.001), 24, 3.5)
    t = run.times - (STEP_AT - 0.5 / 24)
    wd, _ = _fit(t, (run.tails[:, 0, 0] - run.targets[:, 0, 0]) * STEP / 0.001, math.sqrt(K), c / 2)
    assert wd == pytest.approx(math.sqrt(K) * math.sqrt(1 - 0.15 ** 2), rel=0.03)


def _chain_run(limit_deg: float = 180.0, stretch: bool = False, use_compiled: bool | None = False, **kw):
    model, _, offsets = chain_rig(1, 10, length=0.1, stiffness=60.0, damping=8.0, gravity_scale=1.0,
                                  angle_limit=math.radians(limit_deg), stretch=stretch)
    motion = smooth_motion(0.2, 0.3, 0.3)
    return model, simulate(model, offsets, motion, 24, 2.0, gravity=(0.0, 0.0, -9.81),
                           use_compiled=use_compiled, **kw)


def test_chain_tip_lags_more_than_the_middle_and_keeps_its_length():
    model, run = _chain_run()
    lag = np.linalg.norm(run.tails - run.animated, axis=2).max(axis=0)
    assert lag[9] > lag[4] > lag[0] > 0.0
    lengths = np.linalg.norm(run.tails - run.heads, axis=2)
    assert np.abs(lengths - 0.1).max() < 1e-6
    state_lengths = np.linalg.norm(np.array([s.positions for s in run.states]) - run.heads, axis=2)
    assert np.abs(state_lengths - 0.1).max() < 1e-6


def test_cone_limit_is_never_exceeded():
    limit = 20.0
    model, run = _chain_run(limit_deg=limit)
    _, free = _chain_run()
    d, a = run.tails - run.heads, run.targets - run.heads
    cos = np.einsum("fni,fni->fn", d, a) / (np.linalg.norm(d, axis=2) * np.linalg.norm(a, axis=2))
    angles = np.degrees(np.arccos(np.clip(cos, -1, 1)))
    d0, a0 = free.tails - free.heads, free.targets - free.heads
    free_angles = np.degrees(np.arccos(np.clip(np.einsum("fni,fni->fn", d0, a0) / 0.01, -1, 1)))
    assert free_angles.max() > limit + 10  # without the limit the chain swings past it
    assert angles.max() <= limit + 0.5
    assert angles.max() > limit - 1.0  # and with it the chain reaches the limit


def test_stretch_changes_length_and_off_keeps_it():
    _, run = _chain_run(stretch=True)
    lengths = np.linalg.norm(run.tails - run.heads, axis=2)
    assert np.abs(lengths - 0.1).max() > 1e-3


def _swing_through(collider_kind: str, use_compiled: bool | None):
    """A 5-bone chain along +y whose root bone slides along x through a collider."""
    model, _, offsets = chain_rig(1, 5, length=0.1, stiffness=30.0, damping=6.0, gravity_scale=1.0,
                                  radius=0.02)
    if collider_kind == "sphere":
        extra = {"spheres": np.array([[0.3, 0.3, 0.0, 0.1]])}
    else:
        extra = {"capsules": np.array([[0.3, 0.3, -0.3, 0.3, 0.3, 0.3, 0.06]])}
    run = simulate(model, offsets, smooth_motion(0.1, 2.0, 0.6), 24, 3.0, use_compiled=use_compiled,
                   colliders_at=lambda t: extra)
    return model, run, extra


def _distance_to_core(points: np.ndarray, extra: dict) -> np.ndarray:
    if "spheres" in extra:
        s = extra["spheres"][0]
        return np.linalg.norm(points - s[:3], axis=-1) - s[3]
    cap = extra["capsules"][0]
    a, b = cap[:3], cap[3:6]
    t = np.clip(np.einsum("...i,i->...", points - a, b - a) / np.dot(b - a, b - a), 0, 1)
    return np.linalg.norm(points - (a + t[..., None] * (b - a)), axis=-1) - cap[6]


@pytest.mark.parametrize("kind", ["sphere", "capsule"])
@pytest.mark.parametrize("use_compiled", [False, True])
def test_no_tail_inside_a_collider(kind, use_compiled):
    model, run, extra = _swing_through(kind, use_compiled)
    clearance = _distance_to_core(run.tails, extra) - model.radius[None, :]
    assert clearance.min() >= -1e-9
    assert clearance.min() < 1e-3  # the chain did touch it
    # the same rig without the collider goes right through
    free = simulate(model, chain_rig(1, 5, length=0.1)[2], smooth_motion(0.1, 2.0, 0.6), 24, 3.0)
    assert (_distance_to_core(free.tails, extra) - 0.02).min() < -0.05


def test_mesh_collider_through_signed_distance():
    # a closed box 0.2 m wide in the chain's path, as colliders.py builds from Blender meshes
    corners = np.array([[x, y, z] for x in (0.2, 0.4) for y in (0.25, 0.45) for z in (-0.1, 0.1)])
    faces = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    tris = np.array([t for a, b, c, d in faces for t in ((a, b, c), (a, c, d))])
    box = colliders.mesh_collider(corners, tris, thickness_outer=0.0)
    model, _, offsets = chain_rig(1, 5, length=0.1, stiffness=30.0, damping=6.0, gravity_scale=1.0,
                                  radius=0.02)
    run = simulate(model, offsets, smooth_motion(0.1, 1.0, 0.6), 24, 2.0,
                   colliders_at=lambda t: {"meshes": (box,)})
    dist, _ = colliders.signed_distance(box, run.tails.reshape(-1, 3))
    assert dist.min() > 0.0  # never inside the box
    assert dist.min() < 0.03  # it did touch it


def test_compiled_and_numpy_paths_agree():
    backend.warm_up()
    if not backend.kernel_ready():
        pytest.skip(f"numba unavailable: {backend.unavailable_reason()}")
    _, a = _chain_run(limit_deg=30.0, use_compiled=False)
    _, b = _chain_run(limit_deg=30.0, use_compiled=True)
    assert np.abs(a.tails - b.tails).max() < 1e-9
    _, a, _ = _swing_through("capsule", False)
    _, b, _ = _swing_through("capsule", True)
    assert np.abs(a.tails - b.tails).max() < 1e-9
    # what a frame shows, with stretch (its compensation in the children) and a partial influence
    model, run = _chain_run(stretch=True, use_compiled=True)
    pose = rig_pose(model, chain_rig(1, 10, length=0.1)[2], np.array([0.2, 0.0, 0.0]))
    for alpha in (1.0, 0.4):
        ref = jiggle.shown(model, run.states[10], pose, alpha, use_compiled=False)
        fast = jiggle.shown(model, run.states[10], pose, alpha, use_compiled=True)
        for x, y in zip(ref, fast):
            assert np.abs(x - y).max() < 1e-9


def test_teleport_re_rests_and_a_small_move_swings():
    model, _, offsets = chain_rig(2, 3, length=0.2, stiffness=50.0, damping=3.0)
    settings = jiggle.JiggleSettings(frame_dt=1 / 24, substeps=10, gravity=(0, 0, -9.81),
                                     teleport_distance=1.0, teleport_angle=math.radians(60))
    p0 = rig_pose(model, offsets, np.zeros(3), move_object=True)
    state = jiggle.rest_state(model, p0)
    far = rig_pose(model, offsets, np.array([5.0, 0.0, 0.0]), move_object=True)
    jumped = jiggle.step(model, state, p0, far, settings)
    np.testing.assert_array_equal(jumped.positions, jiggle.rest_state(model, far).positions)
    assert np.abs(jumped.velocities).max() == 0.0
    near = rig_pose(model, offsets, np.array([0.3, 0.0, 0.0]), move_object=True)
    moved = jiggle.step(model, state, p0, near, settings)
    assert np.abs(moved.positions - jiggle.rest_state(model, near).positions).max() > 0.01
    turned = p0.world.copy()
    turned[:3, :3] = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])
    assert jiggle.teleported(p0.world, turned, settings)


def test_influence_blends_what_is_shown_not_the_state():
    model, run = _chain_run()
    state = run.states[12]
    pose = rig_pose(model, chain_rig(1, 10, length=0.1)[2], np.array([0.3 * 0.5, 0, 0]))
    full = jiggle.shown(model, state, pose, influence=1.0)
    none = jiggle.shown(model, state, pose, influence=0.0)
    half = jiggle.shown(model, state, pose, influence=0.5)
    np.testing.assert_allclose(none[0], np.tile(np.eye(4), (10, 1, 1)), atol=1e-12)
    np.testing.assert_allclose(none[2], jiggle.rest_state(model, pose).positions, atol=1e-12)
    def angles(jiggle_matrices):
        return np.arccos(np.clip((np.trace(jiggle_matrices[:, :3, :3], axis1=1, axis2=2) - 1) / 2, -1, 1))

    assert angles(full[0]).max() > 0.05
    # the chain root turns half way; further bones turn half way from where their parents are shown
    assert angles(half[0])[0] == pytest.approx(0.5 * angles(full[0])[0], abs=1e-12)
    gap_half = np.linalg.norm(half[2] - none[2], axis=1).mean()
    gap_full = np.linalg.norm(full[2] - none[2], axis=1).mean()
    assert 0.0 < gap_half < gap_full


def test_bad_input_is_refused_with_the_bone_named():
    with pytest.raises(TetRigInputError, match="Tail: has zero length"):
        jiggle.build_model(["Root", "Tail"], np.array([-1, 0]), np.array([0.1, 0.0]), 10.0, 1.0)
    with pytest.raises(TetRigInputError, match="listed parents first"):
        jiggle.build_model(["A", "B"], np.array([1, -1]), np.array([0.1, 0.1]), 10.0, 1.0)
    with pytest.raises(TetRigInputError, match="damping"):
        jiggle.build_model(["A"], np.array([-1]), np.array([0.1]), 10.0, -1.0)
    squashed = np.tile(np.eye(4), (1, 1, 1))
    squashed[0, 0, 0] = 2.0
    with pytest.raises(TetRigInputError, match="non-uniform"):
        jiggle.pose_from_matrices(squashed)
    mirrored = np.tile(np.eye(4), (1, 1, 1))
    mirrored[0, :3, :3] *= -1.0
    with pytest.raises(TetRigInputError, match="negative"):
        jiggle.pose_from_matrices(mirrored)


def test_substeps_follow_the_rate_and_the_dt_clamp():
    assert [jiggle.substeps_for(240.0, 1 / fps) for fps in (12, 24, 60)] == [20, 10, 4]
    assert jiggle.substeps_for(10.0, 1 / 12) == 3  # 10/s alone would step 83 ms; the clamp: ≤ 1/30 s
    with pytest.raises(TetRigInputError):
        jiggle.substeps_for(0.0, 1 / 24)


def test_quaternion_round_trip():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(50, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    q *= np.sign(q[:, :1])
    np.testing.assert_allclose(jiggle.matrix_to_quaternion(jiggle.quaternion_to_matrix(q)), q, atol=1e-12)
