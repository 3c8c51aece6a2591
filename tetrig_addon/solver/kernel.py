"""The step loop compiled with Numba: one call per frame runs every substep, sweep and point.

It is ``reference.py`` written point by point instead of colour by colour, with the same
constraint formulas (each module's ``force``, inlined here), so both give the same positions (a
test steps both on the same scenes). Importing this module imports Numba; ``backend`` does that
and falls back to the reference when it fails. Machine code is cached on disk (``cache=True``,
under ``NUMBA_CACHE_DIR``); ``fastmath`` stays off so the arithmetic is the reference's.
"""

from __future__ import annotations

import math
import types
from typing import Any, Callable

import numpy as np
from numba import njit, prange, threading_layer

from . import bending, continuum, contacts, edges, global_solve, goals, linear3, pressure, volumes
from .bending import BendingPlan
from .contacts import ContactPlan
from .continuum import ContinuumPlan
from .edges import EdgePlan
from .global_solve import GlobalPlan
from .goals import GoalPlan
from .integrator import SECOND_ORDER_STEP, history_start, substep_decays
from .model import TINY, Model, State
from .pressure import PressurePlan
from .reference import CONTACT_NEWTON_STEPS
from .settings import SimSettings
from .volumes import VolumePlan

# The formula modules call NumPy's elementwise functions by bare name, so the same code runs on
# arrays; on scalars the math module's are equal and Numba types them several times faster
# (measured: 0.29 s against 0.76 s for ``edges.force``), which keeps the first compile short.
_SCALAR_FUNCTIONS = {"sqrt": math.sqrt, "maximum": max, "absolute": abs, "sin": math.sin, "cos": math.cos,
                     "arctan2": math.atan2, "floor": math.floor}


def _scalar(function: Callable[..., Any]) -> Any:
    """``function`` with its elementwise NumPy functions swapped for scalar ones, compiled inline."""
    assert isinstance(function, types.FunctionType)
    scope = dict(function.__globals__)
    scope.update({name: value for name, value in _SCALAR_FUNCTIONS.items() if name in scope})
    copy = types.FunctionType(function.__code__, scope, function.__name__, function.__defaults__,
                              function.__closure__)
    return njit(inline="always")(copy)


_edge_force = _scalar(edges.force)
_volume_force = _scalar(volumes.force)
_tet_force = _scalar(volumes.tet_force)
_goal_force = _scalar(goals.force)
_contact_force = _scalar(contacts.force)
_near = _scalar(contacts.near)
_solve = _scalar(linear3.solve_symmetric)
_deformation_gradient = _scalar(continuum.deformation_gradient)
_rotation_matrix = _scalar(continuum.rotation_matrix)
_extract_rotation = _scalar(continuum.extract_rotation)
_stress = _scalar(continuum.stress)
_corner_force = _scalar(continuum.corner_force)
_angle_gradients = _scalar(bending.angle_gradients)
_angle_change = _scalar(bending.angle_change)
_bend_force = _scalar(bending.force)
_gas = _scalar(pressure.gas)
_volume_corner = _scalar(pressure.corner_gradient)
_gas_force = _scalar(pressure.force)
_gas_step_length = _scalar(pressure.step_length)
_tet_product = _scalar(global_solve.tet_product)
_rotation_step = _scalar(global_solve.rotation_step)
_volume_corner_gradients = _scalar(volumes.corner_gradients)


def advance(model: Model, state: State, settings: SimSettings, frame_dt: float, edge_plan: EdgePlan,
            volume_plan: VolumePlan, continuum_plan: ContinuumPlan, bending_plan: BendingPlan,
            pressure_plan: PressurePlan, global_plan: GlobalPlan, goal_plan: GoalPlan,
            contact_plan: ContactPlan) -> State:
    """One frame of ``settings.substeps`` substeps from ``state`` (not modified); see ``loop.step``."""
    x, v, q = state.positions.copy(), state.velocities.copy(), state.rotations.copy()
    t = model.topology
    c = contact_plan
    h = frame_dt / settings.substeps
    old = history_start(state, settings, h)
    have_old = old is not None
    if old is not None:
        x_old, v_old = old
    else:  # arrays the frame fills for the next (BDF2), or empty ones it leaves alone
        x_old = np.zeros_like(x) if settings.second_order else np.zeros((0, 3))
        v_old = np.zeros_like(x_old)
    decay, second_decay = substep_decays(settings, h)
    # A surface body's hinges and gas, as two tuples so the cage path passes two inactive ones
    # (their work is skipped by their first element).
    bend = (bending_plan.active, model.hinges, t.hinge_offsets, t.hinge_ids, t.hinge_corners,
            bending_plan.stiffness, model.rest_angles, t.boundary_hinges)
    gas = (pressure_plan.active, model.triangles, t.triangle_offsets, t.triangle_ids, t.triangle_corners,
           float(pressure_plan.pressure), float(pressure_plan.rest_volume))
    # ``None`` when off: the branch that calls ``_global_step`` is then pruned before typing, so the
    # first compile (and a user who never turns it on) does not compile the global step (measured:
    # it took the solver's cold compile from 25 to 36 s); turned on, ``_frame`` compiles once more.
    glob = (global_plan.active, global_plan.iterations, global_plan.blocks, global_plan.modes, global_plan.coarse,
            float(global_plan.step_limit), global_plan.floating, global_plan.shape_vectors) if global_plan.active else None
    _frame(x, v, q, model.masses, model.inverse_masses, model.edges, model.rest_lengths, model.tets,
           t.color_points, t.color_offsets, t.edge_offsets, t.edge_ids, t.edge_others,
           t.tet_offsets, t.tet_ids, t.tet_corners, t.tet_faces, t.boundary_edges, t.boundary_tets,
           t.components, t.component_count, edge_plan.active, edge_plan.stiffness, volume_plan.active,
           volume_plan.stiffness,
           volume_plan.six_rest_volumes, continuum_plan.active, continuum_plan.mu_volumes,
           continuum_plan.lambda_volumes, continuum_plan.shape_vectors, bend, gas, glob,
           goal_plan.stiffness, goal_plan.damping, goal_plan.start, goal_plan.end,
           c.indices, c.weights, c.shares, c.normals, c.surfaces, c.depths, c.stiffness,
           c.static_friction, c.kinetic_friction, c.point_offsets, c.point_contacts, c.point_corners,
           c.free_weights, c.free_shares,
           np.asarray(settings.gravity, dtype=np.float64), float(frame_dt), int(settings.substeps),
           int(settings.iterations), decay, second_decay, float(settings.max_speed),
           float(contacts.FRICTION_SLIP_SPEED), CONTACT_NEWTON_STEPS, _threads_help,
           x_old, v_old, have_old, settings.second_order)
    out = State(x, v, q)
    if settings.second_order:
        out.history = (x_old, v_old, h)
    return out


