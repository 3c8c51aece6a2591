"""The Flamenco 3 job type (scripts/flamenco/tetrig_bake.js), compiled by Node against a stand-in
for Flamenco's job compiler (tests/flamenco/flamenco_standin.js): the tasks and the exact blender
command lines a farm would run."""

from __future__ import annotations

import json
import shutil
import subprocess
import tomllib

import pytest

from conftest import REPO

JOB_TYPE = REPO / "scripts" / "flamenco" / "tetrig_bake.js"
STAND_IN = REPO / "tests" / "flamenco" / "flamenco_standin.js"
SHOTS = ["/farm/shots/sh010.blend", "/farm/shots/sh020.blend", "/farm/shots/sh030.blend"]
BATCH = "/farm/tools/tetrig/scripts/batch.py"


def compile_job(**settings) -> dict:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed: the Flamenco job type is JavaScript and is tested with Node "
                    "(apt-get install nodejs)")
    proc = subprocess.run([node, str(STAND_IN), str(JOB_TYPE), json.dumps(settings)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def bake_args(shot: str, which: list[str]) -> list[str]:
    return ["--python", BATCH, "--", *which, "--output", f"/farm/baked/{shot}.baked.blend"]


def test_three_shots_give_one_bake_task_each_with_blenders_arguments():
    out = compile_job(blendfiles=" ; ".join(SHOTS), objects="", output_dir="/farm/baked",
                      tetrig_batch=BATCH, render_after_bake=False)
    tasks = out["tasks"]
    assert [t["name"] for t in tasks] == ["bake-sh010", "bake-sh020", "bake-sh030"]
    for task, blendfile, shot in zip(tasks, SHOTS, ["sh010", "sh020", "sh030"]):
        assert task["type"] == "blender" and task["dependencies"] == []
        assert task["commands"] == [{"type": "blender-render", "parameters": {
            "exe": "{blender}", "exeArgs": "{blenderArgs}", "argsBefore": [], "blendfile": blendfile,
            "args": bake_args(shot, ["--all"])}}]
    assert out["job_type"]["label"] == "TetRig Bake"
    assert {s["key"] for s in out["job_type"]["settings"]} == {
        "blendfiles", "objects", "output_dir", "tetrig_batch", "render_after_bake"}


def test_render_tasks_only_when_asked_each_after_its_own_bake():
    out = compile_job(blendfiles=";".join(SHOTS), objects="Jelly; Blob", output_dir="/farm/baked",
                      tetrig_batch=BATCH, render_after_bake=True)
    tasks = {t["name"]: t for t in out["tasks"]}
    assert list(tasks) == ["bake-sh010", "render-sh010", "bake-sh020", "render-sh020",
                           "bake-sh030", "render-sh030"]
    for shot in ("sh010", "sh020", "sh030"):
        assert tasks[f"bake-{shot}"]["commands"][0]["parameters"]["args"] == bake_args(
            shot, ["--object", "Jelly", "--object", "Blob"])
        render = tasks[f"render-{shot}"]
        assert render["dependencies"] == [f"bake-{shot}"]
        assert render["commands"][0]["parameters"]["blendfile"] == f"/farm/baked/{shot}.baked.blend"
        assert render["commands"][0]["parameters"]["args"] == [
            "--python", "/farm/tools/tetrig/scripts/load_addon.py", "-a"]


@pytest.mark.parametrize("blendfiles, reason", [(" ; ", "no .blend files"),
                                                ("/a/sh010.blend;/b/sh010.blend", "two shots named sh010")])
def test_a_job_that_cannot_work_is_refused_at_submission(blendfiles, reason):
    out = compile_job(blendfiles=blendfiles, output_dir="/farm/baked", tetrig_batch=BATCH)
    assert reason in out["error"] and "tasks" not in out


def test_the_job_type_is_not_shipped_in_the_extension_zip():
    """It runs on the Flamenco Manager, not in Blender; the rest of scripts/ ships."""
    with open(REPO / "blender_manifest.toml", "rb") as fh:
        excluded = tomllib.load(fh)["build"]["paths_exclude_pattern"]
    assert "/scripts/flamenco/" in excluded
    assert "/scripts/" not in excluded
