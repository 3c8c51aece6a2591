"""Scenes the engine tests and the benchmarks share: cubes, slopes, boxes and balls (no Blender)."""

from __future__ import annotations

import numpy as np

from tetrig_addon import colliders, solver
from tetrig_addon.binding import Binding, bind, blend
from tetrig_addon.cage import build_cage

# The corners of an axis-aligned box as (x, y, z) bits, and its 12 outward triangles.
_BOX_CORNERS = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=np.float64)
_BOX_TRIANGLES = np.array([[0, 3, 2], [0, 1, 3], [4, 7, 5], [4, 6, 7], [0, 5, 1], [0, 4, 5],
                           [2, 7, 6], [2, 3, 7], [0, 6, 4], [0, 2, 6], [1, 7, 3], [1, 5, 7]])


def cube_points(size: float, per_side: int = 9) -> np.ndarray:
    """The surface points of a cube of edge ``size`` [m] centred at the origin, ``per_side`` on
    each edge: float64 [k, 3]."""
    g = np.linspace(-size / 2, size / 2, per_side)
    p = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    return p[(np.abs(p) > size / 2 - 1e-9).any(1)]


def box_collider(low, high, rotation=np.eye(3), **settings) -> colliders.Collider:
    """A closed box collider from corner ``low`` to ``high`` [m], turned by ``rotation``."""
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    verts = (low + _BOX_CORNERS * (high - low)) @ np.asarray(rotation).T
    return colliders.mesh_collider(verts, _BOX_TRIANGLES, **settings)


def tilt(degrees: float) -> np.ndarray:
    """The rotation [3, 3] that tilts +x down a slope of ``degrees`` (about −y... +x goes down)."""
    a = np.radians(degrees)
    return np.array([[np.cos(a), 0.0, np.sin(a)], [0.0, 1.0, 0.0], [-np.sin(a), 0.0, np.cos(a)]])


def body(points: np.ndarray, resolution: int = 10, **model_args) -> tuple[solver.Model, Binding]:
    """The cage model of ``points`` with every point a contact, and its binding."""
    cage = build_cage(points, resolution=resolution)
    b = bind(points, cage.control_points, cage.tets)
    model = solver.build_model(cage.control_points, cage.tets,
                               contacts=(b.control_point_indices, b.weights), **model_args)
    return model, b


def surface(model: solver.Model, b: Binding, state: solver.State) -> np.ndarray:
    """The mesh points of a state: float64 [k, 3]."""
    return blend(state.positions, b.control_point_indices, b.weights)


def rigid_fit(rest: np.ndarray, current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rotation [3, 3], translation [3]) of the best rigid fit of ``rest`` onto ``current``
    (Kabsch); the rotation angle is arccos((tr R − 1)/2)."""
    rc, cc = rest.mean(0), current.mean(0)
    u, _, vt = np.linalg.svd((rest - rc).T @ (current - cc))
    r = (u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt).T
    return r, cc - rc @ r.T


def turned_degrees(rotation: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(rotation) - 1.0) / 2.0, -1.0, 1.0))))


def slide_on_slope(mu: float, substeps: int, youngs: float = 1e6, degrees: float = 15.0,
                   seconds: float = 5.0, fps: int = 24, size: float = 0.4) -> float:
    """How far [m] the bottom face of a cube resting on a ``degrees`` slope (friction ``mu``,
    static = kinetic) moves down it in ``seconds``, from rest on the slope."""
    rotation = tilt(degrees)
    points = (cube_points(size) + [0.0, 0.0, size / 2]) @ rotation.T
    model, b = body(points)
    slope = box_collider([-5.0, -5.0, -1.0], [5.0, 5.0, 0.0], rotation, thickness_outer=0.0,
                         static_friction=mu, kinetic_friction=mu)
    settings = solver.SimSettings(youngs_modulus=youngs, volume_stiffness=10 * youngs,
                                  substeps=substeps).validated()
    state = solver.rest_state(model)
    down, normal = rotation @ [1.0, 0.0, 0.0], rotation @ [0.0, 0.0, 1.0]
    start = surface(model, b, state)
    bottom = start @ normal < 1e-6
    for _ in range(int(seconds * fps)):
        state = solver.step(model, state, settings, 1.0 / fps, colliders=[slope])
    return float(((surface(model, b, state) - start)[bottom] @ down).mean())
