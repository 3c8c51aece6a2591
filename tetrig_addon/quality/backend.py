"""Which implementation of the quality pass runs: the Numba kernel (``kernel``) or the NumPy
reference in ``improve``, as the solver's ``solver.backend`` chooses for the step loop.

Numba is imported only when the kernel loads (``warm_up``, in a thread if asked); until then, or
when it cannot load, the reference runs, with the same result. The machine code is cached on disk
under ``NUMBA_CACHE_DIR`` (the Blender layer sets it through ``solver.backend.configure``).
"""

from __future__ import annotations

from types import ModuleType

from ..lazy_kernel import KernelUnavailable, LazyKernel

__all__ = ["KernelUnavailable", "kernel", "kernel_ready", "unavailable_reason", "warm_up"]


def _load() -> ModuleType:
    from . import kernel as module

    module.warm_up()
    return module


_KERNEL = LazyKernel(_load, "tetrig-quality-compile")


def warm_up(background: bool = False) -> None:
    """Load and compile the kernel now (``background``: in a daemon thread, returning at once).
    Does nothing once it is loaded, failed, or loading."""
    _KERNEL.warm_up(background)


def kernel_ready() -> bool:
    """Whether the kernel is loaded (never waits: False while it compiles)."""
    return _KERNEL.ready()


def unavailable_reason() -> str | None:
    """Why the kernel failed to load, or ``None`` (loaded, loading, or not tried)."""
    return _KERNEL.unavailable_reason()


def kernel() -> ModuleType:
    """The kernel module, loading it first if needed (blocking).

    Raises:
        KernelUnavailable: Numba is missing or failed to import (the reason is kept).
    """
    return _KERNEL.module()
