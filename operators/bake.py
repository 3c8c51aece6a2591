"""Bake: simulate the frame range once and store the control points in the .blend."""

from __future__ import annotations

from typing import Any

import time

import bpy
from bpy.props import BoolProperty

from ..runtime import bake
from ..runtime.app import render_guard
from ..runtime import scene as driver
from ..runtime.common.soft_body import StaleBindingError, soft_bodies
from ._context import OperatorResult, soft_body

# Seconds of baking per timer event: short enough for Esc and the progress bar to respond; after
# each, the viewport shows the frame just baked and the progress bars move.
STEP_BUDGET_S = 0.1
TIMER_INTERVAL_S = 0.001
# Seconds between two viewport redraws showing the frame just baked (a redraw of a dense mesh costs
# as much as a few frames of baking on a slow GPU); the progress bars move after every step.
VIEWPORT_EVERY_S = 0.5
# Events that only move the view: let them through while baking.
NAVIGATION_EVENTS = {"MIDDLEMOUSE", "WHEELUPMOUSE", "WHEELDOWNMOUSE", "TRACKPADPAN", "TRACKPADZOOM",
                     "NDOF_MOTION", "MOUSEMOVE", "INBETWEEN_MOUSEMOVE"}


def draw_status(header: Any, context: bpy.types.Context) -> None:
    """The status bar while baking: a progress bar and how to cancel."""
    job = bake.running()
    if job is None:
        return
    row = header.layout.row()
    row.ui_units_x = 16
    row.progress(factor=job.fraction, type="BAR",
                 text=f"Baking {job.current_name or '...'}: frame {job.current_frame}/{job.frame_end}")
    header.layout.label(text="Cancel", icon="EVENT_ESC")


def redraw(context: bpy.types.Context, viewports: bool = True) -> None:
    """Redraw the 3D views (the frame being baked) or only their sidebars (the progress bar)."""
    if context.workspace is not None:
        context.workspace.status_text_set(draw_status if bake.running() is not None else None)
    for window in context.window_manager.windows:
        for area in window.screen.areas:
            if area.type != "VIEW_3D":
                continue
            if viewports:
                area.tag_redraw()
            else:
                for region in area.regions:
                    if region.type == "UI":
                        region.tag_redraw()


