"""Which implementation of the step loop runs: the Numba-compiled kernel, or the NumPy reference;
and ``step``, the solver's public step, which chooses.

Numba (prebuilt wheels, bundled with the extension) compiles ``kernel.py`` the first time it is
used and caches the machine code on disk (``configure(cache_dir)``; the Blender layer passes the
extension's user folder). The first compile takes seconds; ``warm_up(background=True)`` does it in
a thread while the NumPy reference steps the frames (both give the same positions), so nothing
waits for it. When Numba cannot be imported, the NumPy reference runs: the same positions, slower.

Loading the kernel from a filled cache takes a fraction of a second (importing Numba and reading
the machine code), much less than a NumPy frame would while the loading thread shares the
interpreter with it; ``cache_filled`` tells the two cases apart before the load ends, and
``wait_for_cached_load`` lets a frame wait for the short one only. The loading is
``lazy_kernel.LazyKernel``'s, as for every compiled kernel of the engine.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from types import ModuleType
from typing import Callable, Sequence

import numpy as np

from .. import colliders as collision
from .. import lazy_kernel, machine_code
from ..lazy_kernel import MARKER_PREFIX, KernelUnavailable, LazyKernel
from . import global_solve, loop
from .model import Model, State, build_model, rest_state
from .plasticity import PlasticSettings
from .settings import MODES, SimSettings, SurfaceMaterial

NUMBA = "Numba"
NUMPY = "NumPy"

# Numba's OpenMP threads (the parallel colour solve) spin while they wait for work, by libgomp's
# default. With anything else running on the cores (Blender's own threads, another program) a
# spinning thread holds a core its partner needs: measured on 2 cores with other work running, a
# 17k-tet frame took 222 ms instead of 22 ms. Passive waiting sleeps instead. Set before Numba
# starts its thread pool, unless the user chose a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

# The compiled kernel was asked for but cannot load; the message says why.
BackendUnavailable = KernelUnavailable

__all__ = ["BackendUnavailable", "CACHED_LOAD_WAIT_S", "MARKER_PREFIX", "NUMBA", "NUMPY", "cache_filled", "choose",
           "compiling", "configure", "global_step_compiling", "global_step_ready", "kernel", "kernel_ready",
           "load_seconds", "loading_from_cache", "marker_path", "name", "source_fingerprint", "status", "step",
           "unavailable_reason", "uses_shipped_code", "wait_for_cached_load", "wait_for_global_step", "warm_up"]

_cache_path: str | None = None  # this engine's folder in the cache (``configure``)
_shipped = False  # whether ``configure`` copied the zip's machine code into it (``uses_shipped_code``)
# How long after a load from a filled cache began frames wait for it [s] (``wait_for_cached_load``;
# read at each wait: see ``lazy_kernel.CACHED_LOAD_WAIT_S``).
CACHED_LOAD_WAIT_S = lazy_kernel.CACHED_LOAD_WAIT_S


def configure(cache_dir: str | None) -> None:
    """Put Numba's on-disk cache, for every kernel of the engine, under ``cache_dir``, in a folder
    named for the engine's sources (``source_fingerprint``), created if missing. Call before a
    kernel is first loaded (Numba reads the setting when it is imported).

    Numba's own check of a cache entry looks at the modification time of the kernel's file only,
    not at the formula modules it inlines: a new version of one of those would load old machine
    code (measured: a segmentation fault). A folder per set of sources cannot be stale.

    Where the extension ships machine code that this computer runs (``machine_code``: the Linux
    zips), it is copied into that folder first: Numba reads it rather than compile."""
    global _cache_path, _shipped
    if cache_dir:
        fingerprint = source_fingerprint()
        path = os.path.join(cache_dir, fingerprint)
        os.makedirs(path, exist_ok=True)
        os.environ["NUMBA_CACHE_DIR"] = path
        _cache_path = path
        _shipped = machine_code.use_shipped(path, fingerprint)


def source_fingerprint() -> str:
    """16 hex digits from the contents of every module of the engine (each compiled kernel and the
    formulas it compiles, wherever they live: the solver's, ``cage/locate_kernel.py``, the jiggle's
    and the quality pass's) and the installed Numba's version."""
    digest = hashlib.blake2b(digest_size=8)
    engine = Path(__file__).resolve().parent.parent
    for path in sorted(engine.rglob("*.py"), key=lambda p: p.relative_to(engine).as_posix()):
        digest.update(path.relative_to(engine).as_posix().encode() + b"\0" + path.read_bytes())
    try:
        from importlib.metadata import version
        digest.update(version("numba").encode())
    except Exception:  # no numba (the reference runs) or no metadata: the sources still count
        pass
    return digest.hexdigest()


def _one_tet() -> Model:
    """The cage the compiles step: one tet with a goal and a pinned point, above the ground."""
    corners = np.array([[0.0, 0.0, 0.1], [1.0, 0.0, 0.1], [0.0, 1.0, 0.1], [0.0, 0.0, 1.1]])
    return build_model(corners, np.array([[0, 1, 2, 3]]), goal_weights=np.array([0.0, 0.5, 0.0, 1.0]))


def _warmed_kernel() -> ModuleType:
    """Import the kernel and compile it (or load it from the cache): step a one-tet cage with goals
    and a ground contact, in each material mode, through the frames' own path (``loop.step``), so
    every function compiles for the types real frames use; then the rest (``kernel.warm_up``)."""
    from . import kernel as module

    model = _one_tet()
    for mode in MODES:
        # (without the global step, whatever the default: ``_warmed_global_step`` compiles it)
        settings = SimSettings(mode=mode, substeps=2, ground_height=0.0, global_iterations=0).validated()
        loop.step(model, rest_state(model), settings, 1.0 / 24.0, compiled=module)
    module.warm_up()
    return module


_KERNEL_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernel.py")
_KERNEL = LazyKernel(_warmed_kernel, "tetrig-compile", kernel_file=_KERNEL_FILE,
                     cache_folder=lambda: _cache_path, cached_load_wait=lambda: CACHED_LOAD_WAIT_S)


def _warmed_global_step() -> ModuleType:
    """The kernel's frame with the global step (``settings.global_iterations`` > 0): the kernel's
    ``_frame`` compiled once more for it, in both modes that have it. The first compile leaves the
    global step out (``kernel.advance`` passes ``None`` for it, and Numba prunes the call), so a
    first start does not wait for what most scenes never use (measured on this machine, fresh
    caches: the kernel ready in 20.5-22.9 s against 33.8-38.6 s with the global step in it; this
    part then 13.4 s more)."""
    module = _KERNEL.module()
    model = _one_tet()
    for mode in global_solve.MODES:
        settings = SimSettings(mode=mode, substeps=2, ground_height=0.0, global_iterations=1).validated()
        loop.step(model, rest_state(model), settings, 1.0 / 24.0, compiled=module)
    return module


# Loaded when a frame first needs it (``global_step_ready``), in the background: the frames that
# need it step on the NumPy reference until then (the first time on a computer, a compile of
# about 13 s here; after that a load from the cache). Not compiled ahead with the kernel's other
# followers: on two cores it would slow the point location's compile, which Build Cage waits for.
_GLOBAL_STEP = LazyKernel(_warmed_global_step, "tetrig-compile-global", kernel_file=_KERNEL_FILE,
                          cache_folder=lambda: _cache_path, cached_load_wait=lambda: CACHED_LOAD_WAIT_S,
                          variant="global-step")
warm_up = _KERNEL.warm_up
kernel_ready = _KERNEL.ready
compiling = _KERNEL.compiling
unavailable_reason = _KERNEL.unavailable_reason
load_seconds = _KERNEL.load_seconds
marker_path = _KERNEL.marker_path
cache_filled = _KERNEL.cache_filled
loading_from_cache = _KERNEL.loading_from_cache
wait_for_cached_load = _KERNEL.wait_for_cached_load
kernel = _KERNEL.module
also_load = _KERNEL.also_load
_cached_here = _KERNEL.cached_here


class Companion:
    """A compiled search that loads in the background whenever the solver's kernel has loaded (the
    contacts between bodies, ``pairs``; a Surface body's with itself, ``self_rows``; a cage body's
    with itself, ``cage_self``), each with a NumPy reference that finds the same contacts.

    Args:
        import_module: imports the search's kernel module (whose ``warm_up()`` compiles it, or
            reads Numba's cache, on a small case).
        thread_name: the name of the thread that loads it.
    """

    def __init__(self, import_module: Callable[[], ModuleType], thread_name: str) -> None:
        def load() -> ModuleType:
            module = import_module()
            module.warm_up()
            return module
        self._kernel = LazyKernel(load, thread_name)
        also_load(self._kernel)

    def module(self, use_kernel: bool | None = None) -> ModuleType | None:
        """The search's kernel module where the solver's kernel is loaded and ``use_kernel`` is not
        ``False``, else ``None`` (use the NumPy reference)."""
        if use_kernel is False or not kernel_ready():
            return None
        try:
            return self._kernel.module()
        except KernelUnavailable:
            return None


def global_step_ready() -> bool:
    """Whether the kernel's frame with the global step is loaded; if not, its load starts in the
    background (a frame then waits only for a short load from a filled cache, as for the kernel)."""
    if _GLOBAL_STEP.ready():
        return True
    _GLOBAL_STEP.warm_up(background=True)
    return _GLOBAL_STEP.wait_for_cached_load()


def wait_for_global_step() -> bool:
    """Load (compile) the kernel's frame with the global step now, blocking: for runs without a
    UI, which wait for compiles. Returns whether it loaded."""
    try:
        _GLOBAL_STEP.module()
    except KernelUnavailable:
        return False
    return True


def global_step_compiling() -> bool:
    """Whether the kernel's frame with the global step is being compiled (not a short load)."""
    return _GLOBAL_STEP.compiling() and not _GLOBAL_STEP.loading_from_cache()


