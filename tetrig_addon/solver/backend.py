"""Which implementation of the step loop runs: the Numba-compiled kernel, or the NumPy reference.

Numba (prebuilt wheels, bundled with the extension) compiles ``kernel.py`` the first time it is
used and caches the machine code on disk (``configure(cache_dir)``; the Blender layer passes the
extension's user folder). The first compile takes seconds; ``warm_up(background=True)`` does it in
a thread while the NumPy reference steps the frames (both give the same positions), so nothing
waits for it. When Numba cannot be imported, the NumPy reference runs: the same positions, slower.
"""

from __future__ import annotations

import hashlib
import os
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


def configure(cache_dir: str | None) -> None:
    """Put Numba's on-disk cache under ``cache_dir``, in a folder named for the solver's sources
    (``source_fingerprint``), created if missing. Call before the kernel is first loaded (Numba
    reads the setting when it is imported).

    Numba's own check of a cache entry looks at the modification time of the kernel's file only,
    not at the formula modules it inlines: a new version of one of those would load old machine
    code (measured: a segmentation fault). A folder per set of sources cannot be stale."""
    if cache_dir:
        path = os.path.join(cache_dir, source_fingerprint())
        os.makedirs(path, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = path


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
    with _lock:
        _kernel = module
        _compile_seconds = time.perf_counter() - start


def warm_up(background: bool = False) -> None:
    """Load and compile the kernel now (``background``: in a daemon thread, returning at once).
    Does nothing once it is loaded, failed, or loading."""
    global _thread
    with _lock:
        if _kernel is not None or _error is not None or _thread is not None:
            thread = _thread
        else:
            thread = _thread = threading.Thread(target=_load, name="tetrig-compile", daemon=True)
            thread.start()
    if not background and thread is not None:
        thread.join()


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
