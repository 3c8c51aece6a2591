"""Which implementation of the step loop runs: the Numba-compiled kernel, or the NumPy reference.

Numba (prebuilt wheels, bundled with the extension) compiles ``kernel.py`` the first time it is
used and caches the machine code on disk (``configure(cache_dir)``; the Blender layer passes the
extension's user folder). The first compile takes seconds; ``warm_up(background=True)`` does it in
a thread while the NumPy reference steps the frames (both give the same positions), so nothing
waits for it. When Numba cannot be imported, the NumPy reference runs: the same positions, slower.

Loading the kernel from a filled cache takes a fraction of a second (importing Numba and reading
the machine code), much less than a NumPy frame would while the loading thread shares the
interpreter with it; ``cache_filled`` tells the two cases apart before the load ends, and
``wait_for_cached_load`` lets a frame wait for the short one only.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from types import ModuleType

NUMBA = "Numba"
NUMPY = "NumPy"

# Numba's OpenMP threads (the parallel colour solve) spin while they wait for work, by libgomp's
# default. With anything else running on the cores (Blender's own threads, another program) a
# spinning thread holds a core its partner needs: measured on 2 cores with other work running, a
# 17k-tet frame took 222 ms instead of 22 ms. Passive waiting sleeps instead. Set before Numba
# starts its thread pool, unless the user chose a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


class BackendUnavailable(RuntimeError):
    """The compiled kernel was asked for but cannot load; the message says why."""


_lock = threading.Lock()
_kernel: ModuleType | None = None  # set once the kernel is imported and compiled
_error: str | None = None
_thread: threading.Thread | None = None
_compile_seconds: float | None = None
_cache_path: str | None = None  # this solver's folder in the cache (``configure``)
_started: float | None = None  # time.monotonic() when the load began
_from_cache: bool = False  # whether that load reads a cache an earlier load filled

# How long after a load from a filled cache began frames wait for it [s] (``wait_for_cached_load``).
# Measured on 2 shared cores: 0.3-0.9 s (Numba's import and its first cache read are most of it).
# It bounds the one wait should the cache be unusable after all (another CPU): then Numba
# compiles, and the frames go on with the NumPy reference.
CACHED_LOAD_WAIT_S = 2.0
# The file a finished load leaves in the cache folder (``cache_filled``).
MARKER_PREFIX = "loaded-"


def configure(cache_dir: str | None) -> None:
    """Put Numba's on-disk cache under ``cache_dir``, in a folder named for the solver's sources
    (``source_fingerprint``), created if missing. Call before the kernel is first loaded (Numba
    reads the setting when it is imported).

    Numba's own check of a cache entry looks at the modification time of the kernel's file only,
    not at the formula modules it inlines: a new version of one of those would load old machine
    code (measured: a segmentation fault). A folder per set of sources cannot be stale."""
    global _cache_path
    if cache_dir:
        path = os.path.join(cache_dir, source_fingerprint())
        os.makedirs(path, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = path
        _cache_path = path


def source_fingerprint() -> str:
    """16 hex digits from the contents of every module of the solver package (the kernel and the
    formulas it compiles) and the installed Numba's version."""
    digest = hashlib.blake2b(digest_size=8)
    folder = os.path.dirname(os.path.abspath(__file__))
    for name in sorted(os.listdir(folder)):
        if name.endswith(".py"):
            with open(os.path.join(folder, name), "rb") as handle:
                digest.update(name.encode() + b"\0" + handle.read())
    try:
        from importlib.metadata import version
        digest.update(version("numba").encode())
    except Exception:  # no numba (the reference runs) or no metadata: the sources still count
        pass
    return digest.hexdigest()


def marker_path() -> str | None:
    """The marker a finished load leaves in the cache folder (``None`` without ``configure``).

    Numba files its cache under a folder named for the kernel file's path and the Python version
    (and, in it, by the machine's CPU and the argument types), and checks the file's contents,
    which the folder of ``configure`` already names. So a marker for this path and Python says
    that Numba's cache holds the kernel: the add-on's folder and Python are those of the load
    that left it."""
    if _cache_path is None:
        return None
    kernel_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel.py")
    where = hashlib.blake2b(kernel_file.encode(), digest_size=8).hexdigest()
    return os.path.join(_cache_path, f"{MARKER_PREFIX}{sys.implementation.cache_tag}-{where}.json")


def cache_filled() -> bool:
    """Whether an earlier load of this kernel, from the same folder, filled the cache that
    ``configure`` set (Numba will read it rather than compile)."""
    path = marker_path()
    return path is not None and os.path.isfile(path)


def _record_load(seconds: float) -> None:
    """Leave the marker of ``cache_filled`` (silently nothing when the folder is not writable:
    then Numba could not cache either)."""
    path = marker_path()
    if path is None:
        return
    try:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump({"kernel": os.path.dirname(os.path.abspath(__file__)), "seconds": round(seconds, 3)}, handle)
    except OSError:
        pass


