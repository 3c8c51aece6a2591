"""Renders: every rendered frame shows its soft-body state, and nothing simulates off the main thread.

How Blender calls ``frame_change_post`` while rendering (Blender 4.2–5.0: ``RE_RenderAnim``,
``engine_depsgraph_init``, ``RE_engine_frame_set``; checked with the 4.3 binary):

- ``blender -b file.blend -a``, and ``bpy.ops.render.render(animation=True)`` run from a script:
  the render runs in the main thread. For each frame the render engine evaluates its own
  depsgraph (``depsgraph.mode == 'RENDER'``) with the full frame-change callbacks; meshes a
  handler tags are evaluated again before the frame renders.
- F12 / Ctrl+F12 in the UI: the same callbacks come from the render job's thread while the main
  thread keeps running the UI.
- Motion blur: the engine evaluates subframes and calls the callbacks again, with
  ``scene.frame_current`` the integer part and ``scene.frame_subframe`` the fraction.

Rules:

1. Simulation and writes to Blender data happen in the main thread only. A handler call from any
   other thread queues the update and waits; ``process_requests`` (a timer in the main thread)
   runs it and releases the render thread, whose depsgraph then picks the new offsets up. If the
   main thread does not pick a request up within ``PICKUP_TIMEOUT_S`` (Blender is quitting and
   waits for the render thread), the frame keeps the previous state and a warning is printed:
   never a deadlock, never a crash.
2. A subframe F + t shows frames F and F + 1 interpolated (``scene.update``), live and baked, as
   Blender's Soft Body and Cloth do: motion blur smears the deformation over the shutter. Frame
   F + 1 is a simulated (or baked) frame like any other, with its inputs read at F + 1, never at
   the subframe; when they cannot be read (a UI render of frames never played), frame F shows.
3. While a UI render job runs, frame changes of the viewport (main thread, a ``'VIEWPORT'``
   depsgraph) leave the meshes alone: the render thread may be reading them. The scene is updated
   by the main-thread timer as soon as the job is over (Blender sets the frame back then).
4. ``scene.render.use_lock_interface`` is turned on for a scene with soft bodies, once per scene and
   session (the user may turn it off again): the UI then does not evaluate the viewport while the
   render thread evaluates the same data. The sidebar's Bake panel shows the setting, and says so
   when TetRig turned it on.
5. Each render prints, per soft body, whether it renders from its bake or live.
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Callable

import bpy

from .. import scene as driver

# Seconds a render thread waits for the main thread to start its update before giving up.
PICKUP_TIMEOUT_S = 10.0
# Main-thread polling interval of the request queue [s]: idle, and while a render job runs or
# another thread asked for an update in the last BUSY_WINDOW_S seconds (an Alembic export job ...).
IDLE_POLL_S = 0.25
RENDER_POLL_S = 0.01
BUSY_WINDOW_S = 2.0
PREFIX = "TetRig"


class _Request:
    """One update a render thread waits for."""

    def __init__(self, fn: Callable[[], None]) -> None:
        self.fn = fn
        self.lock = threading.Lock()
        self.started = threading.Event()
        self.done = threading.Event()
        self.abandoned = False


_requests: "queue.SimpleQueue[_Request]" = queue.SimpleQueue()
_lock_checked: set[int] = set()  # session_uid of scenes whose Lock Interface was checked
_lock_turned_on: set[int] = set()  # session_uid of scenes whose Lock Interface TetRig turned on
_timed_out: set[str] = set()  # names of scenes already warned about a dropped update
_viewport_pending: set[str] = set()  # names of scenes whose viewport update waits for a render job
_last_request = -float("inf")  # time.monotonic() of the last request from another thread


def update_all(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """Show the scene's current frame (main thread): the scene driver's update."""
    driver.update(scene, depsgraph)


def simulated(scene: bpy.types.Scene) -> bool:
    """Whether the scene has anything TetRig updates per frame (soft bodies or jiggle rigs)."""
    return driver.simulated(scene)


def in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def run_in_main_thread(fn: Callable[[], None]) -> bool:
    """Run ``fn`` in the main thread and wait for it; returns whether it ran.

    In the main thread ``fn`` runs at once. From another thread it is queued for
    ``process_requests``; ``False`` means the main thread did not start it in time (it then never
    runs). An exception in ``fn`` is printed by the main thread and not re-raised here.
    """
    if in_main_thread():
        fn()
        return True
    global _last_request
    _last_request = time.monotonic()
    request = _Request(fn)
    _requests.put(request)
    if not request.started.wait(PICKUP_TIMEOUT_S):
        with request.lock:
            if not request.started.is_set():
                request.abandoned = True
                return False
    request.done.wait()
    return True


def process_requests() -> int:
    """Run the queued updates (main thread only); returns how many ran."""
    count = 0
    while True:
        try:
            request = _requests.get_nowait()
        except queue.Empty:
            return count
        with request.lock:
            if request.abandoned:
                continue
            request.started.set()
        try:
            request.fn()
            count += 1
        except Exception:  # noqa: BLE001 -- a handler must not raise into Blender's render loop
            import traceback

            traceback.print_exc()
        finally:
            request.done.set()


def _render_job_running() -> bool:
    return bool(bpy.app.is_job_running("RENDER"))


def render_job_running() -> bool:
    """Whether a UI render job runs (its thread may be reading the meshes)."""
    return _render_job_running()


def update_deferred_viewports() -> None:
    """Show the current frame of scenes whose viewport update waited for a render job (main thread,
    when no render job runs)."""
    context = bpy.context
    while _viewport_pending:
        name = _viewport_pending.pop()
        scene = bpy.data.scenes.get(name)
        if scene is not None and scene == context.scene:
            update_all(scene, context.evaluated_depsgraph_get())


def poll_timer() -> float:
    """``bpy.app.timers`` callback: serve render threads, catch up viewports after a render job,
    then say when to run again."""
    process_requests()
    if _render_job_running():
        return RENDER_POLL_S
    if _viewport_pending:
        update_deferred_viewports()
    return RENDER_POLL_S if time.monotonic() - _last_request < BUSY_WINDOW_S else IDLE_POLL_S


def ensure_lock_interface(scene: bpy.types.Scene) -> None:
    """Turn on Render > Lock Interface for a scene with soft bodies (main thread; once per scene
    and session, so a user who turns it off again is not overruled)."""
    if scene.session_uid in _lock_checked:
        return
    _lock_checked.add(scene.session_uid)
    if not scene.render.use_lock_interface:
        scene.render.use_lock_interface = True
        _lock_turned_on.add(scene.session_uid)
        print(f"{PREFIX}: turned on Render > Lock Interface in the scene {scene.name!r}: soft bodies "
              "update mesh data while rendering")


def lock_interface_turned_on(scene: bpy.types.Scene) -> bool:
    """Whether TetRig turned on the scene's Lock Interface in this session and it is still on."""
    return scene.session_uid in _lock_turned_on and scene.render.use_lock_interface


