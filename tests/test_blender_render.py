"""Render safety in real Blender (the bpy module): animation renders with motion blur, subframes,
and the render-thread path of the frame handler.

``bpy.ops.render.render(animation=True)`` runs the render pipeline in the calling (main) thread,
as ``blender -b -a`` does; an F12 render in the UI calls the same handlers from the render job's
thread, which the tests reproduce with a Python thread (``test_render_thread_*``). The real
``blender -b file.blend -a`` is exercised in ``test_real_blender_render.py``.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from blender_helpers import ball, evaluated_positions


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


class StepRecorder:
    """Wraps ``solver.step``: records whether each call ran in the main thread."""

    def __init__(self, solver) -> None:
        self.original = solver.step
        self.threads: list[bool] = []

    def __call__(self, *args, **kwargs):
        self.threads.append(threading.current_thread() is threading.main_thread())
        return self.original(*args, **kwargs)


@pytest.fixture()
def steps(addon, monkeypatch):
    from tetrig.tetrig_addon import solver

    recorder = StepRecorder(solver)
    monkeypatch.setattr(solver, "step", recorder)
    return recorder


def image_pixels(bpy, path) -> np.ndarray:
    image = bpy.data.images.load(str(path))
    try:
        pixels = np.empty(image.size[0] * image.size[1] * image.channels, np.float32)
        image.pixels.foreach_get(pixels)
    finally:
        bpy.data.images.remove(image)
    return pixels


def setup_render(bpy, scene, out_dir, last_frame: int) -> None:
    bpy.ops.object.camera_add(location=(1.0, -6.0, 1.0), rotation=(1.5708, 0.0, 0.0))
    scene.camera = bpy.context.active_object
    bpy.ops.object.light_add(type="SUN", location=(0.0, 0.0, 5.0))
    scene.render.engine = "CYCLES"
    scene.cycles.samples = 1
    scene.cycles.use_denoising = False
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 96, 72, 100
    scene.render.use_motion_blur = True
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = str(out_dir / "frame_")
    scene.frame_start, scene.frame_end = 1, last_frame


def test_animation_render_shows_every_frame_and_subframes_never_advance(bpy, addon, steps, tmp_path, capsys):
    from tetrig.runtime import scene as driver
    from tetrig.runtime.common import frames

    scene = bpy.context.scene
    baked = ball(bpy, "Baked", 1.2)
    live = ball(bpy, "Live", -1.2)
    for obj in (baked, live):  # two bodies apart: one baked, one live (a set would be baked whole)
        obj.tetrig.use_soft_bodies = False
    setup_render(bpy, scene, tmp_path, last_frame=6)
    bpy.context.view_layer.objects.active = baked
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    driver.free()
    scene.frame_set(1)
    steps.threads.clear()

    assert bpy.ops.render.render(animation=True) == {"FINISHED"}

    out = capsys.readouterr().out
    assert "TetRig: rendering Live live (not baked)" in out and "baking first is faster" in out
    assert "TetRig: rendering Baked from its bake (frames 1–6)" in out
    # Motion blur evaluated frames 0.75, 1.25, ... 5.75, 6.25: a subframe F + t shows F and F + 1
    # blended (issue 23, item 7), so frame 7 is simulated for 6.25; each frame once, in the main
    # thread, by the live ball only.
    assert steps.threads == [True] * 6
    assert frames.find(live).cache.cached_frames() == [1, 2, 3, 4, 5, 6, 7]
    frames = [image_pixels(bpy, tmp_path / f"frame_{f:04d}.png") for f in range(1, 7)]
    for a, b in zip(frames, frames[1:]):
        assert np.abs(a - b).max() > 0.05  # the balls fell between frames
    # A cold render of frame 6 (nothing cached, a jump from the start) gives the same picture.
    driver.free()
    scene.frame_set(6)
    scene.render.filepath = str(tmp_path / "still.png")
    assert bpy.ops.render.render(write_still=True) == {"FINISHED"}
    assert np.array_equal(image_pixels(bpy, tmp_path / "still.png"), frames[-1])


def test_a_subframe_shows_frames_f_and_f_plus_1_blended(bpy, addon, steps):
    """Rule 2 of render_guard (issue 23, item 7: it showed the integer frame before)."""
    from tetrig.runtime.common import frames

    obj = ball(bpy, "Ball", 0.0)
    scene = bpy.context.scene
    scene.frame_set(10)
    at_10 = evaluated_positions(obj)
    scene.frame_set(11)
    at_11 = evaluated_positions(obj)
    scene.frame_set(10, subframe=0.5)
    np.testing.assert_allclose(evaluated_positions(obj), 0.5 * (at_10 + at_11), atol=2e-6)
    scene.frame_set(9, subframe=0.75)
    scene.frame_set(10, subframe=0.0)
    assert np.array_equal(evaluated_positions(obj), at_10)
    assert max(frames.find(obj).cache.cached_frames()) == 11
    assert len(steps.threads) == 10


def _handler_in_thread(bpy, scene) -> threading.Thread:
    from tetrig.runtime.app import handlers

    depsgraph = bpy.context.evaluated_depsgraph_get()
    thread = threading.Thread(target=handlers.on_frame_change_post, args=(scene, depsgraph))
    thread.start()
    return thread


def test_render_thread_hands_the_update_to_the_main_thread(bpy, addon, steps):
    from tetrig.runtime.app import render_guard
    from tetrig.runtime import scene as driver

    obj = ball(bpy, "Ball", 0.0)
    scene = bpy.context.scene
    scene.frame_set(8)
    expected = evaluated_positions(obj)
    driver.free()
    scene.frame_set(1)
    steps.threads.clear()
    scene.frame_current = 8  # what the render pipeline does before it calls the handler
    thread = _handler_in_thread(bpy, scene)
    served = 0
    while thread.is_alive():
        served += render_guard.process_requests()  # the main-thread timer's work
        thread.join(0.005)
    served += render_guard.process_requests()
    assert served == 1
    assert steps.threads == [True] * 7  # all seven steps ran in the main thread
    assert np.array_equal(evaluated_positions(obj), expected)


def test_render_thread_gives_up_when_the_main_thread_never_answers(bpy, addon, steps, monkeypatch, capsys):
    from tetrig.runtime.app import render_guard

    obj = ball(bpy, "Ball", 0.0)
    scene = bpy.context.scene
    scene.frame_set(1)
    before = evaluated_positions(obj)
    steps.threads.clear()
    monkeypatch.setattr(render_guard, "PICKUP_TIMEOUT_S", 0.2)
    scene.frame_current = 5
    thread = _handler_in_thread(bpy, scene)
    thread.join(10.0)
    assert not thread.is_alive()  # no deadlock
    assert "did not answer" in capsys.readouterr().out
    assert render_guard.process_requests() == 0  # the abandoned request never runs later
    assert steps.threads == []
    assert np.array_equal(evaluated_positions(obj), before)


def test_viewport_frame_changes_leave_meshes_alone_during_a_render_job(bpy, addon, steps, monkeypatch):
    from tetrig.runtime.app import render_guard

    obj = ball(bpy, "Ball", 0.0)
    scene = bpy.context.scene
    scene.frame_set(1)
    before = evaluated_positions(obj)
    monkeypatch.setattr(render_guard, "_last_request", -float("inf"))  # no render thread asked lately
    monkeypatch.setattr(render_guard, "_render_job_running", lambda: True)
    scene.frame_set(5)
    assert render_guard.poll_timer() == render_guard.RENDER_POLL_S
    assert steps.threads == [] and np.array_equal(evaluated_positions(obj), before)
    # the job is over: the main-thread timer shows the frame the scene is at
    monkeypatch.setattr(render_guard, "_render_job_running", lambda: False)
    assert render_guard.poll_timer() == render_guard.IDLE_POLL_S
    assert len(steps.threads) == 4 and not np.array_equal(evaluated_positions(obj), before)
    scene.frame_set(5)
    assert len(steps.threads) == 4


def test_lock_interface_is_turned_on_once(bpy, addon):
    scene = bpy.context.scene
    scene.render.use_lock_interface = False
    ball(bpy, "Ball", 0.0)
    scene.frame_set(2)
    assert scene.render.use_lock_interface
    scene.render.use_lock_interface = False  # the user's choice is kept for the session
    scene.frame_set(3)
    assert not scene.render.use_lock_interface
