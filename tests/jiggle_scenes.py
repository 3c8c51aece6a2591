"""Jiggle scenes for the engine tests and the benchmark: straight chains along +y whose roots follow
a motion given as a function of time, stepped frame by frame as the Blender layer does."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from tetrig_addon import jiggle


def chain_rig(chains: int, bones_per_chain: int, length: float = 0.1, spacing: float = 0.2,
              stiffness: float = 60.0, damping: float = 4.0,
              **settings: object) -> tuple[jiggle.ChainModel, np.ndarray, np.ndarray]:
    """A rig of straight chains along +y, side by side along x.

    Returns:
        (model, parents int64 [n], root offsets float64 [n, 3]: each root's place in the rig).
    """
    parents, offsets = [], []
    for c in range(chains):
        for i in range(bones_per_chain):
            parents.append(-1 if i == 0 else len(parents) - 1)
            offsets.append((c * spacing, 0.0, 0.0))
    n = len(parents)
    model = jiggle.build_model([f"bone{i}" for i in range(n)], np.array(parents), np.full(n, length), stiffness, damping,
                               **settings)  # type: ignore[arg-type]
    return model, np.array(parents), np.array(offsets)


def rig_pose(model: jiggle.ChainModel, offsets: np.ndarray, root: np.ndarray, scale: float = 1.0,
             move_object: bool = False, **extra: object) -> jiggle.FramePose:
    """The pose with the chain roots at root + scale·offset [m] (a uniform rig scale), every child
    at its parent's tail. ``move_object``: the rig object itself is at ``root`` (it carries the
    chains); otherwise it stays at the origin and the roots are parent bones animated to ``root``."""
    n = model.bone_count
    local = np.tile(np.eye(4), (n, 1, 1))
    for i in range(n):
        if model.parent[i] < 0:
            local[i, :3, :3] *= scale
            local[i, :3, 3] = root + scale * offsets[i]
        else:
            local[i, :3, 3] = (0.0, model.length[model.parent[i]], 0.0)
    world = np.eye(4)
    world[:3, :3] *= scale
    if move_object:
        world[:3, 3] = root
    return jiggle.pose_from_matrices(local, world=world, **extra)


@dataclass
class Run:
    times: np.ndarray  # [F] s
    tails: np.ndarray  # [F, n, 3] shown tails
    heads: np.ndarray
    targets: np.ndarray  # [F, n, 3] target tails of the shown chain
    animated: np.ndarray  # [F, n, 3] tails of the animation alone (no jiggle)
    states: list


def simulate(model: jiggle.ChainModel, offsets: np.ndarray, root_at: Callable[[float], np.ndarray],
             fps: float, seconds: float, steps_per_second: float = 240.0, scale: float = 1.0,
             gravity: tuple[float, float, float] = (0.0, 0.0, 0.0), use_compiled: bool | None = None,
             colliders_at: Callable[[float], dict] | None = None,
             settings_extra: dict | None = None, move_object: bool = False) -> Run:
    """Step frames 0..fps·seconds; the rig's origin at time t is ``root_at(t)`` [m]."""
    dt = 1.0 / fps
    frames = int(round(seconds * fps))
    settings = jiggle.JiggleSettings(frame_dt=dt, substeps=jiggle.substeps_for(steps_per_second, dt),
                                     gravity=gravity, **(settings_extra or {}))

    def pose(f: int) -> jiggle.FramePose:
        extra = colliders_at(f * dt) if colliders_at is not None else {}
        return rig_pose(model, offsets, np.asarray(root_at(f * dt), dtype=float), scale, move_object, **extra)

    p = pose(0)
    state = jiggle.rest_state(model, p)
    out = Run(np.arange(frames + 1) * dt, np.zeros((frames + 1, model.bone_count, 3)),
              np.zeros((frames + 1, model.bone_count, 3)), np.zeros((frames + 1, model.bone_count, 3)),
              np.zeros((frames + 1, model.bone_count, 3)), [])
    for f in range(frames + 1):
        if f:
            nxt = pose(f)
            state = jiggle.step(model, state, p, nxt, settings, use_compiled=use_compiled)
            p = nxt
        _, out.heads[f], out.tails[f], out.targets[f] = jiggle.shown(model, state, p)
        out.animated[f] = jiggle.rest_state(model, p).positions
        out.states.append(state)
    return out


def step_motion(at: float, distance: float) -> Callable[[float], np.ndarray]:
    """The rig jumps sideways (+x) by ``distance`` [m] at time ``at`` [s] (frames at or after it)."""
    return lambda t: np.array([distance if t >= at - 1e-9 else 0.0, 0.0, 0.0])


def smooth_motion(start: float, duration: float, distance: float) -> Callable[[float], np.ndarray]:
    """The rig eases sideways (+x) by ``distance`` [m] over ``duration`` [s] (smoothstep)."""
    def at(t: float) -> np.ndarray:
        s = min(max((t - start) / duration, 0.0), 1.0)
        return np.array([distance * s * s * (3.0 - 2.0 * s), 0.0, 0.0])
    return at


def damped(t: np.ndarray, y0: float, stiffness: float, damping: float) -> np.ndarray:
    """The analytic oscillator y'' + c y' + k y = 0 from y(0) = y0, y'(0) = 0 (underdamped or critical)."""
    omega = math.sqrt(stiffness)
    zeta = damping / (2.0 * omega)
    if zeta >= 1.0:
        return y0 * np.exp(-omega * t) * (1.0 + omega * t)
    wd = omega * math.sqrt(1.0 - zeta * zeta)
    return y0 * np.exp(-zeta * omega * t) * (np.cos(wd * t) + zeta / math.sqrt(1.0 - zeta * zeta) * np.sin(wd * t))
