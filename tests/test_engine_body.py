"""The one body lifecycle (``tetrig_addon.body``): cage bodies, Surface bodies and jiggle rigs,
stepped through ``Body.rest_state`` / ``step`` / ``shown`` with one ``Control`` a frame, give
exactly (bit for bit) what the direct calls the Blender layer makes give; the frame cache serves
each kind's state (no Blender)."""

import dataclasses

import numpy as np
from conftest import obj_vertices
from engine_scenes import box_collider, quad_grid
from jiggle_scenes import chain_rig, rig_pose

from tetrig_addon import jiggle, solver
from tetrig_addon.body import Body, Control
from tetrig_addon.cage import CageBody, build_cage
from tetrig_addon.surface import SurfaceBody, SurfaceSim, TearSettings, surface_mesh
from tetrig_addon.timeline import FrameCache

FPS = 24
DT = 1.0 / FPS
GRAVITY = (0.0, 0.0, -9.81)
FRAMES = 12


def assert_same_states(a, b):
    """Every array of two states (positions, velocities, rest data, torn edges...) bit for bit."""
    assert type(a) is type(b)
    for name, value in vars(a).items():
        other = getattr(b, name)
        if isinstance(value, np.ndarray) or isinstance(other, np.ndarray):
            np.testing.assert_array_equal(value, other, err_msg=name)
        elif isinstance(value, tuple) and isinstance(other, tuple):  # BDF2's history: (x, v, step)
            assert len(value) == len(other), name
            for i, (mine, theirs) in enumerate(zip(value, other)):
                np.testing.assert_array_equal(mine, theirs, err_msg=f"{name}[{i}]")
        else:
            assert value == other, name


def lifecycle(body: Body, start: Control, controls: list[Control]) -> list:
    states = [body.rest_state(start)]
    for control in controls:
        states.append(body.step(states[-1], control))
    return states