@njit(cache=True)
def _frame(x, v, q, masses, inv, edge_ends, rest_lengths, tets,
           color_points, color_offsets, edge_offsets, edge_ids, edge_others,
           tet_offsets, tet_ids, tet_corners, tet_faces, boundary_edges, boundary_tets,
           components, component_count, edge_active, edge_k, volume_active, volume_k, six_rest,
           continuum_active, mu_v, lam_v,
           shape_vectors, bend, gas, glob, goal_k, goal_damping, goal_start, goal_end,
           c_idx, c_w, c_share, c_n, c_s, c_depth, c_k, c_mus, c_muk, c_offsets, c_ids, c_corners,
           c_free_w, c_free_share, gravity, frame_dt, substeps, iterations, euler_decay, second_decay, max_speed,
           slip_speed, newton_steps, use_threads, x_old, v_old, have_old, second_order):
    """Every substep of one frame (in place on x, v, q); see ``loop.py``. With ``second_order``
    (BDF2, ``integrator``), ``x_old``, ``v_old`` [n, 3] hold the substep before the state's last
    when ``have_old`` (else the first substep is implicit Euler's) and are left holding the frame's
    own for the next frame."""
    n = x.shape[0]
    h = frame_dt / substeps
    g_length = math.sqrt(gravity[0] * gravity[0] + gravity[1] * gravity[1] + gravity[2] * gravity[2])
    y = np.empty_like(x)
    x_prev = np.empty_like(x)
    goal = np.zeros_like(x)
    speed = np.empty(n)
    p_start = np.empty((c_idx.shape[0], 3))
    contact_count = c_idx.shape[0]
    near = np.zeros(contact_count, dtype=np.bool_)
    near_fill = np.zeros(n, dtype=np.int64)
    point_near = np.zeros(n, dtype=np.bool_)
    near_offsets = np.zeros(n + 1, dtype=np.int64)
    near_ids = np.empty(c_ids.shape[0], dtype=np.int32)
    near_corners = np.empty(c_ids.shape[0], dtype=np.int32)
    row_gaps = np.empty(c_ids.shape[0])
    gas_g = np.zeros((n if gas[0] else 0, 3))  # every point's volume gradient (pressure)
    e1 = e2 = 0.0
    color_count = color_offsets.shape[0] - 1
    shared_normal = contact_count > 0
    for ci in range(1, contact_count):
        if c_n[ci, 0] != c_n[0, 0] or c_n[ci, 1] != c_n[0, 1] or c_n[ci, 2] != c_n[0, 2]:
            shared_normal = False
            break
    level = np.empty(n if shared_normal else 0)
    # Only the candidates a bound cannot rule out are tested each substep (``_near_contacts``):
    # their distance at the frame's start, and the pool of those within ``pool_level`` of it.
    x_start = x.copy()
    start_distance = np.empty(contact_count)
    pool = np.empty(contact_count, dtype=np.int32)
    pool_count = 0
    pool_level = -np.inf
    near_list = np.empty(contact_count, dtype=np.int32)
    widest = 0.0  # the largest Σₖ|wₖ| of a candidate
    for ci in range(contact_count):
        widest = max(widest, abs(c_w[ci, 0]) + abs(c_w[ci, 1]) + abs(c_w[ci, 2]) + abs(c_w[ci, 3]))
        p0, p1, p2 = _contact_point(x, c_idx, c_w, ci)
        start_distance[ci] = (c_n[ci, 0] * (p0 - c_s[ci, 0]) + c_n[ci, 1] * (p1 - c_s[ci, 1])
                              + c_n[ci, 2] * (p2 - c_s[ci, 2]))
    for s in range(substeps):
        share = (s + 1) / substeps
        second = have_old or (second_order and s > 0)
        hs = SECOND_ORDER_STEP * h if second else h  # the step the incremental potential is of
        h2 = hs * hs
        eps = slip_speed * hs
        decay = second_decay if second else euler_decay  # velocity damping over the step (``integrator``)
        # pre-solve: the integrator's base point x_prev and velocity (BDF2: from the last two
        # substeps); damping, goal damping, speed limit; the inertial target y and the start x
        for i in range(n):
            kinematic = inv[i] == 0.0
            b0, b1, b2 = x[i, 0], x[i, 1], x[i, 2]
            v0, v1, v2 = v[i, 0], v[i, 1], v[i, 2]
            if second and not kinematic:
                b0, b1 = (4.0 * b0 - x_old[i, 0]) / 3.0, (4.0 * b1 - x_old[i, 1]) / 3.0
                b2 = (4.0 * b2 - x_old[i, 2]) / 3.0
                v0, v1 = (4.0 * v0 - v_old[i, 0]) / 3.0, (4.0 * v1 - v_old[i, 1]) / 3.0
                v2 = (4.0 * v2 - v_old[i, 2]) / 3.0
            if second_order:
                x_old[i, 0], x_old[i, 1], x_old[i, 2] = x[i, 0], x[i, 1], x[i, 2]
                v_old[i, 0], v_old[i, 1], v_old[i, 2] = v[i, 0], v[i, 1], v[i, 2]
            x_prev[i, 0], x_prev[i, 1], x_prev[i, 2] = b0, b1, b2
            gd = goal_damping[i]
            if kinematic or gd > 0.0 or goal_k[i] > 0.0:
                for k in range(3):
                    goal[i, k] = goal_start[i, k] + (goal_end[i, k] - goal_start[i, k]) * share
            gv0 = (goal_end[i, 0] - goal_start[i, 0]) / frame_dt
            gv1 = (goal_end[i, 1] - goal_start[i, 1]) / frame_dt
            gv2 = (goal_end[i, 2] - goal_start[i, 2]) / frame_dt
            if kinematic:
                v0, v1, v2 = gv0, gv1, gv2
                for k in range(3):
                    x[i, k] = goal[i, k]
                    y[i, k] = goal[i, k]
            else:
                v0, v1, v2 = v0 * decay, v1 * decay, v2 * decay
                if gd > 0.0:
                    v0 -= gd * (v0 - gv0)
                    v1 -= gd * (v1 - gv1)
                    v2 -= gd * (v2 - gv2)
                length = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
                if length > max_speed:
                    scale = max_speed / length
                    v0, v1, v2 = v0 * scale, v1 * scale, v2 * scale
                v[i, 0], v[i, 1], v[i, 2] = v0, v1, v2
                y[i, 0] = b0 + hs * v0 + h2 * gravity[0]
                y[i, 1] = b1 + hs * v1 + h2 * gravity[1]
                y[i, 2] = b2 + hs * v2 + h2 * gravity[2]
                x[i, 0] = b0 + hs * v0
                x[i, 1] = b1 + hs * v1
                x[i, 2] = b2 + hs * v2
            if contact_count:
                speed[i] = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
                point_near[i] = False
        near_count = 0
        if contact_count:
            # A candidate's distance can have shrunk since the frame's start by at most Σₖ|wₖ|·(the
            # farthest any point has moved), and its reach is at most Σₖ|wₖ|·(the fastest point's
            # speed): past that bound ``contacts.near`` is false, so it is not tested.
            fastest = 0.0
            moved = 0.0
            for i in range(n):
                fastest = max(fastest, speed[i])
                moved = max(moved, (x_prev[i, 0] - x_start[i, 0]) ** 2 + (x_prev[i, 1] - x_start[i, 1]) ** 2
                            + (x_prev[i, 2] - x_start[i, 2]) ** 2)
            bound = (contacts.SUBSTEP_REACH_FACTOR * (widest * fastest * h + g_length * h * h)
                     + widest * math.sqrt(moved))
            bound = bound * (1.0 + 1e-9) + 1e-12  # rounding: the bound must stay above every test
            if bound > pool_level:
                # twice the bound, so a body at rest filters its candidates once a frame
                pool_level = 2.0 * bound
                pool_count = 0
                for ci in range(contact_count):
                    if start_distance[ci] < pool_level:
                        pool[pool_count] = ci
                        pool_count += 1
            near_count = _near_contacts(x_prev, inv, speed, c_idx, c_w, c_share, c_n, c_s, h, g_length,
                                        p_start, near, point_near, near_offsets, near_fill, near_ids,
                                        near_corners, shared_normal, level, pool[:pool_count], near_list)
        coarse_steps = newton_steps if near_count else 1
        volume = _volume_gradients(x, gas, gas_g)
        _coarse_step(x, y, q, masses, inv, edge_ends, rest_lengths, tets, boundary_edges,
                     boundary_tets, components, component_count, edge_active, edge_k,
                     volume_active, volume_k, six_rest,
                     continuum_active, mu_v, lam_v, shape_vectors, bend, gas, gas_g, volume, goal_k,
                     goal, c_idx, c_w, c_n,
                     c_s, c_depth, c_k, c_mus, c_muk, c_free_w, c_free_share, near_list[:near_count],
                     p_start, h2, eps, coarse_steps)
        if gas[0]:
            volume = _volume_gradients(x, gas, gas_g)
            e1, e2 = _gas(volume, gas[5], gas[6])
            _pressure_step(x, y, inv, gas_g, e1, e2, h2)
            e1, e2 = _gas(_volume_gradients(x, gas, gas_g), gas[5], gas[6])
        if glob is not None:
            _global_step(x, y, q, masses, inv, components, tets, edge_ends, rest_lengths, edge_active, edge_k,
                         volume_active, volume_k, six_rest, continuum_active, mu_v, lam_v, shape_vectors,
                         goal_k, goal, c_idx, c_w, c_share, c_n, c_s, c_depth, c_k, c_mus, c_muk,
                         near_list[:near_count], p_start, h2, eps, glob)
        for sweep in range(iterations):
            for cc in range(color_count):
                color = cc if sweep % 2 == 0 else color_count - 1 - cc
                points = color_points[color_offsets[color]:color_offsets[color + 1]]
                parallel = use_threads and not continuum_active and points.shape[0] >= PARALLEL_MIN_POINTS
                if parallel:
                    _solve_colour_material(points, x, y, masses, rest_lengths, edge_offsets, edge_ids,
                                           edge_others, tet_offsets, tet_ids, tet_faces, edge_active,
                                           edge_k, volume_active, volume_k, six_rest, bend, gas,
                                           e1, e2, goal_k, point_near, h2)
                _solve_colour(points, x, y, q,
                              masses, rest_lengths, tets, edge_offsets, edge_ids, edge_others,
                              tet_offsets, tet_ids, tet_corners, tet_faces, edge_active, edge_k,
                              volume_active, volume_k, six_rest, continuum_active, mu_v, lam_v,
                              shape_vectors, bend, gas, e1, e2, goal_k, goal, c_idx, c_w, c_share, c_n,
                              c_s, c_depth, c_k, c_mus, c_muk, near_offsets, near_ids, near_corners, point_near, p_start,
                              h2, eps, newton_steps, parallel, row_gaps)
        # post-solve: the velocity the step implies
        for i in range(n):
            if inv[i] > 0.0:
                for k in range(3):
                    v[i, k] = (x[i, k] - x_prev[i, k]) / hs
            else:
                for k in range(3):
                    v[i, k] = (goal_end[i, k] - goal_start[i, k]) / frame_dt


