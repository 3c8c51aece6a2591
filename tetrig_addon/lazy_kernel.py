"""The one loader of the engine's compiled kernels: a Numba kernel module imported and compiled on
first use (in a daemon thread if asked), the NumPy reference running meanwhile or when it cannot
load, the reason kept.

The soft bodies' solver (``solver.backend``), the point location (``cage.locate``), the jiggle
step (``jiggle.backend``) and the quality pass (``quality.backend``) each hold one ``LazyKernel``.
Numba caches the machine code on disk (``cache=True``, under ``NUMBA_CACHE_DIR``, which
``solver.backend.configure`` sets for all of them). A kernel given a cache folder also leaves a
marker there when a load ends (``cache_filled``), so that a frame may wait for a load from a
filled cache, a fraction of a second, but never for a compile (``wait_for_cached_load``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import time
from types import ModuleType
from typing import Callable

from . import machine_code
from .machine_code import SHIPPED_MARKER

# The file a finished load leaves in the cache folder (``LazyKernel.cache_filled``).
MARKER_PREFIX = "loaded-"
# How long after a load from a filled cache began frames wait for it [s] (``wait_for_cached_load``),
# unless the kernel's owner says otherwise (``solver.backend.CACHED_LOAD_WAIT_S``).
# Measured on 2 shared cores: 0.3-0.9 s (Numba's import and its first cache read are most of it).
# It bounds the one wait should the cache be unusable after all (another CPU): then Numba
# compiles, and the frames go on with the NumPy reference.
CACHED_LOAD_WAIT_S = 2.0
_EVERY: list[LazyKernel] = []  # every kernel made (``every_kernel``)


class KernelUnavailable(RuntimeError):
    """The kernel was asked for but cannot load; the message says why."""


class LazyKernel:
    """One kernel module and its loading state, safe to use from several threads.

    Args:
        load: imports the kernel module, compiles it (or reads Numba's cache) and returns it; any
            exception it raises (ImportError, a Numba that does not match this NumPy) is kept as
            the reason the kernel is unavailable.
        thread_name: the background compile thread's name.
        kernel_file: the kernel module's file, which names its marker (``marker_path``); ``None``:
            no marker.
        cache_folder: returns the folder of Numba's cache (``None`` while it is not configured),
            where the marker goes.
        cached_load_wait: returns how long after a load from a filled cache began frames wait
            for it [s] (``wait_for_cached_load``).
        variant: names a second compile of the same module's functions for other argument types
            (its own marker): ``""`` for the module's first.
    """

    def __init__(self, load: Callable[[], ModuleType], thread_name: str, kernel_file: str | None = None,
                 cache_folder: Callable[[], str | None] = lambda: None,
                 cached_load_wait: Callable[[], float] = lambda: CACHED_LOAD_WAIT_S, variant: str = "") -> None:
        self._load_module = load
        self._thread_name = thread_name
        self._kernel_file = kernel_file
        self._variant = variant
        self._cache_folder = cache_folder
        self._cached_load_wait = cached_load_wait
        self._lock = threading.Lock()
        self._kernel: ModuleType | None = None
        self._error: str | None = None
        self._thread: threading.Thread | None = None
        self._seconds: float | None = None
        self._started: float | None = None  # time.monotonic() when the load began
        self._from_cache = False  # whether that load reads a cache an earlier load filled
        self._followers: list[LazyKernel] = []
        _EVERY.append(self)

    def _load(self) -> None:
        start = time.perf_counter()
        try:
            module = self._load_module()
        except Exception as exc:  # ImportError, or a Numba that does not match this NumPy
            with self._lock:
                self._error = f"{type(exc).__name__}: {exc}"
            return
        seconds = time.perf_counter() - start
        if self.cached_here(module):
            self._record_load(seconds)
        with self._lock:
            self._kernel, self._seconds = module, seconds
            followers = list(self._followers)
        for follower in followers:
            follower.warm_up(background=True)

    def also_load(self, follower: LazyKernel) -> None:
        """Load ``follower`` too, in the background, once this kernel has loaded (at once when it
        has): a kernel that should be there whenever this one is. Nothing waiting for this one
        (``warm_up``, ``wait_for_cached_load``) waits for it."""
        with self._lock:
            self._followers.append(follower)
            loaded = self._kernel is not None
        if loaded:
            follower.warm_up(background=True)

    def warm_up(self, background: bool = False) -> None:
        """Load and compile the kernel now (``background``: in a daemon thread, returning at
        once). Does nothing once it is loaded, failed, or loading."""
        with self._lock:
            if self._kernel is None and self._error is None and self._thread is None:
                self._started, self._from_cache = time.monotonic(), self.cache_filled()
                self._thread = threading.Thread(target=self._load, name=self._thread_name, daemon=True)
                self._thread.start()
            thread = self._thread
        if not background and thread is not None:
            thread.join()

    @property
    def thread_name(self) -> str:
        """The name of the thread that loads it (``tetrig-compile`` for the solver's kernel)."""
        return self._thread_name

    def ready(self) -> bool:
        """Whether the kernel is loaded (never waits: False while it compiles)."""
        with self._lock:
            return self._kernel is not None

    def compiling(self) -> bool:
        """Whether the kernel is being loaded or compiled in the background now."""
        with self._lock:
            return (self._kernel is None and self._error is None and self._thread is not None
                    and self._thread.is_alive())

    def unavailable_reason(self) -> str | None:
        """Why the kernel failed to load, or ``None`` (loaded, loading, or not tried)."""
        with self._lock:
            return self._error

    def load_seconds(self) -> float | None:
        """How long loading the kernel took [s] (compiling, or reading it from the cache), once done."""
        with self._lock:
            return self._seconds

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

    def marker_path(self) -> str | None:
        """The marker a finished load leaves in the cache folder (``None`` without a cache folder
        or a kernel file).

        Numba files its cache under a folder named for the kernel file's path and the Python
        version (and, in it, by the machine's CPU and the argument types), and checks the file's
        contents, which the cache folder's name already covers (``solver.backend.configure``). So
        a marker for this path and Python says that Numba's cache holds the kernel: the add-on's
        folder and Python are those of the load that left it."""
        folder = self._cache_folder()
        if folder is None or self._kernel_file is None:
            return None
        where = hashlib.blake2b((self._kernel_file + (f"#{self._variant}" if self._variant else "")).encode(),
                                digest_size=8).hexdigest()
        return os.path.join(folder, f"{MARKER_PREFIX}{sys.implementation.cache_tag}-{where}.json")

    def cache_filled(self) -> bool:
        """Whether an earlier load of this kernel, from the same folder, filled the cache folder
        (Numba will read it rather than compile)."""
        path = self.marker_path()
        if path is None:
            return False
        # or the zip's machine code, copied in for this process (``machine_code.seed``)
        shipped = os.path.join(os.path.dirname(path), SHIPPED_MARKER.format(tag=sys.implementation.cache_tag))
        return os.path.isfile(path) or (machine_code.in_use() and os.path.isfile(shipped))

    def _record_load(self, seconds: float) -> None:
        """Leave the marker of ``cache_filled`` (silently nothing when the folder is not writable:
        then Numba could not cache either)."""
        path = self.marker_path()
        if path is None or self._kernel_file is None:
            return
        try:
            with open(path, "w", encoding="utf-8") as handle:
                json.dump({"kernel": os.path.dirname(self._kernel_file), "seconds": round(seconds, 3)}, handle)
        except OSError:
            pass

    def cached_here(self, module: ModuleType) -> bool:
        """Whether Numba keeps ``module``'s machine code in the cache folder: not when it was
        imported earlier with another ``NUMBA_CACHE_DIR`` (by another add-on, or a test session),
        which it then keeps."""
        folder = self._cache_folder()
        if folder is None:
            return False
        folder = os.path.join(os.path.abspath(folder), "")
        try:  # the dispatchers with a cache (``cache=True``), not the inlined ones
            paths: list[str] = [value.stats.cache_path for value in vars(module).values()
                                if hasattr(value, "stats") and hasattr(value, "py_func") and value.stats.cache_path]
        except Exception:  # another Numba's dispatchers: no marker, frames do not wait
            return False
        return bool(paths) and all(os.path.abspath(path).startswith(folder) for path in paths)

    def loading_from_cache(self) -> bool:
        """Whether the kernel is loading now from a filled cache (``cache_filled`` when the load
        began), for less than ``cached_load_wait()`` so far: a short load, not a compile."""
        with self._lock:
            thread, started, from_cache = self._thread, self._started, self._from_cache
            loading = self._kernel is None and self._error is None
        return (loading and from_cache and thread is not None and thread.is_alive() and started is not None
                and time.monotonic() - started < self._cached_load_wait())

    def wait_for_cached_load(self) -> bool:
        """Wait for a load from a filled cache (``loading_from_cache``) to end, at most until
        ``cached_load_wait()`` after it began; never for a compile. Returns whether the kernel is
        loaded."""
        with self._lock:
            thread, started = self._thread, self._started
        if self.loading_from_cache() and thread is not None and started is not None:
            thread.join(max(0.0, started + self._cached_load_wait() - time.monotonic()))
        return self.ready()


def every_kernel() -> list[LazyKernel]:
    """Every ``LazyKernel`` made so far, in the order made (those of the modules imported)."""
    return list(_EVERY)
