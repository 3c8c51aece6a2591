"""Which implementation of the quality pass runs: the Numba kernel (``quality_kernel``) or the
NumPy reference in ``quality``, as the solver's ``solver.backend`` chooses for the step loop.

Numba is imported only when the kernel loads (``warm_up``, in a thread if asked); until then, or
when it cannot load, the reference runs, with the same result. The machine code is cached on disk
under ``NUMBA_CACHE_DIR`` (the Blender layer sets it through ``solver.backend.configure``).
"""

from __future__ import annotations

import threading
from types import ModuleType


class KernelUnavailable(RuntimeError):
    """The kernel was asked for but cannot load; the message says why."""


_lock = threading.Lock()
_kernel: ModuleType | None = None
_error: str | None = None
_thread: threading.Thread | None = None


def _load() -> None:
    global _kernel, _error
    try:
        from . import quality_kernel as module
        module.warm_up()
    except Exception as exc:  # ImportError, or a Numba that does not match this NumPy
        with _lock:
            _error = f"{type(exc).__name__}: {exc}"
        return
    with _lock:
        _kernel = module


def warm_up(background: bool = False) -> None:
    """Load and compile the kernel now (``background``: in a daemon thread, returning at once).
    Does nothing once it is loaded, failed, or loading."""
    global _thread
    with _lock:
        if _kernel is None and _error is None and _thread is None:
            _thread = threading.Thread(target=_load, name="tetrig-quality-compile", daemon=True)
            _thread.start()
        thread = _thread
    if not background and thread is not None:
        thread.join()


def kernel_ready() -> bool:
    """Whether the kernel is loaded (never waits: False while it compiles)."""
    with _lock:
        return _kernel is not None


def unavailable_reason() -> str | None:
    """Why the kernel failed to load, or ``None`` (loaded, loading, or not tried)."""
    with _lock:
        return _error


def kernel() -> ModuleType:
    """The kernel module, loading it first if needed (blocking).

    Raises:
        KernelUnavailable: Numba is missing or failed to import (the reason is kept).
    """
    warm_up()
    with _lock:
        if _kernel is None:
            raise KernelUnavailable(_error or "the compiled quality pass did not load")
        return _kernel