@njit(cache=True)
def _near_contacts(x_prev, inv, speed, c_idx, c_w, c_share, c_n, c_s, h, g_length, p_start, near,
                   point_near, near_offsets, near_fill, near_ids, near_corners, shared_normal, level,
                   pool, near_list):
    """The candidates that can touch their plane this substep (``contacts.near``), their start
    points, and each point's rows among them in the plan's order (a counting sort over them);
    returns how many are near, listed ascending in ``near_list``. Only the ``pool`` (int32,
    ascending) is tested: ``near`` stays false for the others, which a bound rules out.

    With ``shared_normal`` (every candidate's plane has the first one's normal n: the ground
    alone), a candidate's distance is Σₖ wₖ·(n·xₖ) − n·s from each point's n·x (``level``,
    float64 [particle_count], scratch), four loads instead of twelve, and its start point is only
    formed when it is near: most of a resting body's candidates are not (for the ground's n = +z
    it is the same arithmetic as p_z − s_z)."""
    n = near_offsets.shape[0] - 1
    near_offsets[:] = 0
    if shared_normal:
        for i in range(n):
            level[i] = c_n[0, 0] * x_prev[i, 0] + c_n[0, 1] * x_prev[i, 1] + c_n[0, 2] * x_prev[i, 2]
    near_count = 0
    for ci in pool:
        reach = 0.0
        for k in range(4):
            reach += abs(c_w[ci, k]) * speed[c_idx[ci, k]]
        if shared_normal:
            distance = (c_w[ci, 0] * level[c_idx[ci, 0]] + c_w[ci, 1] * level[c_idx[ci, 1]]
                        + c_w[ci, 2] * level[c_idx[ci, 2]] + c_w[ci, 3] * level[c_idx[ci, 3]]) - (
                c_n[ci, 0] * c_s[ci, 0] + c_n[ci, 1] * c_s[ci, 1] + c_n[ci, 2] * c_s[ci, 2])
            near[ci] = _near(distance, reach, h, g_length)
            if not near[ci]:
                continue
        for k in range(3):
            p_start[ci, k] = (c_w[ci, 0] * x_prev[c_idx[ci, 0], k] + c_w[ci, 1] * x_prev[c_idx[ci, 1], k]
                              + c_w[ci, 2] * x_prev[c_idx[ci, 2], k] + c_w[ci, 3] * x_prev[c_idx[ci, 3], k])
        if not shared_normal:
            distance = (c_n[ci, 0] * (p_start[ci, 0] - c_s[ci, 0]) + c_n[ci, 1] * (p_start[ci, 1] - c_s[ci, 1])
                        + c_n[ci, 2] * (p_start[ci, 2] - c_s[ci, 2]))
            near[ci] = _near(distance, reach, h, g_length)
        if near[ci]:
            near_list[near_count] = ci
            near_count += 1
            for k in range(4):
                point_near[c_idx[ci, k]] = True
                if c_share[ci, k] > 0.0 and inv[c_idx[ci, k]] > 0.0:
                    near_offsets[c_idx[ci, k] + 1] += 1
    for i in range(n):
        near_offsets[i + 1] += near_offsets[i]
        near_fill[i] = near_offsets[i]
    _fill_incidence(near_list[:near_count], c_idx, c_share, inv, near_fill, near_ids, near_corners)
    return near_count


@njit(inline="always")
def _fill_incidence(rows, idx, shares, inv, fill, ids, corners):
    """The second pass of a counting sort of contact corners by control point (in place): for
    each contact c of ``rows`` in order and each free corner k with a share, ids[fill[p]] = c and
    corners[fill[p]] = k for its point p, fill[p] += 1 (fill starts at each point's offset)."""
    for c in rows:
        for k in range(4):
            p = idx[c, k]
            if shares[c, k] > 0.0 and inv[p] > 0.0:
                ids[fill[p]] = c
                corners[fill[p]] = k
                fill[p] += 1


@njit(inline="always")
def _contact_point(x, c_idx, c_w, ci):
    """p = Σₖ wₖ xₖ of candidate ci."""
    a, b, c, d = c_idx[ci, 0], c_idx[ci, 1], c_idx[ci, 2], c_idx[ci, 3]
    wa, wb, wc, wd = c_w[ci, 0], c_w[ci, 1], c_w[ci, 2], c_w[ci, 3]
    return (wa * x[a, 0] + wb * x[b, 0] + wc * x[c, 0] + wd * x[d, 0],
            wa * x[a, 1] + wb * x[b, 1] + wc * x[c, 1] + wd * x[d, 1],
            wa * x[a, 2] + wb * x[b, 2] + wc * x[c, 2] + wd * x[d, 2])


@njit(inline="always")
def _continuum_state(x, q, tets, t, mu_v, lam_v, shape_vectors, update):
    """(V₀P, cof F) of tet t; with ``update`` its rotation estimate takes its steps first."""
    a, b, c, d = tets[t, 0], tets[t, 1], tets[t, 2], tets[t, 3]
    sv = shape_vectors[t]
    f = _deformation_gradient(x[a, 0], x[b, 0], x[c, 0], x[d, 0], x[a, 1], x[b, 1], x[c, 1], x[d, 1],
                              x[a, 2], x[b, 2], x[c, 2], x[d, 2],
                              (sv[0, 0], sv[0, 1], sv[0, 2], sv[1, 0], sv[1, 1], sv[1, 2],
                               sv[2, 0], sv[2, 1], sv[2, 2], sv[3, 0], sv[3, 1], sv[3, 2]))
    qw, qx, qy, qz = q[t, 0], q[t, 1], q[t, 2], q[t, 3]
    if update:
        qw, qx, qy, qz = _extract_rotation(f, qw, qx, qy, qz)
        q[t, 0], q[t, 1], q[t, 2], q[t, 3] = qw, qx, qy, qz
    return _stress(f, _rotation_matrix(qw, qx, qy, qz), mu_v[t], lam_v[t])


# A colour with at least this many points solves its plain points (no goal, no contact) on all
# cores, when Numba's threading layer is OpenMP or TBB (``warm_up`` checks): measured 1.85x faster
# on 2 cores for a 65k-tet cage. Its "workqueue" layer was slower than one core here, so with it
# everything stays serial. The points of a colour share no element: the result is the same.
PARALLEL_MIN_POINTS = 256
_threads_help = False

# Contraction (FMA) and reassociation for the point solves: about 20 % faster here, and the
# positions stay within 1e-13 m of the reference's (the backends test).
_FAST = {"contract", "arcp", "nsz", "reassoc"}


@njit(inline="always")
def _inertia_and_springs(i, xi0, xi1, xi2, x, y, masses, rest_lengths, edge_offsets, edge_ids,
                         edge_others, tet_offsets, tet_ids, tet_faces, edge_active, edge_k,
                         volume_active, volume_k, six_rest, h2):
    """Force and Hessian block (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂) of point i at (xi0, xi1,
    xi2) from its inertia, its edge springs and its tet volumes."""
    mh = masses[i] / h2
    f0, f1, f2 = -mh * (xi0 - y[i, 0]), -mh * (xi1 - y[i, 1]), -mh * (xi2 - y[i, 2])
    h00, h01, h02, h11, h12, h22 = mh, 0.0, 0.0, mh, 0.0, mh
    if edge_active:
        for r in range(edge_offsets[i], edge_offsets[i + 1]):
            e, o = edge_ids[r], edge_others[r]
            a0, a1, a2, b00, b01, b02, b11, b12, b22 = _edge_force(
                xi0 - x[o, 0], xi1 - x[o, 1], xi2 - x[o, 2], rest_lengths[e], edge_k[e])
            f0 += a0; f1 += a1; f2 += a2  # noqa: E702
            h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
    if volume_active:
        for r in range(tet_offsets[i], tet_offsets[i + 1]):
            t = tet_ids[r]
            pa, pb, pc = tet_faces[r, 0], tet_faces[r, 1], tet_faces[r, 2]
            a0, a1, a2, b00, b01, b02, b11, b12, b22 = _volume_force(
                x[pa, 0], x[pa, 1], x[pa, 2], x[pb, 0], x[pb, 1], x[pb, 2], x[pc, 0], x[pc, 1],
                x[pc, 2], xi0, xi1, xi2, six_rest[t], volume_k[t])
            f0 += a0; f1 += a1; f2 += a2  # noqa: E702
            h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
    return f0, f1, f2, h00, h01, h02, h11, h12, h22


