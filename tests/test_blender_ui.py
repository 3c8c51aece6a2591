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
