"""The first frame after opening a file, in a fresh process (the bpy module), as in Blender's
window (``compiled_solver.in_background`` patched to ``False``) unless a test says otherwise.

With a filled Numba cache the frame waits for the kernel's short load and the compiled solver
steps it; with an empty one it never waits for the compile: the NumPy solver steps it and the
status line reports the compile. Without a UI (``blender -b``) the frame waits for the compile:
that first run (``filled_cache``, a compile of the kernel) fills the cache the others read.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import conftest

OBJECT = "Ball"
TIMEOUT_S = 300
RESULT = "COLD-START-RESULT:"

# Registers the add-on, opens the file, plays frame 2 and prints what happened; exits without
# waiting for a compile still running in its thread.
SCRIPT = r'''
import json, os, sys, tempfile
addon_dir, tmp, blend, ui, wait_s, fake_marker = sys.argv[1:7]
if tmp:
    tempfile.tempdir = tmp  # the add-on's cache_dir() (not an extension) is under it
import bpy
sys.path.insert(0, addon_dir)
import tetrig
from tetrig.runtime.common import compiled_solver
from tetrig.tetrig_addon import solver
from tetrig.tetrig_addon.solver import backend
if ui == "1":
    compiled_solver.in_background = lambda: False
if wait_s:
    backend.CACHED_LOAD_WAIT_S = float(wait_s)
if fake_marker == "1":  # a marker without Numba's cache behind it
    backend.configure(compiled_solver.cache_dir())
    with open(backend.marker_path(), "w") as handle:
        handle.write("{}")
tetrig.register()
out = {"cache_filled": backend.cache_filled(), "line_at_register": compiled_solver.status_line()}
steps = []
original = solver.step
def step(*args, **kwargs):
    steps.append(backend.name())
    return original(*args, **kwargs)
solver.step = step
bpy.ops.wm.open_mainfile(filepath=blend)
bpy.context.scene.frame_set(2)
obj = bpy.data.objects["Ball"]
offsets = [0.0] * (3 * len(obj.data.vertices))
obj.data.attributes["tetrig_offset"].data.foreach_get("vector", offsets)
out.update(steps=steps, status=backend.status(), line=compiled_solver.status_line(),
           compiling=backend.compiling(), fall=-sum(offsets[2::3]) / len(obj.data.vertices))
print("COLD-START-RESULT:" + json.dumps(out), flush=True)
os._exit(0)
'''


@pytest.fixture(scope="module")
def bound_blend(addon, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved .blend with a bound ball 1 m above the ground, at frame 1 (of the factory scene:
    frames from 1, 24 fps)."""
    import bpy
    from blender_helpers import ball

    bpy.ops.wm.read_factory_settings(use_empty=True)
    ball(bpy, OBJECT)
    bpy.context.scene.frame_set(1)
    path = tmp_path_factory.mktemp("cold") / "ball.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return path


@pytest.fixture(scope="module")
def filled_cache(bound_blend, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """A temporary directory whose cache folder a first run without a UI filled (it waited for
    the compile), and that run's result."""
    tmp = tmp_path_factory.mktemp("filled")
    return tmp, first_frame(bound_blend, tmp, ui=False)


def first_frame(blend: Path, tmp: Path | None, ui: bool = True, wait_s: float | None = None,
                fake_marker: bool = False) -> dict:
    """Run ``SCRIPT`` in a fresh process; its result. ``tmp``: the temporary directory holding
    the cache (``None``: this session's, whose cache is filled)."""
    args = [conftest._ADDON_DIR, "" if tmp is None else str(tmp), str(blend), "1" if ui else "0",
            "" if wait_s is None else str(wait_s), "1" if fake_marker else "0"]
    proc = subprocess.run([sys.executable, "-c", SCRIPT, *map(str, args)], capture_output=True, text=True,
                          timeout=TIMEOUT_S)
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT):
            return json.loads(line[len(RESULT):])
    raise AssertionError(f"no result (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")


def test_without_a_ui_the_first_frame_waits_for_the_compile(filled_cache) -> None:
    """``blender -b`` (batch bakes, renders) waits for the kernel however long it takes: here a
    compile, as the cache was empty."""
    _, out = filled_cache
    assert not out["cache_filled"]
    assert out["steps"] == ["Numba"], out
    assert out["status"] == "Numba (compiled solver)"
    # one frame of free fall from rest: about g·Δt² = 17 mm at 24 fps (less with damping)
    assert 0.005 < out["fall"] < 0.03, out


def test_a_filled_cache_steps_the_first_frame_compiled(bound_blend, filled_cache) -> None:
    """The frame waits for a load from the filled cache. The wait is bounded (``CACHED_LOAD_WAIT_S``,
    2 s, see the marker test below); here the bound is raised to 60 s, since on a machine shared
    with other work the load itself took more than 2 s (measured: 0.4-0.9 s quiet)."""
    tmp, compiled = filled_cache
    out = first_frame(bound_blend, tmp, wait_s=60.0)
    assert out["cache_filled"]
    assert out["line_at_register"] is None  # a load from the cache is not announced as a compile
    assert out["steps"] == ["Numba"], out  # it waited for the load
    assert out["status"] == "Numba (compiled solver)"
    assert out["line"] is None and not out["compiling"]
    assert out["fall"] == pytest.approx(compiled["fall"], abs=1e-9)


def test_an_empty_cache_is_compiled_while_numpy_steps_the_first_frame(bound_blend, filled_cache,
                                                                     tmp_path) -> None:
    _, compiled = filled_cache
    out = first_frame(bound_blend, tmp_path)
    assert not out["cache_filled"]
    assert out["steps"] == ["NumPy"], out  # it did not wait for the compile
    assert out["compiling"]
    assert out["line"] == out["line_at_register"]
    assert out["line"].startswith("TetRig: compiling the solver for this computer"), out
    assert out["status"].startswith("NumPy while the compiled solver is built"), out
    assert out["fall"] == pytest.approx(compiled["fall"], abs=1e-9)  # the same frame


def test_a_marker_without_a_cache_holds_the_first_frame_only_briefly(bound_blend, tmp_path) -> None:
    """Should the marker be wrong (Numba's cache unusable after all), the frame waits at most
    ``CACHED_LOAD_WAIT_S`` after the load began, then the NumPy solver steps it; the status line
    reports the compile from then on."""
    out = first_frame(bound_blend, tmp_path, wait_s=0.2, fake_marker=True)
    assert out["cache_filled"]
    assert out["steps"] == ["NumPy"], out
    assert out["compiling"]
    assert out["line"].startswith("TetRig: compiling the solver for this computer"), out