@njit(cache=True, fastmath=_FAST)
def _solve_colour(points, x, y, q, masses, rest_lengths, tets, edge_offsets, edge_ids, edge_others,
                  tet_offsets, tet_ids, tet_corners, tet_faces, edge_active, edge_k, volume_active,
                  volume_k, six_rest, continuum_active, mu_v, lam_v, shape_vectors, bend, gas, e1, e2,
                  goal_k, goal, c_idx, c_w, c_share, c_n, c_s, c_depth, c_k, c_mus, c_muk, c_offsets, c_ids,
                  c_corners, point_near, p_start, h2, eps, newton_steps, only_special, row_gaps):
    """Newton steps of every point of one colour on its local incremental potential (in place):
    fᵢ and Hᵢ summed over its inertia, edges, tets, goal and contacts, then xᵢ += Hᵢ⁻¹fᵢ. With
    ``only_special``, only the points ``_solve_colour_material`` leaves (a goal or a contact).
    ``row_gaps``: float64 [rows of c_ids], scratch."""
    for i in points:
        if only_special and not (point_near[i] or goal_k[i] > 0.0):
            continue
        steps = newton_steps if point_near[i] else 1
        for step in range(steps):
            xi0, xi1, xi2 = x[i, 0], x[i, 1], x[i, 2]
            f0, f1, f2, h00, h01, h02, h11, h12, h22 = _inertia_and_springs(
                i, xi0, xi1, xi2, x, y, masses, rest_lengths, edge_offsets, edge_ids, edge_others,
                tet_offsets, tet_ids, tet_faces, edge_active, edge_k, volume_active, volume_k, six_rest, h2)
            if continuum_active:
                for r in range(tet_offsets[i], tet_offsets[i + 1]):
                    t = tet_ids[r]
                    corner = tet_corners[r]
                    p, cof = _continuum_state(x, q, tets, t, mu_v, lam_v, shape_vectors, True)
                    a0, a1, a2, b00, b01, b02, b11, b12, b22 = _corner_force(
                        p, cof, mu_v[t], lam_v[t], shape_vectors[t, corner, 0],
                        shape_vectors[t, corner, 1], shape_vectors[t, corner, 2])
                    f0 += a0; f1 += a1; f2 += a2  # noqa: E702
                    h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
            if bend[0] or gas[0]:
                a0, a1, a2, b00, b01, b02, b11, b12, b22 = _shell_forces(i, x, bend, gas, e1, e2)
                f0 += a0; f1 += a1; f2 += a2  # noqa: E702
                h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
            if goal_k[i] > 0.0:
                a0, a1, a2, sg = _goal_force(xi0 - goal[i, 0], xi1 - goal[i, 1], xi2 - goal[i, 2], goal_k[i])
                f0 += a0; f1 += a1; f2 += a2  # noqa: E702
                h00 += sg; h11 += sg; h22 += sg  # noqa: E702
            for r in range(c_offsets[i], c_offsets[i + 1]):
                ci = c_ids[r]
                p0, p1, p2 = _contact_point(x, c_idx, c_w, ci)
                gap = c_n[ci, 0] * (p0 - c_s[ci, 0]) + c_n[ci, 1] * (p1 - c_s[ci, 1]) + c_n[ci, 2] * (p2 - c_s[ci, 2])
                row_gaps[r] = gap
                if gap >= 0.0:
                    continue  # not in contact: no force (what contacts.force gives)
                a0, a1, a2, b00, b01, b02, b11, b12, b22 = _contact_force(
                    p0, p1, p2, p_start[ci, 0], p_start[ci, 1], p_start[ci, 2], c_s[ci, 0], c_s[ci, 1],
                    c_s[ci, 2], c_n[ci, 0], c_n[ci, 1], c_n[ci, 2], c_depth[ci], c_k[ci], c_mus[ci],
                    c_muk[ci], eps, c_w[ci, c_corners[r]], c_share[ci, c_corners[r]])
                f0 += a0; f1 += a1; f2 += a2  # noqa: E702
                h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
            d0, d1, d2 = _solve(h00, h01, h02, h11, h12, h22, f0, f1, f2)
            x[i, 0] = xi0 + d0
            x[i, 1] = xi1 + d1
            x[i, 2] = xi2 + d2
            if step + 1 < steps and not _contacts_switched(d0, d1, d2, c_w, c_n, c_depth, c_offsets[i],
                                                           c_offsets[i + 1], c_ids, c_corners, row_gaps):
                break


@njit(inline="always")
def _contacts_switched(d0, d1, d2, c_w, c_n, c_depth, first, last, c_ids, c_corners, row_gaps):
    """Whether a point's step of d moved one of its near contacts (rows first:last, their gaps
    n·(p − s) before the step in ``row_gaps``) into or out of contact
    (``reference.CONTACT_NEWTON_STEPS``): p moves by the point's weight times d."""
    for r in range(first, last):
        ci = c_ids[r]
        before = row_gaps[r]
        after = before + c_w[ci, c_corners[r]] * (c_n[ci, 0] * d0 + c_n[ci, 1] * d1 + c_n[ci, 2] * d2)
        if ((before < 0.0) and (before > -c_depth[ci])) != ((after < 0.0) and (after > -c_depth[ci])):
            return True
    return False


@njit(cache=True, fastmath=_FAST, parallel=True)
def _solve_colour_material(points, x, y, masses, rest_lengths, edge_offsets, edge_ids, edge_others,
                           tet_offsets, tet_ids, tet_faces, edge_active, edge_k, volume_active,
                           volume_k, six_rest, bend, gas, e1, e2, goal_k, point_near, h2):
    """``_solve_colour`` for the points of a colour with no goal spring and no contact this
    substep, in parallel (they share no element): inertia, edges, tet volumes, hinges and gas."""
    for slot in prange(points.shape[0]):
        i = points[slot]
        if point_near[i] or goal_k[i] > 0.0:
            continue
        xi0, xi1, xi2 = x[i, 0], x[i, 1], x[i, 2]
        f0, f1, f2, h00, h01, h02, h11, h12, h22 = _inertia_and_springs(
            i, xi0, xi1, xi2, x, y, masses, rest_lengths, edge_offsets, edge_ids, edge_others,
            tet_offsets, tet_ids, tet_faces, edge_active, edge_k, volume_active, volume_k, six_rest, h2)
        if bend[0] or gas[0]:
            a0, a1, a2, b00, b01, b02, b11, b12, b22 = _shell_forces(i, x, bend, gas, e1, e2)
            f0 += a0; f1 += a1; f2 += a2  # noqa: E702
            h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
        d0, d1, d2 = _solve(h00, h01, h02, h11, h12, h22, f0, f1, f2)
        x[i, 0] = xi0 + d0
        x[i, 1] = xi1 + d1
        x[i, 2] = xi2 + d2


@njit(cache=True)
def _coarse_step(x, y, q, masses, inv, edge_ends, rest_lengths, tets, boundary_edges, boundary_tets,
                 components, component_count, edge_active, edge_k, volume_active, volume_k, six_rest,
                 continuum_active, mu_v, lam_v, shape_vectors, bend, gas, gas_g, volume, goal_k, goal,
                 c_idx, c_w, c_n, c_s, c_depth, c_k, c_mus, c_muk, c_free_w, c_free_share, near_list,
                 p_start, h2, eps, steps):
    """``steps`` Newton steps on a uniform translation of each body (component) of free points (in
    place): its inertia, goals, contacts (the near ones, ``near_list``), the gas and the elements
    tying it to kinematic points. Inertia and goals are linear in the translation T (force
    f − (Σm/Δt² + Σk)·T), so they are summed over the points once; the contacts and those
    elements are evaluated again at every step, and the points move once at the end unless those
    elements need them moved. The gas: ``volume`` [m³] and the volume gradients ``gas_g`` at x;
    the triple products of the volume are linear in a uniform translation of any of their
    corners, so a body's T changes the volume by exactly G·T, G its points' Σgᵢ (``pressure``)."""
    if component_count == 0:
        return
    linear = np.zeros((component_count, 4))  # force at T = 0, and the Hessian's diagonal
    for i in range(x.shape[0]):
        c = components[i]
        if c >= 0:
            mh = masses[i] / h2
            a0, a1, a2, sg = _goal_force(x[i, 0] - goal[i, 0], x[i, 1] - goal[i, 1], x[i, 2] - goal[i, 2],
                                         goal_k[i])
            linear[c, 0] += -mh * (x[i, 0] - y[i, 0]) + a0
            linear[c, 1] += -mh * (x[i, 1] - y[i, 1]) + a1
            linear[c, 2] += -mh * (x[i, 2] - y[i, 2]) + a2
            linear[c, 3] += mh + sg
    move_points = boundary_edges.shape[0] > 0 or boundary_tets.shape[0] > 0 or (
        bend[0] and bend[7].shape[0] > 0)
    moved = np.zeros((component_count, 3))  # T so far, not yet added to x (unless move_points)
    total = np.empty((component_count, 9))
    shift = np.empty((component_count, 3))
    body_g = np.zeros((component_count if gas[0] else 0, 3))
    if gas[0]:
        for i in range(x.shape[0]):
            c = components[i]
            if c >= 0:
                body_g[c, 0] += gas_g[i, 0]
                body_g[c, 1] += gas_g[i, 1]
                body_g[c, 2] += gas_g[i, 2]
    for _ in range(steps):
        for c in range(component_count):
            d = linear[c, 3]
            total[c, 0] = linear[c, 0] - d * moved[c, 0]
            total[c, 1] = linear[c, 1] - d * moved[c, 1]
            total[c, 2] = linear[c, 2] - d * moved[c, 2]
            total[c, 3], total[c, 4], total[c, 5], total[c, 6], total[c, 7], total[c, 8] = d, 0.0, 0.0, d, 0.0, d
        if move_points:
            _add_boundary(x, q, inv, edge_ends, rest_lengths, tets, boundary_edges, boundary_tets, components,
                          edge_active, edge_k, volume_active, volume_k, six_rest, continuum_active, mu_v,
                          lam_v, shape_vectors, total)
        if bend[0]:
            _coarse_hinges(total, x, inv, components, bend)
        if gas[0]:
            now = volume
            for c in range(component_count):
                now += body_g[c, 0] * moved[c, 0] + body_g[c, 1] * moved[c, 1] + body_g[c, 2] * moved[c, 2]
            g1, g2 = _gas(now, gas[5], gas[6])
            for c in range(component_count):
                _add9(total, c, _gas_force(g1, g2, body_g[c, 0], body_g[c, 1], body_g[c, 2]))
        for ci in near_list:
            body = max(components[c_idx[ci, 0]], components[c_idx[ci, 1]], components[c_idx[ci, 2]],
                       components[c_idx[ci, 3]])
            if body < 0:
                continue
            p0, p1, p2 = _contact_point(x, c_idx, c_w, ci)
            if not move_points:  # p moves by (Σ of its free points' weights)·T
                fw = c_free_w[ci]
                p0, p1, p2 = p0 + fw * moved[body, 0], p1 + fw * moved[body, 1], p2 + fw * moved[body, 2]
            if c_n[ci, 0] * (p0 - c_s[ci, 0]) + c_n[ci, 1] * (p1 - c_s[ci, 1]) + c_n[ci, 2] * (p2 - c_s[ci, 2]) >= 0.0:
                continue  # not in contact: no force (what contacts.force gives)
            _add9(total, body, _contact_force(
                p0, p1, p2, p_start[ci, 0], p_start[ci, 1], p_start[ci, 2], c_s[ci, 0], c_s[ci, 1], c_s[ci, 2],
                c_n[ci, 0], c_n[ci, 1], c_n[ci, 2], c_depth[ci], c_k[ci], c_mus[ci], c_muk[ci], eps,
                c_free_w[ci], c_free_share[ci]))
        for c in range(component_count):
            t = total[c]
            shift[c, 0], shift[c, 1], shift[c, 2] = _solve(t[3], t[4], t[5], t[6], t[7], t[8], t[0], t[1], t[2])
            moved[c, 0] += shift[c, 0]
            moved[c, 1] += shift[c, 1]
            moved[c, 2] += shift[c, 2]
        if move_points:
            _translate(x, components, shift)
    if not move_points:
        _translate(x, components, moved)