class TETRIG_OT_bake(bpy.types.Operator):
    """Simulate the frame range once and keep it in the .blend: playback, renders and exports then read the bake"""

    bl_idname = "tetrig.bake"
    bl_label = "Bake"
    bl_options = {"REGISTER", "UNDO"}

    all_soft_bodies: BoolProperty(  # type: ignore[valid-type]
        name="All Soft Bodies", default=False, options={"SKIP_SAVE"},
        description="Bake every soft body of the scene, not only the active one")

    _job: bake.BakeJob | None = None
    _timer: bpy.types.Timer | None = None
    _shown_at = 0.0  # time.monotonic() of the last viewport redraw

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        if context.scene is None or not bake.all_soft_bodies(context.scene):
            cls.poll_message_set("The scene has no soft body to bake")
            return False
        if context.mode == "EDIT_MESH":
            cls.poll_message_set("Leave Edit Mode first")
            return False
        return True

    def _new_job(self, context: bpy.types.Context) -> bake.BakeJob | None:
        scene = context.scene
        obj = soft_body(context)
        if scene is None:
            return None
        objects = soft_bodies(scene) if self.all_soft_bodies else ([obj] if obj is not None else [])
        try:
            if not objects:
                raise bake.BakeError(bake.bakeable(context.active_object) or "No soft body to bake")
            return bake.BakeJob(objects, scene)
        except bake.BakeError as exc:
            self.report({"ERROR"}, str(exc))
            return None

    def _done(self, context: bpy.types.Context, job: bake.BakeJob) -> None:
        scene = context.scene
        if scene is not None:
            render_guard.ensure_lock_interface(scene)
            driver.update(scene, context.evaluated_depsgraph_get())
        for result in job.results:
            print("TetRig:", result.message())
        if len(job.results) == 1:
            self.report({"INFO"}, job.results[0].message())
        else:
            seconds = sum(r.seconds for r in job.results)
            self.report({"INFO"}, f"Baked {len(job.results)} soft bodies, frames {job.frame_start}–"
                                  f"{job.frame_end}, in {seconds:.1f} s")

    def execute(self, context: bpy.types.Context) -> OperatorResult:
        """Bake synchronously (background mode, scripts): progress lines on standard output."""
        job = self._new_job(context)
        if job is None:
            return {"CANCELLED"}
        wm = context.window_manager
        printer = bake.print_progress() if bpy.app.background else None

        def progress(name: str, frame: int, last: int) -> None:
            wm.progress_update(job.frames_done)
            if printer is not None:
                printer(name, frame, last)

        wm.progress_begin(0, job.total_frames)
        try:
            job.run(context.evaluated_depsgraph_get(), progress=progress)
        except (bake.BakeError, StaleBindingError, ValueError) as exc:
            self.report({"ERROR"}, f"Bake failed: {exc}")
            return {"CANCELLED"}
        finally:
            wm.progress_end()
        self._done(context, job)
        return {"FINISHED"}

    def invoke(self, context: bpy.types.Context, event: bpy.types.Event) -> OperatorResult:
        if bpy.app.background or context.window is None:
            return self.execute(context)
        job = self._new_job(context)
        if job is None:
            return {"CANCELLED"}
        if context.screen is not None and context.screen.is_animation_playing:
            bpy.ops.screen.animation_cancel(restore_frame=False)
        self._job = job
        bake.set_running(job)
        wm = context.window_manager
        wm.progress_begin(0, job.total_frames)
        self._timer = wm.event_timer_add(TIMER_INTERVAL_S, window=context.window)
        wm.modal_handler_add(self)
        self._shown_at = time.monotonic()
        redraw(context)
        return {"RUNNING_MODAL"}

    def _show_latest(self, context: bpy.types.Context, job: bake.BakeJob) -> None:
        """Move the progress bars; every ``VIEWPORT_EVERY_S`` also show the frame just baked in the
        viewport (the scene's frame stays where it is)."""
        now = time.monotonic()
        if now - self._shown_at < VIEWPORT_EVERY_S:
            redraw(context, viewports=False)
            return
        self._shown_at = now
        job.show_latest()
        redraw(context)

    def _stop(self, context: bpy.types.Context) -> None:
        wm = context.window_manager
        if self._timer is not None:
            wm.event_timer_remove(self._timer)
            self._timer = None
        wm.progress_end()
        bake.set_running(None)
        redraw(context)

    def modal(self, context: bpy.types.Context, event: bpy.types.Event) -> OperatorResult:
        job = self._job
        if job is None:
            self._stop(context)
            return {"CANCELLED"}
        if event.type == "ESC" and event.value == "PRESS":
            self._stop(context)
            kept = f"; {len(job.results)} finished soft bodies keep their bake" if job.results else ""
            self.report({"WARNING"}, f"Bake cancelled at {job.current_name} frame {job.current_frame}{kept}")
            if context.scene is not None:  # back to the scene's frame after the frames shown
                driver.update(context.scene, context.evaluated_depsgraph_get())
            return {"CANCELLED"}
        if event.type == "TIMER":
            try:
                done = job.step(context.evaluated_depsgraph_get(), budget_s=STEP_BUDGET_S)
            except (bake.BakeError, StaleBindingError, ValueError) as exc:
                self._stop(context)
                if context.scene is not None:
                    driver.update(context.scene, context.evaluated_depsgraph_get())
                self.report({"ERROR"}, f"Bake failed: {exc}")
                return {"CANCELLED"}
            context.window_manager.progress_update(job.frames_done)
            if done:
                self._stop(context)
                self._done(context, job)
                return {"FINISHED"}
            self._show_latest(context, job)
            return {"RUNNING_MODAL"}
        if event.type in NAVIGATION_EVENTS:
            return {"PASS_THROUGH"}
        return {"RUNNING_MODAL"}  # nothing else may change the scene mid-bake
