"""A rig's chains frame by frame: the rest state, one frame's step (a teleport re-rests it), what
a frame shows, and the spring's critical damping and frequency (the package's docstring says how
and why). The compiled kernel runs where it is loaded (``backend``), else the NumPy path
(``reference``): the same tails to rounding.
"""

from __future__ import annotations

import math

import numpy as np

from . import backend, reference
from .model import ChainModel, ChainState, FramePose, JiggleSettings, rig_motion


def shown(model: ChainModel, state: ChainState, pose: FramePose, influence: float | None = None,
          use_compiled: bool | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What a frame shows: every bone aimed at its simulated tail (``reference.shown``: the
    returned arrays and how the influence blends), through the compiled kernel when it is loaded
    (``use_compiled`` as in ``step``)."""
    alpha = float(np.clip(pose.influence if influence is None else influence, 0.0, 1.0))
    compiled = backend.kernel_ready() if use_compiled is None else use_compiled
    if compiled:
        return backend.shown(model, state, pose, alpha)
    return reference.shown(model, state, pose, alpha)


def rest_state(model: ChainModel, pose: FramePose) -> ChainState:
    """Every tail on its target, at rest (the start frame, or after a teleport)."""
    zeros = np.zeros((model.bone_count, 3))
    targets = shown(model, ChainState(zeros, zeros), pose, influence=0.0)[3]
    return ChainState(targets.copy(), np.zeros_like(targets))


def reach(model: ChainModel, state: ChainState, pose0: FramePose, pose1: FramePose,
          frame_dt: float) -> tuple[np.ndarray, np.ndarray]:
    """A box that holds every tail, with its collision radius, through the step from pose0's frame
    to pose1's: (lo, hi) float64 [3] [m], world space. A tail stays within its chain's length of
    its chain's root head, which moves in a line between the two frames; a Stretch bone's tail
    within its length and max speed · frame_dt [s] of its head. Colliders outside the box cannot
    touch the chain in that step."""
    lengths = np.zeros(model.bone_count)
    roots = model.parent < 0
    heads = []
    for pose in (pose0, pose1):
        _, head, _, target = shown(model, state, pose, influence=0.0)
        lengths = np.maximum(lengths, np.linalg.norm(target - head, axis=1))
        heads.append(head[roots])
    lengths = lengths + np.where(model.stretch, model.max_speed * frame_dt, 0.0)
    along = np.zeros(model.bone_count)
    for idx in model.levels:
        parent = model.parent[idx]
        along[idx] = lengths[idx] + np.where(parent >= 0, along[np.maximum(parent, 0)], 0.0)
    grow = float(along.max(initial=0.0) + model.radius.max(initial=0.0))
    points = np.concatenate([*heads, state.positions])
    return points.min(axis=0) - grow, points.max(axis=0) + grow


def critical_damping(stiffness: float) -> float:
    """c = 2√k [1/s]: the damping at which a displaced tail returns without overshoot (the seed's
    critical damping), for stiffness k [1/s²]."""
    return 2.0 * math.sqrt(max(stiffness, 0.0))


def frequency(stiffness: float) -> float:
    """The undamped swing frequency √k/2π [Hz] of stiffness k [1/s²], whatever the bone's length."""
    return math.sqrt(max(stiffness, 0.0)) / (2.0 * math.pi)


def teleported(world0: np.ndarray, world1: np.ndarray, settings: JiggleSettings) -> bool:
    """Whether the rig object jumped between two frames: its origin moved farther than
    ``teleport_distance`` [m] or it turned by more than ``teleport_angle`` [rad] (world matrices
    float [4, 4] in metres)."""
    w0, w1 = np.asarray(world0, dtype=np.float64), np.asarray(world1, dtype=np.float64)
    if np.linalg.norm(w1[:3, 3] - w0[:3, 3]) > settings.teleport_distance:
        return True
    r0 = w0[:3, :3] / np.linalg.norm(w0[:3, :3], axis=0)
    r1 = w1[:3, :3] / np.linalg.norm(w1[:3, :3], axis=0)
    cos_angle = np.clip((np.trace(r0.T @ r1) - 1.0) / 2.0, -1.0, 1.0)
    return bool(math.acos(cos_angle) > settings.teleport_angle)


def step(model: ChainModel, state: ChainState, pose0: FramePose, pose1: FramePose,
         settings: JiggleSettings, use_compiled: bool | None = None) -> ChainState:
    """The state one frame later: ``settings.substeps`` steps of frame_dt/substeps from pose0's
    frame to pose1's, the animation interpolated in between; a teleport of the rig re-rests it.

    Args:
        use_compiled: True forces the Numba kernel (raises ``backend.BackendUnavailable`` without
            it), False the NumPy path; None takes the kernel when it is loaded. Mesh colliders
            always take the NumPy path.

    Returns:
        A new ``ChainState`` (the inputs are not modified).
    """
    if teleported(pose0.world, pose1.world, settings):
        return rest_state(model, pose1)
    h = settings.frame_dt / settings.substeps
    gravity = np.asarray(settings.gravity, dtype=np.float64)
    motion = rig_motion(pose0.world, pose1.world, settings.substeps)
    compiled = backend.kernel_ready() if use_compiled is None else use_compiled
    if compiled and not pose1.meshes:
        return backend.substeps(model, state, pose0, pose1, h, settings.substeps, gravity, motion)
    return reference.substeps(model, state, pose0, pose1, h, settings.substeps, gravity, motion)
