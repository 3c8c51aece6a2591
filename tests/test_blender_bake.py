"""Bake and Free Bake in real Blender (the bpy module): the acceptance tests of baking.

The bunny (../shared/meshes/stanford-bunny.obj, 34,834 vertices, 1,202 control points in its Fit cage) is raised
0.3 m over the TetRig ground and baked over frames 1–120 once for the module; the tests then reopen
the saved file. Smaller checks use a coarse ico sphere.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest
from blender_helpers import diagonal, evaluated_positions, import_obj, rest_positions

FRAMES = (1, 120)
ALEMBIC_FRAME = 60
# Baked frames are float32 object-space control points: playback differs from live by the
# float32 rounding of coordinates (~1e-7 of the object's size), far below a pixel.
BAKED_VS_LIVE_TOL = 2e-6  # × bounding-box diagonal
ALEMBIC_TOL = 1e-5  # × bounding-box diagonal


def _open(bpy, path: Path):
    bpy.ops.wm.open_mainfile(filepath=str(path))
    return bpy.data.objects["stanford-bunny"]


def _play(bpy, obj, frames) -> np.ndarray:
    """Evaluated local vertex positions at each frame, shown in order: float32 [F, N, 3]."""
    scene = bpy.context.scene
    out = []
    for frame in frames:
        scene.frame_set(frame)
        out.append(evaluated_positions(obj))
    return np.stack(out)


class StepCounter:
    """Replaces the solver's ``step`` to count calls (and optionally refuse them)."""

    def __init__(self, solver, refuse: bool) -> None:
        self.solver, self.original, self.refuse, self.calls = solver, solver.step, refuse, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        if self.refuse:
            raise AssertionError("solver.step called during baked playback")
        return self.original(*args, **kwargs)


@pytest.fixture(scope="module")
def bunny_blend(addon, tmp_path_factory):
    """The bunny, baked over frames 1–120 and saved; (path, bake seconds, .blend sizes)."""
    import bpy
    from tetrig.runtime import scene as driver

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FRAMES
    scene.render.fps, scene.render.fps_base = 24, 1.0
    obj = import_obj("stanford-bunny")
    obj.location.z = 0.3
    obj.tetrig.use_ground = True
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    folder = tmp_path_factory.mktemp("bake")
    unbaked = folder / "unbaked.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(unbaked), copy=True)
    driver.free()  # the bake computes every frame itself
    t0 = time.perf_counter()
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    seconds = time.perf_counter() - t0
    path = folder / "bunny.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    sizes = (os.path.getsize(unbaked), os.path.getsize(path))
    print(f"\nbunny bake: {FRAMES[1] - FRAMES[0] + 1} frames in {seconds:.1f} s; .blend "
          f"{sizes[0] / 1e6:.2f} MB unbaked, {sizes[1] / 1e6:.2f} MB baked")
    return path, seconds, sizes