def forget() -> None:
    """Forget per-session state (a new file was loaded)."""
    _lock_checked.clear()
    _lock_turned_on.clear()
    _timed_out.clear()
    _viewport_pending.clear()


def frame_changed(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """The ``frame_change_post`` handler's work, safe in any thread (see the module docstring)."""
    if in_main_thread():
        if depsgraph.mode != "RENDER":
            if _render_job_running():
                _viewport_pending.add(scene.name)  # a UI render job may be reading these meshes
                return
            if simulated(scene):
                ensure_lock_interface(scene)
        update_all(scene, depsgraph)
        return
    if not simulated(scene):  # reading only: nothing to wait for
        return
    frame = scene.frame_current
    if not run_in_main_thread(lambda: update_all(scene, depsgraph)):
        name = scene.name
        if name not in _timed_out:
            _timed_out.add(name)
            print(f"{PREFIX}: the main thread did not answer within {PICKUP_TIMEOUT_S:.0f} s; "
                  f"soft bodies and jiggle bones of the scene {name!r} keep their previous state at frame {frame}")


def render_messages(scene: bpy.types.Scene) -> list[str]:
    """One line per simulated object: does this render read a bake or simulate live?"""
    return [kind.render_message(obj, scene, PREFIX) for obj, kind in driver.bodies(scene)]


def render_started(scene: bpy.types.Scene) -> None:
    """``render_init`` handler: say how each soft body will render (reads data only)."""
    try:
        lines = render_messages(scene)
    except Exception as exc:  # noqa: BLE001 -- a message must never stop a render
        lines = [f"{PREFIX}: could not check the soft bodies before rendering: {exc}"]
    for line in lines:
        print(line, flush=True)
