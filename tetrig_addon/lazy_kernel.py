"""A Numba kernel module loaded lazily: imported and compiled on first use (in a daemon thread if
asked), the NumPy reference running meanwhile or when it cannot load, the reason kept.

The jiggle step (``jiggle.backend``) and the quality pass (``quality_backend``) use this class; the
soft bodies' solver (``solver.backend``) still has its own copy, which also times the compile.
"""

from __future__ import annotations

import threading
from types import ModuleType
from typing import Callable


class KernelUnavailable(RuntimeError):
    """The kernel was asked for but cannot load; the message says why."""


class LazyKernel:
    """One kernel module and its loading state, safe to use from several threads.

    Args:
        load: imports the kernel module, compiles it (or reads Numba's cache) and returns it; any
            exception it raises (ImportError, a Numba that does not match this NumPy) is kept as
            the reason the kernel is unavailable.
        thread_name: the background compile thread's name.
    """

    def __init__(self, load: Callable[[], ModuleType], thread_name: str) -> None:
        self._load_module = load
        self._thread_name = thread_name
        self._lock = threading.Lock()
        self._kernel: ModuleType | None = None
        self._error: str | None = None
        self._thread: threading.Thread | None = None

    def _load(self) -> None:
        try:
            module = self._load_module()
        except Exception as exc:  # ImportError, or a Numba that does not match this NumPy
            with self._lock:
                self._error = f"{type(exc).__name__}: {exc}"
            return
        with self._lock:
            self._kernel = module

    def warm_up(self, background: bool = False) -> None:
        """Load and compile the kernel now (``background``: in a daemon thread, returning at
        once). Does nothing once it is loaded, failed, or loading."""
        with self._lock:
            if self._kernel is None and self._error is None and self._thread is None:
                self._thread = threading.Thread(target=self._load, name=self._thread_name, daemon=True)
                self._thread.start()
            thread = self._thread
        if not background and thread is not None:
            thread.join()

    def ready(self) -> bool:
        """Whether the kernel is loaded (never waits: False while it compiles)."""
        with self._lock:
            return self._kernel is not None

    def unavailable_reason(self) -> str | None:
        """Why the kernel failed to load, or ``None`` (loaded, loading, or not tried)."""
        with self._lock:
            return self._error

    def module(self) -> ModuleType:
        """The kernel module, loading it first if needed (blocking).

        Raises:
            KernelUnavailable: it failed to load (the reason is kept).
        """
        self.warm_up()
        with self._lock:
            if self._kernel is None:
                raise KernelUnavailable(self._error or "the compiled kernel did not load")
            return self._kernel