@pytest.fixture(scope="module")
def baked_playback(bunny_blend):
    """Reopen the baked file and play 1–120 with ``solver.step`` refusing to run."""
    import bpy
    from tetrig.tetrig_addon import solver

    path = bunny_blend[0]
    counter = StepCounter(solver, refuse=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(solver, "step", counter)
        obj = _open(bpy, path)
        t0 = time.perf_counter()
        frames = _play(bpy, obj, range(FRAMES[0], FRAMES[1] + 1))
        seconds = time.perf_counter() - t0
    return frames, counter.calls, seconds, rest_positions(obj).copy()


@pytest.fixture(scope="module")
def live_playback(bunny_blend, baked_playback):
    """Reopen the baked file, Free Bake, and play 1–120 live."""
    import bpy
    from tetrig.runtime import bake
    from tetrig.tetrig_addon import solver

    obj = _open(bpy, bunny_blend[0])
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.free_bake() == {"FINISHED"}
    freed = (bake.status(obj, bpy.context.scene), obj.tetrig.cage.tetrig.get("_bake"))
    counter = StepCounter(solver, refuse=False)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(solver, "step", counter)
        frames = _play(bpy, obj, range(FRAMES[0], FRAMES[1] + 1))
    return frames, counter.calls, freed


def test_bake_is_compact_float32_on_the_cage(bunny_blend, addon):
    import bpy
    from tetrig.runtime import bake
    from tetrig.runtime.common import bake_store

    path, seconds, (unbaked_size, baked_size) = bunny_blend
    obj = _open(bpy, path)
    cage = obj.tetrig.cage
    info = bake_store.info(cage)
    assert info is not None and (info.frame_start, info.frame_end) == FRAMES
    assert info.control_point_count == len(cage.data.vertices) == 1202
    assert cage.tetrig["_bake"]["positions"].typecode == "f"
    assert "_bake" not in cage.keys() and "tetrig_bake" not in cage.keys()  # not a top-level custom property
    assert info.nbytes == 120 * 1202 * 3 * 4 == 1_730_880
    state = bake.status(obj, bpy.context.scene)
    assert state is not None and not state.outdated
    # What the .blend grows by is the float32 array and a little header (less when Blender
    # compresses the file, as bpy 5.0 does by default), not the dense mesh: 34,834 vertices ×
    # 120 frames × 12 bytes would be 50 MB.
    print(f"\nbake: {info.nbytes / 1e6:.3f} MB of positions; the .blend grew by "
          f"{(baked_size - unbaked_size) / 1e6:.3f} MB")
    assert 0.5 * info.nbytes < baked_size - unbaked_size < 1.5 * info.nbytes


def test_reopened_bake_plays_without_simulating(baked_playback):
    frames, step_calls, seconds, rest = baked_playback
    assert step_calls == 0
    assert np.all(np.isfinite(frames))
    assert np.array_equal(frames[0], rest)  # the start frame is the rest shape, bit for bit
    assert np.abs(frames[-1] - rest).max() > 0.2  # it fell ~0.3 m
    print(f"\nbaked playback: {len(frames)} frames in {seconds:.1f} s")


def test_free_bake_restores_live_mode(live_playback):
    frames, step_calls, (status, stored) = live_playback
    assert status is None and stored is None
    assert step_calls == FRAMES[1] - FRAMES[0]  # one step per frame after the start frame
    assert np.abs(frames[-1] - frames[0]).max() > 0.2


def test_baked_playback_equals_live_playback(baked_playback, live_playback):
    baked, live = baked_playback[0], live_playback[0]
    assert baked.shape == live.shape
    tol = BAKED_VS_LIVE_TOL * diagonal(baked[0])
    error = np.abs(baked - live).max(axis=(1, 2))
    print(f"\nbaked vs live: max {error.max():.2e} (tolerance {tol:.2e}, diagonal {diagonal(baked[0]):.3f})")
    assert np.array_equal(baked[0], live[0])
    assert error.max() <= tol, np.flatnonzero(error > tol)


def test_alembic_export_carries_the_baked_motion(bunny_blend, baked_playback, addon, tmp_path):
    import bpy

    obj = _open(bpy, bunny_blend[0])
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    world = np.array(obj.matrix_world)
    abc = tmp_path / "bunny.abc"
    t0 = time.perf_counter()
    assert bpy.ops.wm.alembic_export(filepath=str(abc), start=1, end=ALEMBIC_FRAME, selected=True,
                                     normals=False, as_background_job=False) == {"FINISHED"}
    export_seconds = time.perf_counter() - t0
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.wm.alembic_import(filepath=str(abc), as_background_job=False) == {"FINISHED"}
    imported = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(imported) == 1
    bpy.context.scene.frame_set(ALEMBIC_FRAME)
    got = evaluated_positions(imported[0])
    got_world = got @ np.array(imported[0].matrix_world)[:3, :3].T + np.array(imported[0].matrix_world)[:3, 3]
    expected = baked_playback[0][ALEMBIC_FRAME - FRAMES[0]]
    expected_world = expected @ world[:3, :3].T + world[:3, 3]
    error = np.abs(got_world - expected_world).max()
    diag = diagonal(expected_world)
    print(f"\nalembic: frames 1-{ALEMBIC_FRAME} exported in {export_seconds:.1f} s, "
          f"{abc.stat().st_size / 1e6:.1f} MB; frame {ALEMBIC_FRAME} error {error:.2e} (diagonal {diag:.3f})")
    assert got.shape == expected.shape
    assert error <= ALEMBIC_TOL * diag
    # and it moved: frame 60 is not the rest shape
    rest_world = baked_playback[0][0] @ world[:3, :3].T + world[:3, 3]
    assert np.abs(got_world - rest_world).max() > 0.2