def _cached_here(module: ModuleType) -> bool:
    """Whether Numba keeps the kernel's machine code in the folder of ``configure``: not when it
    was imported earlier with another ``NUMBA_CACHE_DIR`` (by another add-on, or a test session),
    which it then keeps."""
    if _cache_path is None:
        return False
    folder = os.path.join(os.path.abspath(_cache_path), "")
    try:  # the dispatchers with a cache (``cache=True``), not the inlined ones
        paths: list[str] = [value.stats.cache_path for value in vars(module).values()
                            if hasattr(value, "stats") and hasattr(value, "py_func") and value.stats.cache_path]
    except Exception:  # another Numba's dispatchers: no marker, frames do not wait
        return False
    return bool(paths) and all(os.path.abspath(path).startswith(folder) for path in paths)


def _load() -> None:
    """Import the kernel and compile it (or load it from the cache) by stepping a tiny cage."""
    global _kernel, _error, _compile_seconds
    start = time.perf_counter()
    try:
        from . import kernel as module
        module.warm_up()
    except Exception as exc:  # ImportError, or a Numba/llvmlite that does not match this NumPy
        with _lock:
            _error = f"{type(exc).__name__}: {exc}"
        return
    seconds = time.perf_counter() - start
    if _cached_here(module):
        _record_load(seconds)
    with _lock:
        _kernel = module
        _compile_seconds = seconds


def warm_up(background: bool = False) -> None:
    """Load and compile the kernel now (``background``: in a daemon thread, returning at once).
    Does nothing once it is loaded, failed, or loading."""
    global _thread, _started, _from_cache
    with _lock:
        if _kernel is not None or _error is not None or _thread is not None:
            thread = _thread
        else:
            _started, _from_cache = time.monotonic(), cache_filled()
            thread = _thread = threading.Thread(target=_load, name="tetrig-compile", daemon=True)
            thread.start()
    if not background and thread is not None:
        thread.join()


def loading_from_cache() -> bool:
    """Whether the kernel is loading now from a filled cache (``cache_filled`` when the load
    began), for less than ``CACHED_LOAD_WAIT_S`` so far: a short load, not a compile."""
    with _lock:
        thread, started, from_cache = _thread, _started, _from_cache
        loading = _kernel is None and _error is None
    return (loading and from_cache and thread is not None and thread.is_alive() and started is not None
            and time.monotonic() - started < CACHED_LOAD_WAIT_S)


def wait_for_cached_load() -> bool:
    """Wait for a load from a filled cache (``loading_from_cache``) to end, at most until
    ``CACHED_LOAD_WAIT_S`` after it began; never for a compile. Returns whether the kernel is
    loaded."""
    with _lock:
        thread, started = _thread, _started
    if loading_from_cache() and thread is not None and started is not None:
        thread.join(max(0.0, started + CACHED_LOAD_WAIT_S - time.monotonic()))
    return kernel_ready()


def kernel() -> ModuleType:
    """The compiled kernel module, loading it first if needed (blocking).

    Raises:
        BackendUnavailable: Numba is missing or failed to import (the reason is kept).
    """
    warm_up()
    with _lock:
        if _kernel is None:
            raise BackendUnavailable(_error or "the compiled kernel did not load")
        return _kernel


def kernel_ready() -> bool:
    """Whether the compiled kernel is loaded (never waits: False while it compiles)."""
    with _lock:
        return _kernel is not None


def compiling() -> bool:
    """Whether the kernel is being loaded or compiled in the background now."""
    with _lock:
        return _kernel is None and _error is None and _thread is not None and _thread.is_alive()


def name() -> str:
    """The backend that steps frames now: ``"Numba"`` or ``"NumPy"``."""
    return NUMBA if kernel_ready() else NUMPY


def status() -> str:
    """One line for the user: which backend runs, and why not Numba when it does not."""
    with _lock:
        kernel_loaded, error, seconds = _kernel is not None, _error, _compile_seconds
    if kernel_loaded:
        return f"{NUMBA} (compiled solver)"
    if error is not None:
        return f"{NUMPY} (compiled solver unavailable: {error})"
    if loading_from_cache():
        return f"{NUMPY} while the compiled solver loads from its cache"
    if compiling():
        return f"{NUMPY} while the compiled solver is built (first use only, a few seconds)"
    return NUMPY


def unavailable_reason() -> str | None:
    """Why the compiled kernel failed to load, or ``None`` (loaded, loading, or not tried)."""
    with _lock:
        return _error


def load_seconds() -> float | None:
    """How long loading the kernel took [s] (compiling, or reading it from the cache), once done."""
    with _lock:
        return _compile_seconds
