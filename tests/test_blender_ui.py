"""The UI half: nothing lost on Remove, exports that check their path first (real bpy module)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from blender_helpers import ball


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


# Settings a user tunes, each set to a value other than its default.
TUNED = {"resolution": 5, "max_control_points": 1500, "mode": "CONTINUUM", "youngs_modulus": 3.0e4,
         "volume_stiffness": 5.0e5, "damping": 4.0, "substeps": 17, "density": 1060.0,
         "use_ground": True, "ground_height": -0.25, "ground_friction": 0.8, "max_speed": 40.0,
         "use_goal": True, "goal_stiffness": 900.0, "simulate": False}


def test_remove_keeps_the_settings_and_a_rebuild_uses_them(bpy, addon):
    obj = ball(bpy)
    s = obj.tetrig
    for name, value in TUNED.items():
        assert value != s.bl_rna.properties[name].default, name
        setattr(s, name, value)
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    control_points = len(s.cage.data.vertices)
    assert bpy.ops.tetrig.remove() == {"FINISHED"}
    assert s.role == "NONE" and s.cage is None and "Ball_TetRigCage" not in bpy.data.objects
    for name, value in TUNED.items():
        assert getattr(s, name) == pytest.approx(value), name
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    assert len(s.cage.data.vertices) == control_points  # the kept resolution, not the default 10
    assert s.mode == "CONTINUUM" and s.substeps == 17


def test_remove_asks_before_it_deletes_in_the_ui(bpy, addon):
    """A click goes through invoke, which only opens Blender's confirmation (background mode runs
    it unconfirmed, so the call is checked directly)."""
    obj = ball(bpy)
    from tetrig.operators.remove import TETRIG_OT_remove

    asked = []
    wm = SimpleNamespace(invoke_confirm=lambda op, event, **kw: asked.append(kw) or {"RUNNING_MODAL"})
    context = SimpleNamespace(active_object=obj, window_manager=wm)
    assert TETRIG_OT_remove.invoke(None, context, None) == {"RUNNING_MODAL"}
    assert len(asked) == 1 and "Ball" in asked[0]["title"] and asked[0]["confirm_text"] == "Remove"
    assert obj.tetrig.role == "SOURCE" and obj.tetrig.cage is not None  # nothing removed yet


@pytest.fixture()
def steps(addon, monkeypatch):
    """Counts solver steps: every simulated frame goes through ``solver.step``."""
    from tetrig.tetrig_addon import solver

    calls = []
    real_step = solver.step

    def counting_step(*args, **kwargs):
        calls.append(1)
        return real_step(*args, **kwargs)

    monkeypatch.setattr(solver, "step", counting_step)
    return calls


@pytest.mark.parametrize("operator", ["export_pc2", "export_animation_json", "export_json"])
@pytest.mark.parametrize("where, reason", [("missing/out", "does not exist"),
                                           ("is_a_folder", "is a folder"),
                                           ("/proc/tetrig", "cannot write in the folder /proc")])
def test_an_export_to_a_bad_path_is_refused_before_any_frame_is_simulated(
        bpy, addon, tmp_path, steps, operator, where, reason):
    bpy.context.scene.frame_end = 30
    obj = ball(bpy)
    from tetrig.runtime import simulation

    simulation.free(obj)  # no cached frames: an export would have to simulate frames 2-30
    (tmp_path / "is_a_folder").mkdir()
    path = where if where.startswith("/") else str(tmp_path / where)
    with pytest.raises(RuntimeError, match=f"Export failed: .*{reason}"):  # an ERROR report
        getattr(bpy.ops.tetrig, operator)(filepath=path)
    assert steps == []  # not one frame simulated
    assert sorted(p.name for p in tmp_path.iterdir()) == ["is_a_folder"]  # nothing written
    # the same export to a good path simulates the frame range (so the count above can fail)
    good = tmp_path / "good.out"
    assert getattr(bpy.ops.tetrig, operator)(filepath=str(good)) == {"FINISHED"}
    assert good.stat().st_size > 0
    frames = bpy.context.scene.frame_end - bpy.context.scene.frame_start
    assert len(steps) == (0 if operator == "export_json" else frames)  # frames 2-30 from rest
