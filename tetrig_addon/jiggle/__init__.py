"""Jiggle bones: spring-damper bone chains (seed 001, a KawaiiPhysics-like node) for armatures.

Each bone's tail is a particle pulled to where the animation puts it (F = −k(x − x_t) − c·v + m·g
per unit mass, the seed's force, with v measured relative to the rig object's own motion), integrated with semi-implicit Euler at a fixed number of steps per second
(the same step at any frame rate), chains root to tip from the parent's *simulated* frame, then
projected: length kept (unless stretch), a cone around the animated direction, sphere, capsule and
mesh colliders. Each bone is then turned (the shortest turn) to aim at its tail.

Why semi-implicit Euler and not XPBD: the seed's spring is a force with a frequency √k/2π that a
user sets; semi-implicit Euler is symplectic (no energy drift, so chains settle and never gain
energy) and at 240 steps/s its frequency error is (ωh)²/24, 1e-4 at 2 Hz, so a bone swings at the
frequency asked for at any frame rate. The hard rules (length, cone, colliders) are projections
after each step with the velocity taken from the corrected positions, as in position-based
dynamics, so they hold exactly every step whatever the stiffness.

Why the damping is relative to the rig object: the seed simulates in the character's component
space. A rig that walks or runs at a steady speed then does not drag its chains behind it (with
world-space damping a 5 m/s run at critical damping of a 3 Hz bone trails it by 2v/√k = 0.5 m),
while a rig that starts, stops or turns makes them swing (the spring pulls them along, in world
space); a step of a parent *bone* settles without overshoot at c = 2√k, as the seed says.

Sources: the seed (001): spring toward the animated target, damping, gravity, semi-implicit Euler,
max speed, dt clamp 1/30 s, critical damping c = 2√k, root-to-tip chains, cone limit, sphere and
capsule colliders, alpha blend. Müller et al. 2007, "Position based dynamics" (projections and the
velocity update).
"""

from __future__ import annotations

import math

import numpy as np

from . import backend, reference
from .model import (ChainModel, ChainState, FramePose, JiggleSettings, build_model,
                    matrix_to_quaternion, pose_from_matrices, quaternion_to_matrix, rig_motion,
                    substeps_for)

__all__ = ["ChainModel", "ChainState", "FramePose", "JiggleSettings", "build_model", "matrix_to_quaternion",
           "pose_from_matrices", "quaternion_to_matrix", "rig_motion", "substeps_for", "rest_state", "step", "shown",
           "teleported", "critical_damping", "frequency"]



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
