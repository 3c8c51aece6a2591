"""scripts/batch.py at scale, through the bpy module: several files in parallel processes,
several objects per file, ``--all``, default output names, and one failing file among good ones.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

BATCH = REPO / "scripts" / "batch.py"
TIMEOUT_S = 300
COARSE_RESOLUTION = 4


def run_batch(blends: list[Path], *options: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BATCH), *map(str, blends), "--", *options],
                          cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S)


def save_scene(path: Path, names: list[str], bind: bool = False) -> None:
    """A .blend with one coarse ico sphere per name (bound with Build Cage when ``bind``)."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 120
    for i, name in enumerate(names):
        bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.5, location=(1.5 * i, 0.0, 1.0))
        obj = bpy.context.active_object
        obj.name = name
        obj.tetrig.resolution = COARSE_RESOLUTION
        obj.tetrig.use_ground = True
        if bind:
            assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)


def baked_frames(path: Path, name: str) -> tuple[int, int] | None:
    import bpy
    from tetrig.runtime.common import bake_store

    bpy.ops.wm.open_mainfile(filepath=str(path))
    try:
        info = bake_store.source_bake(bpy.data.objects[name])
        return None if info is None else (info.frame_start, info.frame_end)
    finally:
        bpy.ops.wm.read_factory_settings(use_empty=True)


def test_three_files_two_jobs_one_missing_object(addon, tmp_path: Path) -> None:
    good = [tmp_path / "shot_a.blend", tmp_path / "shot_b.blend"]
    bad = tmp_path / "shot_c.blend"
    for path in good:
        save_scene(path, ["Ball"])
    save_scene(bad, ["Other"])
    out = tmp_path / "out"
    proc = run_batch([good[0], bad, good[1]], "--object", "Ball", "--frames", "1", "12",
                     "--jobs", "2", "--output-dir", str(out), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "tetrig batch: 3 files, 2 at a time" in proc.stdout
    for path in good:
        assert f"[{path.name}] tetrig batch: frame 10/12" in proc.stdout
        assert f"tetrig batch: {path.name}: baked in " in proc.stdout
    assert ("tetrig batch: shot_c.blend: failed (status 2): no object named 'Ball' in shot_c.blend"
            in proc.stderr.splitlines())
    assert "tetrig batch: 3 files: 2 baked, 1 failed" in proc.stdout
    assert sorted(p.name for p in out.iterdir()) == ["shot_a.baked.blend", "shot_b.baked.blend"]
    assert baked_frames(out / "shot_a.baked.blend", "Ball") == (1, 12)


def test_all_soft_bodies_of_a_file_saved_next_to_it(addon, tmp_path: Path) -> None:
    path = tmp_path / "two.blend"
    save_scene(path, ["Left", "Right", "Plain"], bind=False)
    # bind two of them, leave "Plain" an ordinary mesh: --all takes the soft bodies only
    import bpy

    bpy.ops.wm.open_mainfile(filepath=str(path))
    for name in ("Left", "Right"):
        bpy.context.view_layer.objects.active = bpy.data.objects[name]
        assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.read_factory_settings(use_empty=True)
    proc = run_batch([path], "--all", "--frames", "1", "5", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tetrig batch: Left frame 5/5" in proc.stdout and "tetrig batch: Right frame 5/5" in proc.stdout
    summaries = [line for line in proc.stdout.splitlines() if "kept the existing binding" in line]
    assert len(summaries) == 2
    result = tmp_path / "two.baked.blend"
    assert result.is_file()
    assert baked_frames(result, "Left") == baked_frames(result, "Right") == (1, 5)
    assert baked_frames(result, "Plain") is None


@pytest.mark.parametrize("blends, options, fragment", [
    (2, ("--object", "Ball", "--output", "x.blend"), "--output-dir"),
    (1, ("--object", "Ball", "--all"), "not allowed with"),
    (1, ("--all", "--json", "x.json"), "--json"),
    (1, ("--object", "Ball", "--jobs", "0"), "--jobs"),
])
def test_bad_combinations_exit_2_with_one_line(addon, tmp_path: Path, blends, options, fragment) -> None:
    paths = [tmp_path / f"f{i}.blend" for i in range(blends)]
    proc = run_batch(paths, *options, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("tetrig batch: error: ") and fragment in lines[0], lines


def test_missing_and_foreign_files_fail_before_blender_opens_them(addon, tmp_path: Path) -> None:
    text = tmp_path / "notes.blend"
    text.write_text("not a blend file")
    proc = run_batch([tmp_path / "nope.blend", text], "--all", "--jobs", "2",
                     "--output-dir", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    out = proc.stdout + proc.stderr
    assert "nope.blend: failed (status 2): no such .blend file" in out
    assert "notes.blend: failed (status 2):" in out and "is not a .blend file" in out
