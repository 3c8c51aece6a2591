"""Defaults that changed (``runtime/common/versioning``): a soft body set up today takes today's
defaults, and one saved by an older TetRig keeps the old value of every setting it never set, when
its file is opened and when it is appended into another (real bpy module)."""

from __future__ import annotations

import pytest
from blender_helpers import ball


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def as_saved_before_the_change(obj) -> None:
    """Make ``obj`` look as a soft body saved by TetRig before settings version 1: no version, and
    the settings it never set unset (Blender then reads the property's current default)."""
    s = obj.tetrig
    s.settings_version = 0
    s.property_unset("global_iterations")
    s.property_unset("integrator")


def test_a_new_soft_body_takes_todays_defaults_and_keeps_them_through_save_and_reload(bpy, tmp_path):
    from tetrig.runtime.common import versioning
    from tetrig.runtime.common.soft_body import sim_settings

    obj = ball(bpy)
    assert obj.tetrig.settings_version == versioning.SETTINGS_VERSION == 3
    settings = sim_settings(obj, bpy.context.scene)
    assert (settings.global_iterations, settings.integrator) == (3, "BDF2")
    path = str(tmp_path / "today.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    obj = bpy.data.objects["Ball"]
    assert (obj.tetrig.global_iterations, obj.tetrig.integrator) == (3, "BDF2")
    assert not obj.tetrig.is_property_set("global_iterations")  # still today's default, not written
    assert obj.tetrig.use_soft_bodies and not obj.tetrig.is_property_set("use_soft_bodies")


def test_a_soft_body_saved_before_the_change_keeps_the_old_defaults_it_never_set(bpy, tmp_path):
    from tetrig.runtime.common.soft_body import sim_settings

    old = ball(bpy, "Old")
    as_saved_before_the_change(old)
    assert (old.tetrig.global_iterations, old.tetrig.integrator) == (3, "BDF2")  # what it would read
    chosen = ball(bpy, "Chosen", x=2.0)
    as_saved_before_the_change(chosen)
    chosen.tetrig.global_iterations = 2  # set by its user before the change: kept
    path = str(tmp_path / "old.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)

    bpy.ops.wm.open_mainfile(filepath=path)
    old, chosen = bpy.data.objects["Old"], bpy.data.objects["Chosen"]
    assert (old.tetrig.global_iterations, old.tetrig.integrator) == (0, "IMPLICIT_EULER")
    assert (chosen.tetrig.global_iterations, chosen.tetrig.integrator) == (2, "IMPLICIT_EULER")
    assert old.tetrig.settings_version == chosen.tetrig.settings_version == 3
    settings = sim_settings(old, bpy.context.scene)
    assert (settings.global_iterations, settings.integrator) == (0, "IMPLICIT_EULER")
    # saved again and reopened, it stays as it was (now written and stamped)
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    old = bpy.data.objects["Old"]
    assert (old.tetrig.global_iterations, old.tetrig.integrator) == (0, "IMPLICIT_EULER")

    # appended into a file of today, it is upgraded when it arrives (the depsgraph handler)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    as_saved_before_the_change(ball(bpy, "Old"))
    old_path = str(tmp_path / "old_again.blend")
    bpy.ops.wm.save_as_mainfile(filepath=old_path)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    today = ball(bpy, "Today")
    with bpy.data.libraries.load(old_path, link=False) as (_source, target):
        target.objects = ["Old"]
    appended = target.objects[0]
    bpy.context.scene.collection.objects.link(appended)
    bpy.context.view_layer.update()
    assert (appended.tetrig.global_iterations, appended.tetrig.integrator) == (0, "IMPLICIT_EULER")
    assert (today.tetrig.global_iterations, today.tetrig.integrator) == (3, "BDF2")


def test_soft_bodies_saved_before_they_could_touch_keep_passing_through_each_other(bpy, tmp_path):
    """Settings version 2 (issue 21): Soft Bodies, on by default, is off for a soft body saved by a
    TetRig of version 1, so an old file's bodies step alone as they did; its version-1 settings
    (Global Iterations, BDF2) stay as they were; a body of today keeps Soft Bodies on."""
    from tetrig.runtime.common import touching

    old = ball(bpy, "Old")
    other = ball(bpy, "Other", x=3.0)
    for obj in (old, other):
        obj.tetrig.settings_version = 1
        obj.tetrig.property_unset("use_soft_bodies")
    assert old.tetrig.use_soft_bodies  # what it would read: today's default
    path = str(tmp_path / "version1.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    old, other = bpy.data.objects["Old"], bpy.data.objects["Other"]
    assert not old.tetrig.use_soft_bodies and not other.tetrig.use_soft_bodies
    assert old.tetrig.settings_version == 3
    assert (old.tetrig.global_iterations, old.tetrig.integrator) == (3, "BDF2")
    assert touching.groups(touching.candidates(bpy.context.scene)) == []
    today = ball(bpy, "Today", x=-3.0)
    assert today.tetrig.use_soft_bodies


def test_surface_bodies_saved_before_they_could_touch_keep_passing_through_soft_bodies(bpy, tmp_path):
    """Settings version 3 (issue 21, Surface bodies join sets): a Surface body saved by a TetRig of
    version 2, where Soft Bodies was on but meant nothing for it, gets it off; a cage body of
    version 2 keeps it on (it touched already); a Surface body of today has it on."""
    from tetrig.runtime.common import touching

    cage = ball(bpy, "Cage")
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=6, radius=0.3, location=(3.0, 0.0, 1.0))
    sheet = bpy.context.active_object
    sheet.name = "Surface"
    sheet.tetrig.body_type = "SURFACE"
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    assert sheet.tetrig.settings_version == 3 and sheet.tetrig.use_soft_bodies
    assert touching.groups(touching.candidates(bpy.context.scene)) == [[cage, sheet]]
    for obj in (cage, sheet):
        obj.tetrig.settings_version = 2
        obj.tetrig.property_unset("use_soft_bodies")
    path = str(tmp_path / "version2.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    bpy.ops.wm.open_mainfile(filepath=path)
    cage, sheet = bpy.data.objects["Cage"], bpy.data.objects["Surface"]
    assert cage.tetrig.use_soft_bodies and not sheet.tetrig.use_soft_bodies
    assert cage.tetrig.settings_version == sheet.tetrig.settings_version == 3
    assert touching.groups(touching.candidates(bpy.context.scene)) == []
