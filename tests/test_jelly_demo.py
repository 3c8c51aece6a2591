"""The jelly demo (scripts/jelly_demo.py, ``make jelly``): the seed's jelly sphere as a Surface body
with pressure, run the way a user runs it (its own process, the bpy module), keeps its volume
through the bounce and writes a .blend that opens; bad input exits 2 with one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "jelly_demo.py"


def _run(*args: str, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args, "--out", str(out)], capture_output=True,
                          text=True, timeout=600, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _volume_range(summary: str) -> tuple[float, float]:
    low, high = re.search(r"volume / rest\s+([\d.]+) \.\. ([\d.]+)", summary).groups()
    return float(low), float(high)


def test_the_jelly_keeps_its_volume_and_its_file_plays(tmp_path):
    done = _run(out=tmp_path)
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "jelly_summary.txt").read_text(encoding="utf-8")
    assert summary in done.stdout
    low, high = _volume_range(summary)
    assert 0.95 < low <= high < 1.05  # acceptance: within 5 % of rest through the bounce
    assert low < 0.9999  # it did land and squash (the ground was reached)
    assert re.search(r"lowest point z\s+[+-]0\.00\d\d m", summary)
    assert "all positions finite  yes" in summary
    assert (tmp_path / "jelly.blend").stat().st_size > 50_000
    # the saved file opens with the Surface body set up and pressure on, at the start frame
    check = ("import bpy, sys; sys.path.insert(0, sys.argv[2]); import _addon_loader; _addon_loader.load_addon(); "
             "bpy.ops.wm.open_mainfile(filepath=sys.argv[1]); o = bpy.data.objects['Jelly']; "
             "print(o.tetrig.body_type, o.tetrig.pressure, bpy.context.scene.frame_current, "
             "[m.type for m in o.modifiers])")
    opened = subprocess.run([sys.executable, "-c", check, str(tmp_path / "jelly.blend"), str(ROOT / "scripts")],
                            capture_output=True, text=True, timeout=300)
    assert "SURFACE 100000.0 1 ['NODES']" in opened.stdout, opened.stderr


def test_without_pressure_the_jelly_flattens(tmp_path):
    done = _run("--pressure", "0", out=tmp_path)
    assert done.returncode == 0, done.stderr
    low, _ = _volume_range((tmp_path / "jelly_summary.txt").read_text(encoding="utf-8"))
    assert low < 0.7  # acceptance: pressure off loses more than 30 %


def test_a_negative_pressure_is_refused_in_one_line(tmp_path):
    done = _run("--pressure", "-5", out=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip() == "tetrig jelly: error: --pressure must be zero or positive, not -5"
    assert not (tmp_path / "jelly.blend").exists()
