"""Which implementation of the jiggle step runs: the Numba-compiled kernel (``kernel.py``) or the
NumPy path (``reference.py``), the same formulas and the same tails to rounding.

The loading is ``lazy_kernel.LazyKernel``'s: Numba is imported lazily, the first compile runs in a
background thread (``warm_up(background=True)``) while the NumPy path steps the frames, and
without Numba the NumPy path runs. Numba's cache goes where ``solver.backend.configure`` put it.
"""

from __future__ import annotations

import numpy as np

from ..lazy_kernel import KernelUnavailable, LazyKernel
from .model import ChainModel, ChainState, FramePose

# The compiled kernel was asked for but cannot load; the message says why.
BackendUnavailable = KernelUnavailable


def _load_kernel():
    """Import the kernel and compile it (or read Numba's cache) by stepping a tiny chain."""
    from . import kernel as module
    module.warm_up()
    return module


_kernel = LazyKernel(_load_kernel, "tetrig-jiggle-compile")
warm_up = _kernel.warm_up
kernel_ready = _kernel.ready
unavailable_reason = _kernel.unavailable_reason
_module = _kernel.module


def substeps(model: ChainModel, state: ChainState, pose0: FramePose, pose1: FramePose, h: float,
             count: int, gravity: np.ndarray, motion: np.ndarray) -> ChainState:
    """``reference.substeps`` through the compiled kernel (sphere and capsule colliders only).

    Raises:
        BackendUnavailable: Numba is missing or failed to load.
    """
    module = _module()
    q0, q1 = pose0.rotation, pose1.rotation
    q1 = np.where((np.einsum("ij,ij->i", q0, q1) < 0.0)[:, None], -q1, q1)
    x, v = state.positions.copy(), state.velocities.copy()

    def colliders(c0: np.ndarray, c1: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
        c1 = np.ascontiguousarray(c1, dtype=np.float64).reshape(-1, width)
        c0 = np.ascontiguousarray(c0, dtype=np.float64).reshape(-1, width) if np.shape(c0) == np.shape(c1) else c1
        return c0, c1

    s0, s1 = colliders(pose0.spheres, pose1.spheres, 4)
    c0, c1 = colliders(pose0.capsules, pose1.capsules, 7)
    module.substeps(model.parent, model.length, model.stiffness, model.damping, model.gravity_scale,
                    model.max_speed, model.angle_limit, model.radius, model.stretch.astype(np.uint8),
                    np.ascontiguousarray(q0), np.ascontiguousarray(q1), pose0.scale, pose1.scale,
                    np.ascontiguousarray(pose0.translation), np.ascontiguousarray(pose1.translation),
                    s0, s1, c0, c1, gravity, np.ascontiguousarray(motion), float(h), int(count), x, v)
    return ChainState(x, v)


def shown(model: ChainModel, state: ChainState, pose: FramePose,
          alpha: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``reference.shown`` through the compiled kernel.

    Raises:
        BackendUnavailable: Numba is missing or failed to load.
    """
    module = _module()
    n = model.bone_count
    jiggle3 = np.zeros((n, 3, 3))
    heads, tails, targets = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    module.shown(model.parent, model.length, model.stretch.astype(np.uint8), np.ascontiguousarray(pose.rotation),
                 np.ascontiguousarray(pose.scale, dtype=np.float64), np.ascontiguousarray(pose.translation),
                 np.ascontiguousarray(state.positions), float(alpha), jiggle3, heads, tails, targets)
    jiggle = np.tile(np.eye(4), (n, 1, 1))
    jiggle[:, :3, :3] = jiggle3
    return jiggle, heads, tails, targets
