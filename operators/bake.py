"""Bake: simulate the frame range once and store the control points in the .blend."""

from __future__ import annotations

from typing import Any

import os
import time

import bpy
from bpy.props import BoolProperty

from ..runtime import bake
from ..runtime.app import render_guard
from ..runtime import scene as driver
from ..runtime.common.properties import scene_settings
from ..runtime.common.soft_body import StaleBindingError, soft_bodies
from ._context import OperatorResult, soft_body

# Seconds of baking per timer event: short enough for Esc and the progress bar to respond; after
# each, the viewport shows the frame just baked and the progress bars move.
STEP_BUDGET_S = 0.1
TIMER_INTERVAL_S = 0.001
# Seconds between two viewport redraws showing the frame just baked, at most: fewer when the redraws
# would take more than their share of the bake (``bake.RedrawBudget``), none with Preview off.
VIEWPORT_EVERY_S = 0.5
# Steps before the first preview: their waits, with nothing redrawn, tell what Blender's own turn of
# its event loop costs (``bake.RedrawBudget.idle``).
QUIET_STEPS = 2
# Seconds of baking before the first preview: what a preview costs is known only once one was
# shown (the bunny on the real Blender 4.3's virtual display: 1.2 s, then 1 s at each of the next 7
# turns), so a short bake shows none and a long one stays within its share after the first.
FIRST_PREVIEW_AFTER_S = 10.0
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
    _budget: bake.RedrawBudget | None = None
    _idle_since = 0.0  # time.perf_counter() when the last step handed back to Blender
    _shown = ""  # what that step redrew: "preview", "progress" or ""
    _started = 0.0  # time.perf_counter() at invoke

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

    def _done(self, context: bpy.types.Context, job: bake.BakeJob, elapsed: float | None = None) -> None:
        scene = context.scene
        if scene is not None:
            render_guard.ensure_lock_interface(scene)
            driver.update(scene, context.evaluated_depsgraph_get())
        budget = self._budget
        shown = (f"; redrawing the viewport and progress bars took {budget.overhead * 100:.0f} % of that"
                 if budget is not None and budget.baking > 0.0 else "")
        for result in job.results:
            print("TetRig:", result.message() + shown)
        if len(job.results) == 1:
            self.report({"INFO"}, job.results[0].message() + shown)
        else:
            seconds = sum(r.seconds for r in job.results)
            total = max(sum(r.elapsed for r in job.results) if elapsed is None else elapsed, seconds)
            self.report({"INFO"}, f"Baked {len(job.results)} soft bodies, frames {job.frame_start}–"
                                  f"{job.frame_end}, in {total:.1f} s ({seconds:.1f} s simulating){shown}")

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
        self._budget = bake.RedrawBudget()
        self._started = self._idle_since = time.perf_counter()
        self._shown = ""
        redraw(context, viewports=False)  # the progress bars; the viewport waits (see _show_latest)
        return {"RUNNING_MODAL"}

    def _show_latest(self, context: bpy.types.Context, job: bake.BakeJob) -> None:
        """Move the progress bars and, every ``VIEWPORT_EVERY_S`` with Preview on, show the frame
        just baked in the viewport (the scene's frame stays where it is); each only while the
        redraws stay within their share of the bake (``bake.RedrawBudget``)."""
        budget = self._budget
        assert budget is not None
        now = time.monotonic()
        preview = context.scene is not None and scene_settings(context.scene).bake_preview
        # the first previews wait for a few steps, whose waits tell what Blender's own turn costs
        first = budget.preview == 0.0
        if (preview and budget.waits >= QUIET_STEPS and budget.quiet and now - self._shown_at >= VIEWPORT_EVERY_S
                and (not first or budget.baking >= FIRST_PREVIEW_AFTER_S) and budget.allows(budget.preview)):
            self._shown_at = now
            job.show_latest()
            redraw(context)
            self._shown = "preview"
        elif budget.allows(budget.progress):
            redraw(context, viewports=False)
            self._shown = "progress"
        else:
            self._shown = ""

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
            budget = self._budget
            assert budget is not None
            t0 = time.perf_counter()
            budget.waited(t0 - self._idle_since, self._shown)
            if os.environ.get("TETRIG_BAKE_TRACE"):  # the waits between steps (benchmarks, screenshots)
                print(f"TetRig bake wait: {self._shown or '-'} {t0 - self._idle_since:.3f} s", flush=True)
            try:
                done = job.step(context.evaluated_depsgraph_get(), budget_s=STEP_BUDGET_S)
            except (bake.BakeError, StaleBindingError, ValueError) as exc:
                self._stop(context)
                if context.scene is not None:
                    driver.update(context.scene, context.evaluated_depsgraph_get())
                self.report({"ERROR"}, f"Bake failed: {exc}")
                return {"CANCELLED"}
            budget.stepped(time.perf_counter() - t0)
            context.window_manager.progress_update(job.frames_done)
            if done:
                self._stop(context)
                self._done(context, job, time.perf_counter() - self._started)
                return {"FINISHED"}
            self._show_latest(context, job)
            self._idle_since = time.perf_counter()
            return {"RUNNING_MODAL"}
        if event.type in NAVIGATION_EVENTS:
            return {"PASS_THROUGH"}
        return {"RUNNING_MODAL"}  # nothing else may change the scene mid-bake