@njit(cache=True)
def _global_step(x, y, q, masses, inv, components, tets, edge_ends, rest_lengths, edge_active, edge_k,
                 volume_active, volume_k, six_rest, continuum_active, mu_v, lam_v, shape_vectors, goal_k, goal,
                 c_idx, c_w, c_share, c_n, c_s, c_depth, c_k, c_mus, c_muk, near_list, p_start, h2, eps, glob):
    """The global step (``global_solve``; ``reference._global_step`` in NumPy), in place on x and q;
    nothing while a tet is inverted."""
    n = x.shape[0]
    tet_count = tets.shape[0]
    six_volumes = np.empty(tet_count)
    for t in range(tet_count):
        a, b, c, d = tets[t, 0], tets[t, 1], tets[t, 2], tets[t, 3]
        e10, e11, e12 = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
        e20, e21, e22 = x[c, 0] - x[a, 0], x[c, 1] - x[a, 1], x[c, 2] - x[a, 2]
        e30, e31, e32 = x[d, 0] - x[a, 0], x[d, 1] - x[a, 1], x[d, 2] - x[a, 2]
        six_volumes[t] = (e10 * (e21 * e32 - e22 * e31) + e11 * (e22 * e30 - e20 * e32)
                          + e12 * (e20 * e31 - e21 * e30))
        if not six_volumes[t] > 0.0:
            return
    iterations, blocks, modes, coarse, step_limit, floating = glob[1], glob[2], glob[3], glob[4], glob[5], glob[6]
    moving = np.empty(n, dtype=np.bool_)
    for i in range(n):
        moving[i] = inv[i] > 0.0
    f = np.zeros((n, 3))
    for i in range(n):
        if moving[i]:
            mh = masses[i] / h2
            a0, a1, a2, _ = _goal_force(x[i, 0] - goal[i, 0], x[i, 1] - goal[i, 1], x[i, 2] - goal[i, 2],
                                        goal_k[i])
            f[i, 0] = a0 - mh * (x[i, 0] - y[i, 0])
            f[i, 1] = a1 - mh * (x[i, 1] - y[i, 1])
            f[i, 2] = a2 - mh * (x[i, 2] - y[i, 2])
    # every tet's rotation: converged for the continuum's forces; one cheap step for the springs'
    # tets, which only turn the preconditioner (``global_solve``)
    rot = np.empty((tet_count if continuum_active else 0, 9))
    vectors = shape_vectors if continuum_active else glob[7]
    for t in range(tet_count):
        sv = vectors[t]
        a, b, c, d = tets[t, 0], tets[t, 1], tets[t, 2], tets[t, 3]
        fg = _deformation_gradient(x[a, 0], x[b, 0], x[c, 0], x[d, 0], x[a, 1], x[b, 1], x[c, 1], x[d, 1],
                                   x[a, 2], x[b, 2], x[c, 2], x[d, 2],
                                   (sv[0, 0], sv[0, 1], sv[0, 2], sv[1, 0], sv[1, 1], sv[1, 2],
                                    sv[2, 0], sv[2, 1], sv[2, 2], sv[3, 0], sv[3, 1], sv[3, 2]))
        qw, qx, qy, qz = q[t, 0], q[t, 1], q[t, 2], q[t, 3]
        if not continuum_active:
            q[t, 0], q[t, 1], q[t, 2], q[t, 3] = _rotation_step(fg, qw, qx, qy, qz)
            continue
        for _ in range(global_solve.ROTATION_CALLS):
            qw, qx, qy, qz = _extract_rotation(fg, qw, qx, qy, qz)
        q[t, 0], q[t, 1], q[t, 2], q[t, 3] = qw, qx, qy, qz
        r = _rotation_matrix(qw, qx, qy, qz)
        (rot[t, 0], rot[t, 1], rot[t, 2], rot[t, 3], rot[t, 4], rot[t, 5], rot[t, 6], rot[t, 7], rot[t, 8]) = r
        p = _stress(fg, r, mu_v[t], lam_v[t])[0]
        for j in range(4):
            k = tets[t, j]
            f[k, 0] -= p[0] * sv[j, 0] + p[1] * sv[j, 1] + p[2] * sv[j, 2]
            f[k, 1] -= p[3] * sv[j, 0] + p[4] * sv[j, 1] + p[5] * sv[j, 2]
            f[k, 2] -= p[6] * sv[j, 0] + p[7] * sv[j, 1] + p[8] * sv[j, 2]
    turn = _point_rotations(q, tets, n)
    edge_count = edge_ends.shape[0]
    edge_h = np.empty((edge_count if edge_active else 0, 6))
    if edge_active:
        for e in range(edge_count):
            i, j = edge_ends[e, 0], edge_ends[e, 1]
            out = _edge_force(x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2], rest_lengths[e], edge_k[e])
            f[i, 0] += out[0]
            f[i, 1] += out[1]
            f[i, 2] += out[2]
            f[j, 0] -= out[0]
            f[j, 1] -= out[1]
            f[j, 2] -= out[2]
            edge_h[e, 0], edge_h[e, 1], edge_h[e, 2] = out[3], out[4], out[5]
            edge_h[e, 3], edge_h[e, 4], edge_h[e, 5] = out[6], out[7], out[8]
    vol_g = np.empty((tet_count if volume_active else 0, 12))
    if volume_active:
        for t in range(tet_count):
            a, b, c, d = tets[t, 0], tets[t, 1], tets[t, 2], tets[t, 3]
            g = _volume_corner_gradients(x[a, 0], x[b, 0], x[c, 0], x[d, 0], x[a, 1], x[b, 1], x[c, 1],
                                         x[d, 1], x[a, 2], x[b, 2], x[c, 2], x[d, 2])
            s = volume_k[t] * (six_volumes[t] - six_rest[t])
            for j in range(4):
                vol_g[t, j], vol_g[t, 4 + j], vol_g[t, 8 + j] = g[j], g[4 + j], g[8 + j]
                k = tets[t, j]
                f[k, 0] -= s * g[j]
                f[k, 1] -= s * g[4 + j]
                f[k, 2] -= s * g[8 + j]
    near_count = near_list.shape[0]
    local = blocks
    contact_h = np.empty((near_count, 6))
    if near_count:
        local = blocks.copy()
        for m in range(near_count):
            ci = near_list[m]
            p0, p1, p2 = _contact_point(x, c_idx, c_w, ci)
            out = _contact_force(p0, p1, p2, p_start[ci, 0], p_start[ci, 1], p_start[ci, 2], c_s[ci, 0],
                                 c_s[ci, 1], c_s[ci, 2], c_n[ci, 0], c_n[ci, 1], c_n[ci, 2], c_depth[ci], c_k[ci],
                                 c_mus[ci], c_muk[ci], eps, 1.0, 1.0)
            for k in range(6):
                contact_h[m, k] = out[3 + k]
            for j in range(4):
                i = c_idx[ci, j]
                share, w2 = c_share[ci, j], c_w[ci, j] * c_w[ci, j]
                f[i, 0] += share * out[0]
                f[i, 1] += share * out[1]
                f[i, 2] += share * out[2]
                for k in range(6):
                    local[i, k] += w2 * out[3 + k]
    for i in range(n):
        if not moving[i]:
            f[i, 0] = f[i, 1] = f[i, 2] = 0.0
    # preconditioned conjugate gradients from Δx = 0 (f is the residual)
    step = np.zeros((n, 3))
    z = np.empty((n, 3))
    hp = np.empty((n, 3))
    _global_precondition(f, z, moving, local, modes, coarse, turn)
    direction = z.copy()
    rz = np.sum(f * z)
    for iteration in range(iterations):
        _global_product(direction, hp, masses, moving, tets, edge_ends, edge_active, volume_active, volume_k,
                        continuum_active, mu_v, lam_v, shape_vectors, goal_k, c_idx, c_w, near_list, rot, edge_h,
                        vol_g, contact_h, h2)
        curvature = np.sum(direction * hp)
        if not curvature > 0.0:
            break
        alpha = rz / curvature
        step += alpha * direction
        if iteration == iterations - 1:
            break
        f -= alpha * hp
        _global_precondition(f, z, moving, local, modes, coarse, turn)
        rz_next = np.sum(f * z)
        direction *= rz_next / rz
        direction += z
        rz = rz_next
    _drop_rigid_motion(x, step, masses, moving, components, floating)
    longest = 0.0
    for i in range(n):
        longest = max(longest, step[i, 0] * step[i, 0] + step[i, 1] * step[i, 1] + step[i, 2] * step[i, 2])
    longest = math.sqrt(longest)
    scale = step_limit / longest if longest > step_limit else 1.0
    for i in range(n):
        if moving[i]:
            x[i, 0] += scale * step[i, 0]
            x[i, 1] += scale * step[i, 1]
            x[i, 2] += scale * step[i, 2]


