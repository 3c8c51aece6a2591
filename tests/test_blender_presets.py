"""Material presets: the shipped files set what they say, the user adds and removes their own,
and every preset simulates (real bpy module)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from blender_helpers import ball, evaluated_positions, world


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


# name: (Young's modulus [Pa], Poisson's ratio, density [kg/m^3], damping [1/s]), as the files say
EXPECTED = {
    "Dough": (5.0e3, 0.45, 1200.0, 10.0),
    "Flesh": (3.0e4, 0.49, 1060.0, 3.0),
    "Jelly": (1.0e4, 0.49, 1050.0, 0.5),
    "Soft Rubber": (1.0e6, 0.48, 1100.0, 1.0),
    "Stiff Rubber": (1.0e7, 0.48, 1200.0, 0.5),
}


def shipped(addon) -> dict[str, str]:
    from tetrig.runtime.app import presets

    return {os.path.basename(p)[:-3].replace("_", " "): p for p in presets.shipped()}


def apply(bpy, path: str) -> None:
    assert bpy.ops.script.execute_preset(filepath=path, menu_idname="TETRIG_MT_presets") == {"FINISHED"}


def test_the_presets_menu_lists_the_shipped_presets(bpy, addon):
    from tetrig.runtime.app import presets

    assert sorted(shipped(addon)) == sorted(EXPECTED)
    assert presets.SHIPPED_DIR in bpy.utils.preset_paths(presets.PRESET_SUBDIR)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_preset_sets_its_material_on_the_soft_body(bpy, addon, name):
    obj = ball(bpy)
    obj.tetrig.use_volume = False
    youngs, poisson, density, damping = EXPECTED[name]
    bpy.context.view_layer.objects.active = obj.tetrig.cage  # applies to the soft body of a cage too
    apply(bpy, shipped(addon)[name])
    s = obj.tetrig
    assert s.youngs_modulus == pytest.approx(youngs)
    assert s.volume_stiffness == pytest.approx(youngs / (3.0 * (1.0 - 2.0 * poisson)), rel=1e-4)
    assert s.volume_stiffness > s.youngs_modulus / 3.0  # what the continuum tets need
    assert s.density == pytest.approx(density) and s.damping == pytest.approx(damping)
    assert s.use_volume
    assert bpy.types.TETRIG_MT_presets.bl_label == name  # the menu shows the chosen preset
    assert obj.tetrig.cage.tetrig.youngs_modulus == 1e5  # the cage's own settings untouched


def test_softer_presets_sag_more(bpy, addon):
    """A ball of each material dropped on the ground: all finite and above the ground, and at
    frame 40 the height it keeps orders the presets from dough to the rubbers (both rubbers keep
    their shape to within 10 %; at 10 substeps the stiff one is not measurably stiffer on this
    coarse ball, see README, Known limits)."""
    heights = {}
    paths = shipped(addon)
    for name in sorted(EXPECTED):
        bpy.ops.wm.read_factory_settings(use_empty=True)
        obj = ball(bpy, name=name.replace(" ", ""))
        apply(bpy, paths[name])
        from tetrig.runtime import scene as driver
        for frame in range(1, 41):
            bpy.context.scene.frame_set(frame)
        pos = world(obj, evaluated_positions(obj))
        assert np.all(np.isfinite(pos)) and pos[:, 2].min() > -1e-3, name
        assert driver.status(obj) == "", name
        heights[name] = float(np.ptp(pos[:, 2]))
    rubber = min(heights["Soft Rubber"], heights["Stiff Rubber"])
    assert heights["Dough"] < heights["Jelly"] < heights["Flesh"] < rubber, heights
    assert heights["Dough"] < 0.7 * rubber and rubber > 0.9, heights  # the ball is 1 m high at rest


def test_a_user_adds_applies_and_removes_a_preset_but_not_a_shipped_one(bpy, addon, tmp_path, monkeypatch):
    user_scripts = tmp_path / "scripts"  # stands in for the user's scripts folder
    monkeypatch.setattr(bpy.utils, "user_resource",
                        lambda kind, path="", create=False: str(_made(user_scripts / path)))
    bpy.utils.register_preset_path(str(user_scripts))
    try:
        obj = ball(bpy)
        s = obj.tetrig
        s.youngs_modulus, s.volume_stiffness, s.density, s.damping = 2.5e4, 4.0e5, 980.0, 2.5
        assert bpy.ops.tetrig.preset_add(name="My Goo") == {"FINISHED"}
        written = user_scripts / "presets" / "tetrig" / "material" / "My_Goo.py"
        text = written.read_text()
        assert "settings.youngs_modulus = 25000.0" in text and "settings.damping = 2.5" in text
        s.youngs_modulus, s.density = 1e5, 1000.0
        apply(bpy, str(written))
        assert (s.youngs_modulus, s.volume_stiffness, s.density, s.damping) == (2.5e4, 4.0e5, 980.0, 2.5)
        # a name that exists is refused; a shipped preset cannot be removed
        assert bpy.ops.tetrig.preset_add(name="Jelly") == {"CANCELLED"}
        assert bpy.ops.tetrig.preset_add(name="Jelly", remove_name=True) == {"CANCELLED"}
        assert os.path.isfile(shipped(addon)["Jelly"])
        assert bpy.ops.tetrig.preset_add(name="My Goo", remove_name=True) == {"FINISHED"}
        assert not written.exists()
    finally:
        bpy.utils.unregister_preset_path(str(user_scripts))


def _made(path):
    path.mkdir(parents=True, exist_ok=True)
    return path
