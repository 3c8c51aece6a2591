"""The compiled (Numba) solver in Blender: where its machine code is cached, and compiling it in
the background when the add-on starts, so that no frame waits for it.

The engine's ``solver.backend`` does the work; this module gives it the extension's user folder
(``bpy.utils.extension_path_user``: per user, writable, kept across updates of the extension and
removed with it) and reports the first compile, which takes seconds, in the status bar while the
NumPy solver steps the frames (both give the same positions).

Once the cache is filled, loading the kernel takes a fraction of a second (0.3-0.5 s on 2 shared
cores, mostly importing Numba and its first cache read), and a frame waits for it
(``wait_for_kernel``) rather than being stepped by the NumPy solver while the loading thread
competes with it for the interpreter: the bunny's first frame after opening its file then ends
as soon or sooner (measured 0.40 s against 0.45 s at load 1.2-2, 0.45 against 0.60 at load 2.5),
and the frames after it are compiled too.
"""

from __future__ import annotations

import os
import tempfile

import bpy

from ...tetrig_addon.jiggle import backend as jiggle_backend
from ...tetrig_addon.solver import backend

# The add-on's package (``bl_ext.user_default.tetrig`` when installed as an extension).
ADDON_PACKAGE = __package__.rsplit(".", 2)[0] if __package__ else "tetrig"  # the package above runtime/
CACHE_FOLDER = "numba-cache"
# How often the status bar is refreshed while the solver compiles [s].
POLL_S = 0.5


def cache_dir() -> str:
    """The folder of the compiled solver's cache: the extension's user folder, or (loaded as a
    plain add-on or from a checkout, where Blender has none) a folder in the temporary directory."""
    try:
        return bpy.utils.extension_path_user(ADDON_PACKAGE, path=CACHE_FOLDER, create=True)
    except (ValueError, AttributeError):  # not an extension, or Blender before 4.2
        return os.path.join(tempfile.gettempdir(), "tetrig", CACHE_FOLDER)


def _set_status(text: str | None) -> None:
    """Show ``text`` in the status bar of every window (``None`` clears it)."""
    manager = bpy.context.window_manager
    if manager is None:
        return
    for window in manager.windows:
        if window.workspace is not None:
            window.workspace.status_text_set(text)
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                area.tag_redraw()


# How long the first compile takes, as the user waits for it: measured from an empty cache, the
# solver and the jiggle kernels: 24.8 s in the real Blender 4.3 from the installed zip (38.1 s
# before the global step left the first compile, side by side) and 31.8 s in make demo in a fresh
# clone, on 2 cores; earlier, with more compiled, 128-170 s on the same 2 cores busy with other work.
COMPILE_TIME = "about half a minute, more on a busy computer"
COMPILING_STATUS = (f"TetRig: compiling the solver for this computer (first use only, {COMPILE_TIME}); "
                    "the NumPy solver runs meanwhile")


def status_line() -> str | None:
    """The status bar's text now: the compile (not a short load from the cache), else ``None``."""
    if backend.compiling() and not backend.loading_from_cache():
        return COMPILING_STATUS
    return None


def _poll() -> float | None:
    """Timer: the status line while the solver compiles; cleared (and the timer ends) after."""
    if backend.compiling():
        _set_status(status_line())
        return POLL_S
    _set_status(None)
    if backend.load_seconds() is not None:
        print(f"TetRig: compiled solver ready ({backend.load_seconds():.1f} s)")
    elif backend.unavailable_reason():
        print(f"TetRig: compiled solver unavailable, the NumPy solver runs: {backend.unavailable_reason()}")
    return None


def in_background() -> bool:
    """Whether Blender runs without a UI (``blender -b``, and the bpy module)."""
    return bool(bpy.app.background)


def wait_for_kernel(global_step: bool = False) -> None:
    """Before a frame is simulated: wait for the compiled solver when it is worth it.

    Without a UI (``blender -b``: batch bakes, command-line renders) nobody watches the frames go
    by: wait for the compile rather than step them with the slower NumPy solver first. In the UI,
    wait only while it loads from a filled cache (``backend.wait_for_cached_load``: a fraction of
    a second, bounded), never for a compile: the NumPy solver steps those frames. ``global_step``:
    the body uses Global Iterations, whose part of the solver compiles after the rest
    (``backend.global_step_ready``): without a UI, wait for that too."""
    if global_step and in_background() and backend.unavailable_reason() is None and not backend.global_step_ready():
        wait_for_kernel()
        if backend.kernel_ready():  # not when the solver turned out unavailable
            print("TetRig: compiling the solver's global step for this computer (first run only)")
            backend.wait_for_global_step()
        return
    if not backend.compiling():
        return
    if in_background():
        print(f"TetRig: compiling the solver for this computer (first run only, {COMPILE_TIME})")
        backend.warm_up()
        if backend.kernel_ready():
            print(f"TetRig: compiled solver ready ({backend.load_seconds():.1f} s)")
    else:
        backend.wait_for_cached_load()


def register() -> None:
    backend.configure(cache_dir())
    backend.warm_up(background=True)
    jiggle_backend.warm_up(background=True)  # the jiggle kernel, into the same cache folder
    if not bpy.app.background and not bpy.app.timers.is_registered(_poll):
        bpy.app.timers.register(_poll, first_interval=0.1)


def unregister() -> None:
    if bpy.app.timers.is_registered(_poll):
        bpy.app.timers.unregister(_poll)