@njit(cache=True)
def _drop_rigid_motion(x, step, masses, moving, components, floating):
    """``reference._drop_rigid_motion``: the mass-weighted translation and rotation of ``step`` taken
    out on the moving points of each floating body (in place)."""
    count = floating.shape[0]
    sums = np.zeros((count, 7))  # Σm, Σm·x, Σm·Δx
    for i in range(x.shape[0]):
        c = components[i]
        if moving[i] and c >= 0 and floating[c]:
            m = masses[i]
            sums[c, 0] += m
            for a in range(3):
                sums[c, 1 + a] += m * x[i, a]
                sums[c, 4 + a] += m * step[i, a]
    moments = np.zeros((count, 9))  # Σm·r×Δx, then the inertia tensor's six entries
    for i in range(x.shape[0]):
        c = components[i]
        if moving[i] and c >= 0 and floating[c]:
            m = masses[i]
            r0, r1, r2 = (x[i, 0] - sums[c, 1] / sums[c, 0], x[i, 1] - sums[c, 2] / sums[c, 0],
                          x[i, 2] - sums[c, 3] / sums[c, 0])
            s0, s1, s2 = step[i, 0], step[i, 1], step[i, 2]
            moments[c, 0] += m * (r1 * s2 - r2 * s1)
            moments[c, 1] += m * (r2 * s0 - r0 * s2)
            moments[c, 2] += m * (r0 * s1 - r1 * s0)
            rr = r0 * r0 + r1 * r1 + r2 * r2
            moments[c, 3] += m * (rr - r0 * r0)
            moments[c, 4] -= m * r0 * r1
            moments[c, 5] -= m * r0 * r2
            moments[c, 6] += m * (rr - r1 * r1)
            moments[c, 7] -= m * r1 * r2
            moments[c, 8] += m * (rr - r2 * r2)
    omega = np.zeros((count, 3))
    for c in range(count):
        if sums[c, 0] > 0.0:
            mo = moments[c]
            omega[c, 0], omega[c, 1], omega[c, 2] = _solve(mo[3], mo[4], mo[5], mo[6], mo[7], mo[8],
                                                           mo[0], mo[1], mo[2])
    for i in range(x.shape[0]):
        c = components[i]
        if moving[i] and c >= 0 and floating[c]:
            total = sums[c, 0]
            r0, r1, r2 = (x[i, 0] - sums[c, 1] / total, x[i, 1] - sums[c, 2] / total, x[i, 2] - sums[c, 3] / total)
            w0, w1, w2 = omega[c, 0], omega[c, 1], omega[c, 2]
            step[i, 0] -= sums[c, 4] / total + (w1 * r2 - w2 * r1)
            step[i, 1] -= sums[c, 5] / total + (w2 * r0 - w0 * r2)
            step[i, 2] -= sums[c, 6] / total + (w0 * r1 - w1 * r0)


@njit(cache=True)
def _point_rotations(q, tets, n):
    """``reference._point_rotations``: each point's rotation (9 values, row by row), the normalized
    sum of its tets' quaternions taken with w ≥ 0."""
    total = np.zeros((n, 4))
    for t in range(tets.shape[0]):
        sign = -1.0 if q[t, 0] < 0.0 else 1.0
        for j in range(4):
            k = tets[t, j]
            for c in range(4):
                total[k, c] += sign * q[t, c]
    turn = np.empty((n, 9))
    for i in range(n):
        length = math.sqrt(total[i, 0] ** 2 + total[i, 1] ** 2 + total[i, 2] ** 2 + total[i, 3] ** 2)
        if length > 0.0:
            r = _rotation_matrix(total[i, 0] / length, total[i, 1] / length, total[i, 2] / length,
                                 total[i, 3] / length)
        else:
            r = _rotation_matrix(1.0, 0.0, 0.0, 0.0)
        for k in range(9):
            turn[i, k] = r[k]
    return turn


@njit(cache=True)
def _global_precondition(r, z, moving, local, modes, coarse, turn):
    """z = R·[(the 3×3 diagonal blocks at rest)⁻¹ + Φ·C·Φᵀ]·Rᵀ·r (``global_solve``), R each point's
    rotation (``turn``, 9 values row by row), zero where not ``moving``."""
    n = r.shape[0]
    m = modes.shape[2]
    local_r = np.empty((n, 3))  # Rᵀ r
    for i in range(n):
        t = turn[i]
        local_r[i, 0] = t[0] * r[i, 0] + t[3] * r[i, 1] + t[6] * r[i, 2]
        local_r[i, 1] = t[1] * r[i, 0] + t[4] * r[i, 1] + t[7] * r[i, 2]
        local_r[i, 2] = t[2] * r[i, 0] + t[5] * r[i, 1] + t[8] * r[i, 2]
    projected = np.zeros(m)
    for i in range(n):
        if moving[i]:
            for a in range(3):
                for k in range(m):
                    projected[k] += modes[i, a, k] * local_r[i, a]
    amounts = coarse @ projected if m else projected
    for i in range(n):
        if moving[i]:
            b = local[i]
            z0, z1, z2 = _solve(b[0], b[1], b[2], b[3], b[4], b[5], local_r[i, 0], local_r[i, 1], local_r[i, 2])
            for k in range(m):
                z0 += modes[i, 0, k] * amounts[k]
                z1 += modes[i, 1, k] * amounts[k]
                z2 += modes[i, 2, k] * amounts[k]
            t = turn[i]
            z[i, 0] = t[0] * z0 + t[1] * z1 + t[2] * z2
            z[i, 1] = t[3] * z0 + t[4] * z1 + t[5] * z2
            z[i, 2] = t[6] * z0 + t[7] * z1 + t[8] * z2
        else:
            z[i, 0] = z[i, 1] = z[i, 2] = 0.0


