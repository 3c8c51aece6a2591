"""scripts/batch.py through the bpy module, as a user runs it: ``python scripts/batch.py scene.blend
-- --object NAME --frames 1 10 --output out.blend --json out.json`` in a subprocess.

The scene is an ico sphere (42 vertices) 0.5 m above the TetRig ground, with a coarse cage
(resolution 4) so that the whole module runs in a few seconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO

BATCH = REPO / "scripts" / "batch.py"
OBJECT = "Ball"
TIMEOUT_S = 300
COARSE_RESOLUTION = 4


def run_batch(blend: Path, *options: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BATCH), str(blend), "--", *options],
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)


def stderr_lines(proc: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in proc.stderr.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def scene_blend(addon, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved .blend: the unbound ball, ground on, frames 1-120 at 24 fps."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 120
    scene.render.fps, scene.render.fps_base = 24, 1.0
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.5, location=(0.0, 0.0, 1.0))
    obj = bpy.context.active_object
    obj.name = OBJECT
    obj.tetrig.use_ground, obj.tetrig.ground_height = True, 0.0
    obj.tetrig.resolution = COARSE_RESOLUTION
    path = tmp_path_factory.mktemp("batch") / "scene.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return path


@pytest.fixture(scope="module")
def batch_run(scene_blend: Path) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    """One happy-path run over frames 1-10; (process, output .blend, output JSON)."""
    out_dir = scene_blend.parent / "out"
    out_blend, out_json = out_dir / "result.blend", out_dir / "result.json"
    proc = run_batch(scene_blend, "--object", OBJECT, "--frames", "1", "10",
                     "--output", str(out_blend), "--json", str(out_json), cwd=scene_blend.parent)
    return proc, out_blend, out_json


def test_happy_path_exits_0_with_progress_and_summary(batch_run) -> None:
    proc, out_blend, out_json = batch_run
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert "tetrig batch: frame 10/10" in lines
    summary = [line for line in lines if line.startswith(f"tetrig batch: {OBJECT}: ")]
    assert len(summary) == 1, proc.stdout
    assert "42 vertices" in summary[0] and "frames 1-10" in summary[0] and "ms/frame" in summary[0]
    assert "build" in summary[0] and str(out_blend) in summary[0] and str(out_json) in summary[0]
    assert out_blend.is_file() and out_json.is_file()


def test_output_blend_reopens_bound_at_the_last_frame(batch_run, addon) -> None:
    import bpy

    proc, out_blend, _ = batch_run
    assert proc.returncode == 0, proc.stderr
    bpy.ops.wm.open_mainfile(filepath=str(out_blend))
    try:
        obj = bpy.data.objects[OBJECT]
        assert obj.tetrig.role == "SOURCE"
        assert obj.tetrig.cage is not None and obj.tetrig.cage.tetrig.role == "CAGE"
        names = {a.name for a in obj.data.attributes}
        assert {"tetrig_w0", "tetrig_cp0", "tetrig_offset"} <= names
        assert bpy.context.scene.frame_current == 10
        offset = np.empty(len(obj.data.vertices) * 3, np.float32)
        obj.data.attributes["tetrig_offset"].data.foreach_get("vector", offset)
        # Ten frames of gravity: the ball has fallen (about ½·g·t² ≈ 0.8 m at most, less with damping).
        fall = -offset.reshape(-1, 3)[:, 2].mean()
        assert 0.05 < fall < 1.0, fall
    finally:
        bpy.ops.wm.read_factory_settings(use_empty=True)


def test_json_has_the_four_seed_arrays_with_consistent_shapes(batch_run) -> None:
    proc, _, out_json = batch_run
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out_json.read_text())
    assert set(data) == {"bones_rest", "tets", "vertex_bones", "weights"}
    bones = np.asarray(data["bones_rest"], dtype=np.float64)
    tets = np.asarray(data["tets"])
    vertex_bones = np.asarray(data["vertex_bones"])
    weights = np.asarray(data["weights"], dtype=np.float64)
    assert bones.ndim == 2 and bones.shape[1] == 3 and bones.shape[0] >= 4
    assert tets.ndim == 2 and tets.shape[1] == 4 and tets.shape[0] >= 1
    assert vertex_bones.shape == weights.shape == (42, 4)
    assert tets.min() >= 0 and tets.max() < bones.shape[0]
    assert vertex_bones.min() >= 0 and vertex_bones.max() < bones.shape[0]
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)


def test_a_bound_file_keeps_its_binding(batch_run, tmp_path: Path) -> None:
    proc, out_blend, out_json = batch_run
    assert proc.returncode == 0, proc.stderr
    again = tmp_path / "again.json"
    proc2 = run_batch(out_blend, "--object", OBJECT, "--frames", "1", "3",
                      "--output", str(tmp_path / "again.blend"), "--json", str(again), cwd=tmp_path)
    assert proc2.returncode == 0, proc2.stdout + proc2.stderr
    assert "kept the existing binding" in proc2.stdout
    assert json.loads(again.read_text()) == json.loads(out_json.read_text())


def test_missing_object_exits_2_with_one_line(scene_blend: Path, tmp_path: Path) -> None:
    out = tmp_path / "never.blend"
    proc = run_batch(scene_blend, "--object", "Foo", "--frames", "1", "10", "--output", str(out),
                     cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert stderr_lines(proc) == ["tetrig batch: error: no object named 'Foo' in scene.blend"]
    assert not out.exists()


@pytest.mark.parametrize("options, fragment", [
    (("--frames", "10", "1"), "--frames"),
    (("--frames", "1", "ten"), "--frames"),
    (("--bogus",), "--bogus"),
    ((), "--object"),
])
def test_bad_arguments_exit_2_with_one_line(scene_blend: Path, tmp_path: Path, options, fragment) -> None:
    base = ["--object", OBJECT, "--output", str(tmp_path / "never.blend")] if fragment != "--object" \
        else ["--output", str(tmp_path / "never.blend")]
    proc = run_batch(scene_blend, *base, *options, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = stderr_lines(proc)
    assert len(lines) == 1 and lines[0].startswith("tetrig batch: error: ") and fragment in lines[0], lines
    assert not (tmp_path / "never.blend").exists()


@pytest.fixture(scope="module")
def surface_blend(addon, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved .blend: a UV sphere (482 vertices) chosen as a Surface body with pressure but not set
    up, and an open grid with pressure on, ground on, frames 1-120."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 120
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.5, location=(0.0, 0.0, 1.5))
    obj = bpy.context.active_object
    obj.name = "Jelly"
    s = obj.tetrig
    s.body_type, s.pressure, s.areal_density, s.stretch, s.use_ground = "SURFACE", 1e5, 10.0, 3e3, True
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=4, size=1.0, location=(3.0, 0.0, 1.0))
    sheet = bpy.context.active_object
    sheet.name = "Sheet"
    sheet.tetrig.body_type, sheet.tetrig.pressure = "SURFACE", 1e5
    path = tmp_path_factory.mktemp("batch_surface") / "surface.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    return path


def test_batch_sets_up_and_bakes_a_surface_body(surface_blend: Path, addon) -> None:
    """A mesh whose body type is Surface is set up as one (not given a cage) and baked on itself;
    the saved file plays the bake: at frame 10 the sphere has fallen, whole."""
    import bpy

    out = surface_blend.parent / "baked.blend"
    proc = run_batch(surface_blend, "--object", "Jelly", "--frames", "1", "10", "--output", str(out),
                     cwd=surface_blend.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = [line for line in proc.stdout.splitlines() if line.startswith("tetrig batch: Jelly: ")]
    assert len(summary) == 1 and "482 vertices, Surface body, build" in summary[0], proc.stdout
    bpy.ops.wm.open_mainfile(filepath=str(out))
    try:
        obj = bpy.data.objects["Jelly"]
        assert (obj.tetrig.role, obj.tetrig.surface_bound, obj.tetrig.cage) == ("SOURCE", True, None)
        bake = obj.tetrig["_bake"]
        assert (bake["frame_start"], bake["frame_end"], bake["control_point_count"]) == (1, 10, 482)
        offset = np.empty(482 * 3, np.float32)
        obj.data.attributes["tetrig_offset"].data.foreach_get("vector", offset)
        drop = offset.reshape(-1, 3)[:, 2]
        t = 9 / 24  # 9 frames of fall damped at 1/s from rest (v' = -g - v), rigidly
        assert -drop.mean() == pytest.approx(9.81 * (t - (1.0 - np.exp(-t))), rel=0.02)
        assert np.ptp(drop) < 1e-3
    finally:
        bpy.ops.wm.read_factory_settings(use_empty=True)


def test_batch_refuses_pressure_on_an_open_surface(surface_blend: Path, tmp_path: Path) -> None:
    proc = run_batch(surface_blend, "--object", "Sheet", "--frames", "1", "3",
                     "--output", str(tmp_path / "out.blend"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert stderr_lines(proc)[-1] == ("tetrig batch: error: Sheet is not closed (16 open edges): pressure "
                                      "needs a closed surface; fill the holes or turn Pressure off.")
    assert not (tmp_path / "out.blend").exists()