def moving_goals(rest: np.ndarray, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """Goals carried 2 cm a frame along x and turned a little: (at frame, at frame + 1)."""
    def at(f: int) -> np.ndarray:
        angle = 0.02 * f
        turn = np.array([[np.cos(angle), -np.sin(angle), 0.0], [np.sin(angle), np.cos(angle), 0.0], [0, 0, 1]])
        return rest @ turn.T + [0.02 * f, 0.0, 0.0]
    return at(frame), at(frame + 1)


def cage_scene():
    cage = build_cage(obj_vertices("suzanne"), resolution=5)
    weights = np.where(cage.control_points[:, 2] > np.median(cage.control_points[:, 2]), 0.6, 0.0)
    model = solver.build_model(cage.control_points, cage.tets, goal_weights=weights)
    floor = float(cage.control_points[:, 2].min())
    collider = box_collider([-3.0, -3.0, floor - 1.0], [3.0, 3.0, floor + 0.05])
    return model, collider


def test_a_cage_body_steps_as_solver_step():
    """Goals, a collider, plasticity and gravity through the control; the settings' own gravity
    (none here) is replaced by the control's, as the same ``SimSettings`` would step."""
    model, collider = cage_scene()
    settings = solver.SimSettings(youngs_modulus=2e4).validated()
    plastic = solver.PlasticSettings(yield_strain=0.01, rate=5.0)
    body = CageBody(model, dataclasses.replace(settings, gravity=(0.0, 0.0, 0.0)), plastic)
    controls = [Control(DT, GRAVITY, moving_goals(model.rest_positions, f), (collider,)) for f in range(FRAMES)]
    states = lifecycle(body, Control(DT, GRAVITY), controls)
    direct = [solver.rest_state(model)]
    for f in range(FRAMES):
        direct.append(solver.step(model, direct[-1], dataclasses.replace(settings, gravity=GRAVITY), DT,
                                  goals=moving_goals(model.rest_positions, f), colliders=(collider,), plastic=plastic))
    for mine, theirs in zip(states, direct):
        assert_same_states(mine, theirs)
        np.testing.assert_array_equal(body.shown(mine), theirs.shown())
    assert states[-1].rest_lengths is not None  # plasticity crept: the rest data ride on the state


def test_a_posed_cage_body_rests_in_its_pose_and_steps_with_it():
    """A posed cage (``Control.rest``): the start frame at rest in its pose, each frame's rest
    shape through ``solver.with_rest``, as the Blender layer (``runtime/cage/kind.py``) steps it."""
    model, _ = cage_scene()
    settings = solver.SimSettings().validated()
    poses = [moving_goals(model.rest_positions, f)[0] * (1.0 + 0.01 * f) for f in range(FRAMES + 1)]
    body = CageBody(model, settings)
    start = Control(DT, GRAVITY, rest=poses[0])
    states = lifecycle(body, start, [Control(DT, GRAVITY, (poses[f], poses[f + 1]), rest=poses[f + 1])
                                     for f in range(FRAMES)])
    rest = solver.rest_state(model)
    direct = [solver.State(poses[0], np.zeros_like(poses[0]), rest.rotations)]
    for f in range(FRAMES):
        direct.append(solver.step(solver.with_rest(model, poses[f + 1]), direct[-1], settings, DT,
                                  goals=(poses[f], poses[f + 1])))
    for mine, theirs in zip(states, direct):
        assert_same_states(mine, theirs)


def test_a_surface_body_steps_as_its_advance():
    """A pinned sheet pulled at its corners, with tearing and plasticity: ``SurfaceSim`` gives
    ``SurfaceBody.advance``'s states and ``split_mesh``'s shown mesh."""
    verts, corners, sizes = quad_grid(8, 8, 0.05)
    pinned = (verts[:, 1] <= 1e-9) & ((verts[:, 0] <= 1e-9) | (verts[:, 0] >= 0.4 - 1e-9))
    sheet = SurfaceBody(surface_mesh(verts, corners, sizes), verts, 0.5, goal_weights=pinned * 1.0)
    settings = solver.SimSettings(damping=2.0).validated()
    material = solver.SurfaceMaterial(stretch=1e3, shear=100.0, bending=1e-3)
    plastic, tear = solver.PlasticSettings(yield_strain=0.05, rate=2.0), TearSettings(threshold=0.3)
    pull = np.where(pinned[:, None], [[1.0, 0.0, 0.0]], 0.0) * np.sign(verts[:, :1] - 0.2)

    def goals(f):
        return verts + pull * f / FPS, verts + pull * (f + 1) / FPS

    sim = SurfaceSim(sheet, settings, material, plastic, tear)
    states = lifecycle(sim, Control(DT, GRAVITY), [Control(DT, GRAVITY, goals(f)) for f in range(FRAMES)])
    direct = [sheet.rest_state()]
    for f in range(FRAMES):
        direct.append(sheet.advance(direct[-1], settings, material, DT, goals=goals(f), plastic=plastic, tear=tear))
    for mine, theirs in zip(states, direct):
        assert_same_states(mine, theirs)
        shown, split = sim.shown(mine), sheet.split_mesh(theirs)
        for name in ("positions", "corner_vertices", "source_vertices"):
            np.testing.assert_array_equal(getattr(shown, name), getattr(split, name))
    assert states[-1].torn.any() and states[-1].rest_lengths is not None  # it tore and crept
    posed = verts + [0.0, 0.0, 0.1]
    assert_same_states(sim.rest_state(Control(DT, GRAVITY, rest=posed)),
                       dataclasses.replace(sheet.rest_state(), positions=posed))


def test_a_rig_body_steps_as_jiggle_step():
    """Two chains whose roots swing: ``RigBody`` gives ``jiggle.rest_state``, ``step`` and
    ``shown`` exactly, the frame's duration and gravity from the control."""
    model, _, offsets = chain_rig(2, 3)
    settings = jiggle.JiggleSettings(frame_dt=DT, substeps=jiggle.substeps_for(240.0, DT), gravity=GRAVITY)
    poses = [rig_pose(model, offsets, np.array([0.05 * np.sin(f / 3.0), 0.0, 0.0])) for f in range(FRAMES + 1)]
    body = jiggle.RigBody(model, dataclasses.replace(settings, gravity=(0.0, 0.0, 0.0), frame_dt=1.0))
    states = lifecycle(body, Control(DT, GRAVITY, (poses[0], poses[1])),
                       [Control(DT, GRAVITY, (poses[f], poses[f + 1])) for f in range(FRAMES)])
    direct = [jiggle.rest_state(model, poses[0])]
    for f in range(FRAMES):
        direct.append(jiggle.step(model, direct[-1], poses[f], poses[f + 1], settings))
    for f, (mine, theirs) in enumerate(zip(states, direct)):
        assert_same_states(mine.chain, theirs)
        assert mine.pose is poses[f]
        for a, b in zip(body.shown(mine), jiggle.shown(model, theirs, poses[f])):
            np.testing.assert_array_equal(a, b)
    assert np.abs(states[-1].chain.velocities).max() > 0.0  # the chains swing


def test_the_frame_cache_serves_every_kind_and_freezes_a_rig_that_blows_up():
    """``FrameCache`` over a ``RigState``: frame F the same played or jumped to; a step that is
    not finite repeats the last good state, halted."""
    model, _, offsets = chain_rig(1, 2)
    settings = jiggle.JiggleSettings(frame_dt=DT, substeps=jiggle.substeps_for(240.0, DT))
    body = jiggle.RigBody(model, settings)

    def pose(f):
        return rig_pose(model, offsets, np.array([0.03 * f, 0.0, 0.0]))

    def advance(state, f):
        return body.step(state, Control(DT, GRAVITY, (pose(f), pose(f + 1))))

    played = FrameCache(0, body.rest_state(Control(DT, GRAVITY, (pose(0), pose(1)))), "rig")
    for f in range(FRAMES + 1):
        last = played.state_at(f, advance)
    jumped = FrameCache(0, body.rest_state(Control(DT, GRAVITY, (pose(0), pose(1)))), "rig").state_at(FRAMES, advance)
    np.testing.assert_array_equal(last.chain.positions, jumped.chain.positions)

    def explode(state, f):
        nxt = advance(state, f)
        if f >= 5:
            nxt.chain.positions[0, 0] = np.nan
        return nxt

    cache = FrameCache(0, body.rest_state(Control(DT, GRAVITY, (pose(0), pose(1)))), "rig")
    good = cache.state_at(5, explode)
    later = cache.state_at(9, explode)
    assert cache.first_bad_frame == 6
    np.testing.assert_array_equal(later.chain.positions, good.chain.positions)
    assert not later.chain.velocities.any()