def uses_shipped_code() -> bool:
    """Whether ``configure`` gave Numba the extension's shipped machine code (``machine_code``)."""
    return _shipped


def name() -> str:
    """The backend that steps frames now: ``"Numba"`` or ``"NumPy"``."""
    return NUMBA if kernel_ready() else NUMPY


def status() -> str:
    """One line for the user: which backend runs, and why not Numba when it does not."""
    error = unavailable_reason()
    if kernel_ready():
        if global_step_compiling():
            return f"{NUMBA} (compiled solver; NumPy for Global Iterations while that part compiles, first use only)"
        return f"{NUMBA} (compiled solver{', machine code from the zip' if _shipped else ''})"
    if error is not None:
        return f"{NUMPY} (compiled solver unavailable: {error})"
    if loading_from_cache():
        return f"{NUMPY} while the compiled solver loads from its cache"
    if compiling():
        return f"{NUMPY} while the compiled solver is built (first use only, about half a minute)"
    return NUMPY


def step(model: Model, state: State, settings: SimSettings, frame_dt: float,
         goals: tuple[np.ndarray, np.ndarray] | None = None,
         colliders: Sequence[collision.Collider] = (), use_kernel: bool | None = None,
         compiled: ModuleType | None = None, surface: SurfaceMaterial | None = None,
         plastic: PlasticSettings | None = None) -> State:
    """Advance one frame (``loop.step``, which says what each argument is), with the kernel
    chosen here.

    Args:
        use_kernel: ``True`` the compiled kernel (loading it first), ``False`` the NumPy
            reference, ``None`` the kernel when it is loaded, else the reference.
        compiled: the kernel module to use, whatever ``use_kernel`` says.

    Raises:
        BackendUnavailable: ``use_kernel=True`` without a compiled kernel; and what ``loop.step``
            raises.
    """
    if compiled is None:
        compiled = choose(model, settings, surface, use_kernel)
    return loop.step(model, state, settings, frame_dt, goals=goals, colliders=colliders, compiled=compiled,
                     surface=surface, plastic=plastic)


def choose(model: Model, settings: SimSettings, surface: SurfaceMaterial | None,
           use_kernel: bool | None) -> ModuleType | None:
    """The kernel module a frame of ``model`` with ``settings`` steps with, or ``None`` for the
    NumPy reference (``use_kernel`` as ``step``'s: ``None``, the kernel when it is loaded with what
    the frame needs, the global step's part included).

    Raises:
        BackendUnavailable: ``use_kernel=True`` without a compiled kernel.
    """
    with_global_step = global_solve.used(model, settings, surface)
    if use_kernel is None:
        use_kernel = kernel_ready() and (not with_global_step or global_step_ready())
    compiled = kernel() if use_kernel else None
    if compiled is not None and with_global_step:
        _GLOBAL_STEP.module()  # asked for explicitly: wait for its compile
    return compiled