@njit(cache=True)
def _global_product(p, out, masses, moving, tets, edge_ends, edge_active, volume_active, volume_k,
                    continuum_active, mu_v, lam_v, shape_vectors, goal_k, c_idx, c_w, near_list, rot, edge_h, vol_g,
                    contact_h, h2):
    """out = H·p (``global_solve``): inertia, goals, the material at its current orientation and
    the near contacts; zero where not ``moving``."""
    n = p.shape[0]
    for i in range(n):
        d = masses[i] / h2 + goal_k[i]
        out[i, 0], out[i, 1], out[i, 2] = d * p[i, 0], d * p[i, 1], d * p[i, 2]
    if continuum_active:
        for t in range(tets.shape[0]):
            sv = shape_vectors[t]
            a, b, c, d = tets[t, 0], tets[t, 1], tets[t, 2], tets[t, 3]
            r = rot[t]
            h = _tet_product((r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8]),
                             (sv[0, 0], sv[0, 1], sv[0, 2], sv[1, 0], sv[1, 1], sv[1, 2],
                              sv[2, 0], sv[2, 1], sv[2, 2], sv[3, 0], sv[3, 1], sv[3, 2]), mu_v[t], lam_v[t],
                             (p[a, 0], p[b, 0], p[c, 0], p[d, 0], p[a, 1], p[b, 1], p[c, 1], p[d, 1],
                              p[a, 2], p[b, 2], p[c, 2], p[d, 2]))
            for j in range(4):
                k = tets[t, j]
                out[k, 0] += h[j]
                out[k, 1] += h[4 + j]
                out[k, 2] += h[8 + j]
    if edge_active:
        for e in range(edge_ends.shape[0]):
            i, j = edge_ends[e, 0], edge_ends[e, 1]
            d0, d1, d2 = p[i, 0] - p[j, 0], p[i, 1] - p[j, 1], p[i, 2] - p[j, 2]
            hb = edge_h[e]
            v0 = hb[0] * d0 + hb[1] * d1 + hb[2] * d2
            v1 = hb[1] * d0 + hb[3] * d1 + hb[4] * d2
            v2 = hb[2] * d0 + hb[4] * d1 + hb[5] * d2
            out[i, 0] += v0
            out[i, 1] += v1
            out[i, 2] += v2
            out[j, 0] -= v0
            out[j, 1] -= v1
            out[j, 2] -= v2
    if volume_active:
        for t in range(tets.shape[0]):
            g = vol_g[t]
            s = 0.0
            for j in range(4):
                k = tets[t, j]
                s += g[j] * p[k, 0] + g[4 + j] * p[k, 1] + g[8 + j] * p[k, 2]
            s *= volume_k[t]
            for j in range(4):
                k = tets[t, j]
                out[k, 0] += s * g[j]
                out[k, 1] += s * g[4 + j]
                out[k, 2] += s * g[8 + j]
    for m in range(near_list.shape[0]):
        ci = near_list[m]
        p0, p1, p2 = _contact_point(p, c_idx, c_w, ci)
        hb = contact_h[m]
        v0 = hb[0] * p0 + hb[1] * p1 + hb[2] * p2
        v1 = hb[1] * p0 + hb[3] * p1 + hb[4] * p2
        v2 = hb[2] * p0 + hb[4] * p1 + hb[5] * p2
        for j in range(4):
            k = c_idx[ci, j]
            w = c_w[ci, j]
            out[k, 0] += w * v0
            out[k, 1] += w * v1
            out[k, 2] += w * v2
    for i in range(n):
        if not moving[i]:
            out[i, 0] = out[i, 1] = out[i, 2] = 0.0


@njit(inline="always")
def _shell_forces(i, x, bend, gas, e1, e2):
    """Force and Hessian block of point i from its hinges (``bending``) and the gas (``pressure``,
    E' = e1 and E'' = e2 of the substep)."""
    f0 = f1 = f2 = h00 = h01 = h02 = h11 = h12 = h22 = 0.0
    if bend[0]:
        hinges, offsets, ids, corners, k, rest = bend[1], bend[2], bend[3], bend[4], bend[5], bend[6]
        for r in range(offsets[i], offsets[i + 1]):
            hid = ids[r]
            a, b, c, d = hinges[hid, 0], hinges[hid, 1], hinges[hid, 2], hinges[hid, 3]
            g = _angle_gradients(x[a, 0], x[a, 1], x[a, 2], x[b, 0], x[b, 1], x[b, 2],
                                 x[c, 0], x[c, 1], x[c, 2], x[d, 0], x[d, 1], x[d, 2])
            j = corners[r]
            if j == 0:
                g0, g1, g2 = g[1], g[2], g[3]
            elif j == 1:
                g0, g1, g2 = g[4], g[5], g[6]
            elif j == 2:
                g0, g1, g2 = g[7], g[8], g[9]
            else:
                g0, g1, g2 = g[10], g[11], g[12]
            a0, a1, a2, b00, b01, b02, b11, b12, b22 = _bend_force(
                _angle_change(g[0], rest[hid]), k[hid], g0, g1, g2)
            f0 += a0; f1 += a1; f2 += a2  # noqa: E702
            h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
    if gas[0]:
        triangles, offsets, ids, corners = gas[1], gas[2], gas[3], gas[4]
        s0 = s1 = s2 = 0.0
        for r in range(offsets[i], offsets[i + 1]):
            t, corner = ids[r], corners[r]
            b, c = triangles[t, (corner + 1) % 3], triangles[t, (corner + 2) % 3]
            q0, q1, q2 = _volume_corner(x[b, 0], x[b, 1], x[b, 2], x[c, 0], x[c, 1], x[c, 2])
            s0 += q0; s1 += q1; s2 += q2  # noqa: E702
        a0, a1, a2, b00, b01, b02, b11, b12, b22 = _gas_force(e1, e2, s0, s1, s2)
        f0 += a0; f1 += a1; f2 += a2  # noqa: E702
        h00 += b00; h01 += b01; h02 += b02; h11 += b11; h12 += b12; h22 += b22  # noqa: E702
    return f0, f1, f2, h00, h01, h02, h11, h12, h22


@njit(cache=True)
def _volume_gradients(x, gas, g):
    """The enclosed volume [m³] at x, and every point's volume gradient into g (in place); 0
    without a gas."""
    if not gas[0]:
        return 0.0
    triangles = gas[1]
    g[:] = 0.0
    volume = 0.0
    for t in range(triangles.shape[0]):
        a, b, c = triangles[t, 0], triangles[t, 1], triangles[t, 2]
        q0, q1, q2 = _volume_corner(x[b, 0], x[b, 1], x[b, 2], x[c, 0], x[c, 1], x[c, 2])
        volume += x[a, 0] * q0 + x[a, 1] * q1 + x[a, 2] * q2
        g[a, 0] += q0; g[a, 1] += q1; g[a, 2] += q2  # noqa: E702
        q0, q1, q2 = _volume_corner(x[c, 0], x[c, 1], x[c, 2], x[a, 0], x[a, 1], x[a, 2])
        g[b, 0] += q0; g[b, 1] += q1; g[b, 2] += q2  # noqa: E702
        q0, q1, q2 = _volume_corner(x[a, 0], x[a, 1], x[a, 2], x[b, 0], x[b, 1], x[b, 2])
        g[c, 0] += q0; g[c, 1] += q1; g[c, 2] += q2  # noqa: E702
    return volume


@njit(cache=True)
def _pressure_step(x, y, inv, g, e1, e2, h2):
    """The gas's Newton step along dᵢ = wᵢ·gᵢ (``pressure``), in place."""
    weight = 0.0
    slope = 0.0
    for i in range(x.shape[0]):
        if inv[i] > 0.0:
            weight += inv[i] * (g[i, 0] * g[i, 0] + g[i, 1] * g[i, 1] + g[i, 2] * g[i, 2])
            slope += (x[i, 0] - y[i, 0]) * g[i, 0] + (x[i, 1] - y[i, 1]) * g[i, 1] + (x[i, 2] - y[i, 2]) * g[i, 2]
    s = _gas_step_length(slope, e1, e2, weight, h2)
    for i in range(x.shape[0]):
        if inv[i] > 0.0:
            for k in range(3):
                x[i, k] += s * inv[i] * g[i, k]


@njit(inline="always")
def _coarse_hinges(total, x, inv, components, bend):
    """total[body] += the force and Gauss-Newton Hessian of the hinges with kinematic and free
    corners on a uniform translation of the free ones: along G = Σ of their ∂θ/∂x (in place)."""
    hinges, k, rest, boundary = bend[1], bend[5], bend[6], bend[7]
    for hid in boundary:
        a, b, c, d = hinges[hid, 0], hinges[hid, 1], hinges[hid, 2], hinges[hid, 3]
        g = _angle_gradients(x[a, 0], x[a, 1], x[a, 2], x[b, 0], x[b, 1], x[b, 2],
                             x[c, 0], x[c, 1], x[c, 2], x[d, 0], x[d, 1], x[d, 2])
        s0 = s1 = s2 = 0.0
        if inv[a] > 0.0:
            s0 += g[1]; s1 += g[2]; s2 += g[3]  # noqa: E702
        if inv[b] > 0.0:
            s0 += g[4]; s1 += g[5]; s2 += g[6]  # noqa: E702
        if inv[c] > 0.0:
            s0 += g[7]; s1 += g[8]; s2 += g[9]  # noqa: E702
        if inv[d] > 0.0:
            s0 += g[10]; s1 += g[11]; s2 += g[12]  # noqa: E702
        body = max(components[a], components[b], components[c], components[d])
        _add9(total, body, _bend_force(_angle_change(g[0], rest[hid]), k[hid], s0, s1, s2))


@njit(inline="always")
def _translate(x, components, shift):
    """x[i] += shift[body of i] for every free point (in place)."""
    for i in range(x.shape[0]):
        c = components[i]
        if c >= 0:
            x[i, 0] += shift[c, 0]
            x[i, 1] += shift[c, 1]
            x[i, 2] += shift[c, 2]


