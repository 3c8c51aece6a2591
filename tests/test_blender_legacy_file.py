"""A .blend saved by TetRig before the Blender layer was rebuilt around one scene driver (commit
e0025aa) opens and plays as it did then: a baked cage ball, a pinned cage ball, a Surface sheet and
a jiggle chain, frames 1-24 played in order, compared with what e0025aa's add-on showed
(``tests/data/make_legacy_scene.py`` made the file and the expected frames in each Blender)."""

from __future__ import annotations

import numpy as np
import pytest

from data.make_legacy_scene import BLEND, FRAMES, expected_path, shown


def test_a_file_from_before_the_scene_driver_plays_as_it_did(addon):
    import bpy

    expected = np.load(expected_path())
    bpy.ops.wm.open_mainfile(filepath=str(BLEND))
    scene = bpy.context.scene
    for i, frame in enumerate(FRAMES):
        scene.frame_set(frame)
        now = shown(bpy)
        for name, values in now.items():
            np.testing.assert_allclose(values, expected[name][i], rtol=0, atol=1e-6,
                                       err_msg=f"{name} at frame {frame}")
    # the baked ball's frames come from its bake: the file's bake is still current
    from tetrig.runtime import bake
    status = bake.status(bpy.data.objects["Ball"], scene)
    assert status is not None and not status.outdated
    bpy.ops.wm.read_factory_settings(use_empty=True)


def test_the_legacy_file_jumps_to_the_last_frame_as_it_played(addon):
    import bpy

    expected = np.load(expected_path())
    bpy.ops.wm.open_mainfile(filepath=str(BLEND))
    bpy.context.scene.frame_set(FRAMES[-1])
    for name, values in shown(bpy).items():
        np.testing.assert_allclose(values, expected[name][-1], rtol=0, atol=1e-6, err_msg=name)
    bpy.ops.wm.read_factory_settings(use_empty=True)