@njit(inline="always")
def _add_boundary(x, q, inv, edge_ends, rest_lengths, tets, boundary_edges, boundary_tets, components,
                  edge_active, edge_k, volume_active, volume_k, six_rest, continuum_active, mu_v, lam_v,
                  shape_vectors, total):
    """total[body] += the force and Hessian on a uniform translation of each body's free points
    from the edges and tets that tie them to kinematic points (in place)."""
    if edge_active:
        for e in boundary_edges:
            i, j = edge_ends[e, 0], edge_ends[e, 1]
            if inv[i] == 0.0:
                i, j = j, i
            _add9(total, components[i], _edge_force(
                x[i, 0] - x[j, 0], x[i, 1] - x[j, 1], x[i, 2] - x[j, 2], rest_lengths[e], edge_k[e]))
    if volume_active or continuum_active:
        for t in boundary_tets:
            a, b, c, d = tets[t, 0], tets[t, 1], tets[t, 2], tets[t, 3]
            ma = 1.0 if inv[a] > 0.0 else 0.0
            mb = 1.0 if inv[b] > 0.0 else 0.0
            mc = 1.0 if inv[c] > 0.0 else 0.0
            md = 1.0 if inv[d] > 0.0 else 0.0
            body = max(components[a], components[b], components[c], components[d])
            if volume_active:
                part = _tet_force(x[a, 0], x[b, 0], x[c, 0], x[d, 0], x[a, 1], x[b, 1], x[c, 1], x[d, 1],
                                  x[a, 2], x[b, 2], x[c, 2], x[d, 2], ma, mb, mc, md, six_rest[t], volume_k[t])
            else:
                p, cof = _continuum_state(x, q, tets, t, mu_v, lam_v, shape_vectors, False)
                sv = shape_vectors[t]
                part = _corner_force(p, cof, mu_v[t], lam_v[t],
                                     ma * sv[0, 0] + mb * sv[1, 0] + mc * sv[2, 0] + md * sv[3, 0],
                                     ma * sv[0, 1] + mb * sv[1, 1] + mc * sv[2, 1] + md * sv[3, 1],
                                     ma * sv[0, 2] + mb * sv[1, 2] + mc * sv[2, 2] + md * sv[3, 2])
            _add9(total, body, part)


@njit(inline="always")
def _add9(total, body, part):
    """total[body] += part (a force and Hessian block, 9 values)."""
    for k in range(9):
        total[body, k] += part[k]


@njit(cache=True)
def ground_candidates(x, v, indices, weights, height, frame_dt, fall, extent):
    """The contacts within their frame margin of the ground z = height: int64 [k] ascending, the
    same as ``contacts.plan``'s NumPy path (``contacts.contact_margins``) computes."""
    n = x.shape[0]
    speeds = np.empty(n)
    fastest = 0.0
    for i in range(n):
        speeds[i] = math.sqrt(v[i, 0] * v[i, 0] + v[i, 1] * v[i, 1] + v[i, 2] * v[i, 2])
        fastest = max(fastest, speeds[i])
    out = np.empty(indices.shape[0], dtype=np.int64)
    count = 0
    for c in range(indices.shape[0]):
        reach = 0.0
        own = 0.0
        z = 0.0
        for k in range(4):
            wk = weights[c, k]
            reach += abs(wk)
            own += abs(wk) * speeds[indices[c, k]]
            z += wk * x[indices[c, k], 2]
        speed = max(own, reach * (contacts.CONTACT_SPEED_SHARE * fastest))
        margin = (contacts.CONTACT_MARGIN_FACTOR * frame_dt) * speed + (
            contacts.CONTACT_MARGIN_FACTOR * fall + contacts.CONTACT_MARGIN_EXTENT * extent) * reach
        if z - height < margin:
            out[count] = c
            count += 1
    return out[:count]


@njit(cache=True)
def assemble_contacts(all_indices, all_weights, inverse_masses, near, ratio, sim_dt):
    """``contacts._assemble``'s arrays for the candidate rows ``near`` (int64 [k], indices into the
    model's contacts), compiled: (indices int32 [k, 4], weights, shares float64 [k, 4], stiffness
    [N/m], free_weights, free_shares float64 [k], point_offsets int64 [particle_count + 1],
    point_contacts, point_corners int32 [rows]); the same arithmetic as the NumPy path."""
    count = near.shape[0]
    n = inverse_masses.shape[0]
    idx = np.empty((count, 4), dtype=np.int32)
    w = np.empty((count, 4))
    shares = np.empty((count, 4))
    stiffness = np.empty(count)
    free_weights = np.empty(count)
    free_shares = np.empty(count)
    offsets = np.zeros(n + 1, dtype=np.int64)
    for c in range(count):
        total = 0.0
        for k in range(4):
            idx[c, k] = all_indices[near[c], k]
            w[c, k] = all_weights[near[c], k]
            total += max(w[c, k], 0.0)
        total = max(total, TINY)
        compliance = 0.0
        fw = 0.0
        fs = 0.0
        for k in range(4):
            shares[c, k] = max(w[c, k], 0.0) / total
            inv = inverse_masses[idx[c, k]]
            if inv > 0.0:
                fw += w[c, k]
                fs += shares[c, k]
                if shares[c, k] > 0.0:
                    compliance += shares[c, k] * w[c, k] * inv
                    offsets[idx[c, k] + 1] += 1
        free_weights[c] = fw
        free_shares[c] = fs
        stiffness[c] = ratio / (sim_dt * sim_dt * max(compliance, TINY)) if (
            compliance > 0.0 and fs >= contacts.CONTACT_FREE_SHARE) else 0.0
    for i in range(n):
        offsets[i + 1] += offsets[i]
    fill = offsets[:-1].copy()
    point_contacts = np.empty(offsets[n], dtype=np.int32)
    point_corners = np.empty(offsets[n], dtype=np.int32)
    _fill_incidence(np.arange(count), idx, shares, inverse_masses, fill, point_contacts, point_corners)
    return idx, w, shares, stiffness, free_weights, free_shares, offsets, point_contacts, point_corners


@njit(inline="always")
def _plane_distance(x, idx, w, normals, surfaces, c):
    """n·(p − s) of contact c, p = Σₖ wₖ xₖ (``contacts.project_out``'s depth)."""
    p0, p1, p2 = _contact_point(x, idx, w, c)
    return ((p0 - surfaces[c, 0]) * normals[c, 0] + (p1 - surfaces[c, 1]) * normals[c, 1]
            + (p2 - surfaces[c, 2]) * normals[c, 2])


@njit(cache=True)
def project_out(positions, inverse_masses, idx, w, shares, free_shares, normals, surfaces, depths, passes):
    """``contacts.project_out``, compiled: (corrected positions float64 [particle_count, 3] [m],
    whether any contact penetrated). The same Jacobi passes, averaged per control point."""
    rows = np.empty(idx.shape[0], dtype=np.int64)
    count = 0
    for c in range(idx.shape[0]):
        d = _plane_distance(positions, idx, w, normals, surfaces, c)
        if d < 0.0 and d > -depths[c] and free_shares[c] >= contacts.CONTACT_FREE_SHARE:
            denominator = 0.0
            for k in range(4):
                denominator += w[c, k] * shares[c, k] * inverse_masses[idx[c, k]]
            if denominator > TINY:
                rows[count] = c
                count += 1
    if count == 0:
        return positions, False
    x = positions.copy()
    n = x.shape[0]
    moving = np.zeros(n)
    for r in range(count):
        c = rows[r]
        for k in range(4):
            if shares[c, k] * inverse_masses[idx[c, k]] > 0.0:
                moving[idx[c, k]] += 1.0
    total = np.zeros((n, 3))
    for _ in range(passes):
        total[:] = 0.0
        any_active = False
        for r in range(count):
            c = rows[r]
            d = _plane_distance(x, idx, w, normals, surfaces, c)
            if not (d < 0.0 and d > -depths[c]):
                continue
            denominator = 0.0
            for k in range(4):
                denominator += w[c, k] * shares[c, k] * inverse_masses[idx[c, k]]
            scale = -d / denominator
            if scale != 0.0:
                any_active = True
            for k in range(4):
                move = shares[c, k] * inverse_masses[idx[c, k]] * scale
                for j in range(3):
                    total[idx[c, k], j] += move * normals[c, j]
        if not any_active:
            break
        for i in range(n):
            if moving[i] > 0.0:
                for j in range(3):
                    x[i, j] += total[i, j] / moving[i]
    return x, True


def warm_up() -> None:
    """Compile (or load from the cache) what the frames' steps do not reach: the colour solve of
    the material modes; then decide whether the parallel colour solve pays here (the threading
    layer Numba loaded). ``backend`` steps a one-tet cage through ``loop.step`` with this module
    first, which compiles the rest."""
    global _threads_help
    x = np.zeros((4, 3))
    goal_k = np.zeros(4)
    empty = np.zeros(0, dtype=np.int32)
    offsets = np.zeros(5, dtype=np.int64)
    bend = (False, np.zeros((0, 4), dtype=np.int32), offsets, empty, empty, np.zeros(0), np.zeros(0), empty)
    gas = (False, np.zeros((0, 3), dtype=np.int32), offsets, empty, empty, 0.0, 0.0)
    _solve_colour_material(np.arange(4, dtype=np.int32), x, x.copy(), np.ones(4), np.zeros(0), offsets,
                           empty, empty, offsets, empty, np.zeros((0, 3), dtype=np.int32), False,
                           np.zeros(0), False, np.zeros(0), np.zeros(0), bend, gas, 0.0, 0.0, goal_k,
                           np.zeros(4, dtype=np.bool_), 1.0)
    _threads_help = threading_layer() in ("omp", "tbb")

