"""The step loop in NumPy: the reference the compiled kernel (``kernel.py``) must match, and the
fallback when Numba cannot load.

Vectorized over the points of one colour at a time (they share no element, so solving them together
is the same as one after another); the constraint formulas are the modules' own (``edges.force``,
``volumes.force``, ...), the same the kernel inlines. See ``loop.py`` for the method.
"""

from __future__ import annotations

import numpy as np

from . import bending, continuum, contacts, edges, goals, pressure, volumes
from .bending import BendingPlan
from .contacts import ContactPlan
from .continuum import ContinuumPlan
from .edges import EdgePlan
from .global_solve import GlobalPlan
from .goals import GoalPlan
from .linear3 import solve_symmetric
from .model import Model, State
from .pressure import PressurePlan
from .integrator import SECOND_ORDER_STEP, history_start, substep_decays
from .reference_global import contact_force as _contact_force
from .reference_global import global_step
from .reference_global import tet_coordinates as _tet_coordinates
from .settings import SimSettings
from .volumes import VolumePlan

# Newton steps of a point's local solve, at most, when it is near a contact: another step is taken
# while the last one moved one of its contacts into or out of contact (the penalty is piecewise
# quadratic, so a step that crosses the switch is not the minimum). The same in the kernel.
CONTACT_NEWTON_STEPS = 3


def advance(model: Model, state: State, settings: SimSettings, frame_dt: float, edge_plan: EdgePlan,
            volume_plan: VolumePlan, continuum_plan: ContinuumPlan, bending_plan: BendingPlan,
            pressure_plan: PressurePlan, global_plan: GlobalPlan, goal_plan: GoalPlan,
            contact_plan: ContactPlan) -> State:
    """One frame of ``settings.substeps`` substeps from ``state`` (not modified); see ``loop.step``."""
    x, v, q = state.positions.copy(), state.velocities.copy(), state.rotations.copy()
    substeps = settings.substeps
    h = frame_dt / substeps
    old = history_start(state, settings, h)  # (xₙ₋₁, vₙ₋₁) while BDF2 has them
    free = model.inverse_masses > 0.0
    decays = substep_decays(settings, h)
    gravity = np.asarray(settings.gravity, dtype=np.float64)
    goal_velocity = (goal_plan.end - goal_plan.start) / frame_dt
    g_length = float(np.sqrt(gravity @ gravity))
    topo = model.topology
    plans = (edge_plan, volume_plan, continuum_plan, bending_plan, pressure_plan, goal_plan, contact_plan)
    for s in range(substeps):
        goal = goal_plan.start + (goal_plan.end - goal_plan.start) * ((s + 1) / substeps)
        # pre-solve: the integrator's base point and velocity (BDF2: from the last two substeps);
        # damping, goal damping, speed limit; the inertial target y and the start x
        second = old is not None
        hs = SECOND_ORDER_STEP * h if second else h  # the step the incremental potential is of
        h2 = hs * hs
        eps = contacts.FRICTION_SLIP_SPEED * hs
        base = x.copy()
        vf = v[free]
        if old is not None:
            base[free] = (4.0 * x[free] - old[0][free]) / 3.0
            vf = (4.0 * vf - old[1][free]) / 3.0
        if settings.second_order:
            old = (x.copy(), v.copy())
        vf = vf * decays[1 if second else 0]
        vf -= goal_plan.damping[free, None] * (vf - goal_velocity[free])
        speed = np.sqrt(np.einsum("ij,ij->i", vf, vf))
        vf *= np.where(speed > settings.max_speed, settings.max_speed / np.maximum(speed, 1e-300), 1.0)[:, None]
        y = goal.copy()
        y[free] = base[free] + hs * vf + h2 * gravity
        x[free] = base[free] + hs * vf
        x[~free] = goal[~free]
        v[free] = vf
        speed = np.sqrt(np.einsum("ij,ij->i", v, v))
        speed[~free] = np.sqrt(np.einsum("ij,ij->i", goal_velocity[~free], goal_velocity[~free]))
        p_start = _contact_points(base, contact_plan)
        plan = contact_plan
        reach = np.einsum("vk,vk->v", np.abs(plan.weights), speed[plan.indices])
        distance = np.einsum("ij,ij->i", plan.normals, p_start - plan.surfaces)
        near = contacts.near(distance, reach, h, g_length)
        point_near = np.zeros(model.particle_count, dtype=bool)
        point_near[plan.indices[near].ravel()] = True
        for _ in range(CONTACT_NEWTON_STEPS if near.any() else 1):
            _coarse_step(model, x, y, q, free, h2, goal, p_start, near, eps, *plans)
        if pressure_plan.active:
            _pressure_step(model, x, y, free, h2, pressure_plan)
        if global_plan.active:
            global_step(model, x, y, q, free, h2, goal, p_start, near, eps, edge_plan, volume_plan, continuum_plan,
                         goal_plan, contact_plan, global_plan)
        gas = _gas(model, x, pressure_plan)[:2]  # E' and E'' for the sweeps (``pressure``)
        for sweep in range(settings.iterations):
            colours = range(topo.color_count) if sweep % 2 == 0 else range(topo.color_count - 1, -1, -1)
            for c in colours:
                points = topo.color_points[topo.color_offsets[c]:topo.color_offsets[c + 1]].astype(np.int64)
                switched = _local_solve(model, x, y, q, points, h2, goal, p_start, near, eps, gas, *plans)
                again = points[switched & point_near[points]]
                for _ in range(CONTACT_NEWTON_STEPS - 1):
                    if again.shape[0] == 0:
                        break
                    switched = _local_solve(model, x, y, q, again, h2, goal, p_start, near, eps, gas, *plans)
                    again = again[switched]
        v[free] = (x[free] - base[free]) / hs
        v[~free] = goal_velocity[~free]
    out = State(x, v, q)
    if old is not None:
        out.history = (old[0], old[1], h)
    return out


def _rows(offsets: np.ndarray, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rows, slots): the CSR rows of ``points`` (in point order, then row order) and, for each,
    the position of its point in ``points``."""
    starts = offsets[points]
    counts = offsets[points + 1] - starts
    slots = np.repeat(np.arange(points.shape[0]), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    return starts[slots] + (np.arange(slots.shape[0]) - first), slots


def _accumulate(total: list, part: tuple, slots: np.ndarray, count: int) -> None:
    """total[k] += Σ over rows of part[k] into their slots (force and Hessian components)."""
    for k in range(9):
        total[k] = total[k] + np.bincount(slots, weights=part[k], minlength=count)


def _contact_points(x: np.ndarray, plan: ContactPlan) -> np.ndarray:
    """float64 [contact_count, 3]: p = Σₖ wₖ xₖ of every candidate."""
    return np.einsum("vk,vkc->vc", plan.weights, x[plan.indices])


def _continuum_state(model: Model, x: np.ndarray, q: np.ndarray, tids: np.ndarray,
                     plan: ContinuumPlan, update: bool) -> tuple:
    """(V₀P, cof F) of the tets ``tids``; with ``update`` their rotation estimates take their
    extraction steps first (written to ``q``)."""
    b = plan.shape_vectors[tids].reshape(-1, 12)
    f = continuum.deformation_gradient(*(_tet_coordinates(x, model.tets[tids]) + [tuple(b.T)]))
    rot = tuple(q[tids, k] for k in range(4))
    if update:
        rot = continuum.extract_rotation(f, *rot)
        q[tids] = np.stack(rot, axis=1)
    return continuum.stress(f, continuum.rotation_matrix(*rot), plan.mu_volumes[tids],
                            plan.lambda_volumes[tids])


def _local_solve(model: Model, x: np.ndarray, y: np.ndarray, q: np.ndarray, points: np.ndarray,
                 h2: float, goal: np.ndarray, p_start: np.ndarray, near: np.ndarray, eps: float,
                 gas: tuple, edge_plan: EdgePlan, volume_plan: VolumePlan, continuum_plan: ContinuumPlan,
                 bending_plan: BendingPlan, pressure_plan: PressurePlan, goal_plan: GoalPlan,
                 contact_plan: ContactPlan) -> np.ndarray:
    """One Newton step of every point of ``points`` (which share no element) on its local
    incremental potential; moves them in place. Returns bool [len(points)]: whether the step moved
    one of the point's near contacts into or out of contact."""
    topo = model.topology
    count = points.shape[0]
    mh = model.masses[points] / h2
    xp = x[points]
    zero = np.zeros(count)
    total = [-mh * (xp[:, 0] - y[points, 0]), -mh * (xp[:, 1] - y[points, 1]),
             -mh * (xp[:, 2] - y[points, 2]), mh, zero, zero, mh, zero, mh]
    if edge_plan.active:
        rows, slots = _rows(topo.edge_offsets, points)
        ids = topo.edge_ids[rows]
        d = xp[slots] - x[topo.edge_others[rows]]
        _accumulate(total, edges.force(d[:, 0], d[:, 1], d[:, 2], model.rest_lengths[ids],
                                       edge_plan.stiffness[ids]), slots, count)
    if volume_plan.active or continuum_plan.active:
        rows, slots = _rows(topo.tet_offsets, points)
        ids = topo.tet_ids[rows]
        if volume_plan.active:
            face = x[topo.tet_faces[rows]]
            j = xp[slots]
            part = volumes.force(face[:, 0, 0], face[:, 0, 1], face[:, 0, 2], face[:, 1, 0],
                                 face[:, 1, 1], face[:, 1, 2], face[:, 2, 0], face[:, 2, 1],
                                 face[:, 2, 2], j[:, 0], j[:, 1], j[:, 2],
                                 volume_plan.six_rest_volumes[ids], volume_plan.stiffness[ids])
        else:
            p, cof = _continuum_state(model, x, q, ids, continuum_plan, update=True)
            vec = continuum_plan.shape_vectors[ids, topo.tet_corners[rows]]
            part = continuum.corner_force(p, cof, continuum_plan.mu_volumes[ids],
                                          continuum_plan.lambda_volumes[ids],
                                          vec[:, 0], vec[:, 1], vec[:, 2])
        _accumulate(total, part, slots, count)
    if bending_plan.active:
        rows, slots = _rows(topo.hinge_offsets, points)
        ids = topo.hinge_ids[rows]
        delta, grads = _hinge_gradients(model, x, ids, bending_plan)
        g = grads[np.arange(rows.shape[0]), topo.hinge_corners[rows]]
        _accumulate(total, bending.force(delta, bending_plan.stiffness[ids], g[:, 0], g[:, 1], g[:, 2]),
                    slots, count)
    if pressure_plan.active:
        rows, slots = _rows(topo.triangle_offsets, points)
        tri = model.triangles[topo.triangle_ids[rows]]
        corner = topo.triangle_corners[rows]
        b, c = x[tri[np.arange(rows.shape[0]), (corner + 1) % 3]], x[tri[np.arange(rows.shape[0]), (corner + 2) % 3]]
        g = [np.bincount(slots, weights=part, minlength=count) for part in pressure.corner_gradient(
            b[:, 0], b[:, 1], b[:, 2], c[:, 0], c[:, 1], c[:, 2])]
        part = pressure.force(gas[0], gas[1], *g)
        for k in range(9):
            total[k] = total[k] + part[k]
    stiffness = goal_plan.stiffness[points]
    d = xp - goal[points]
    f0, f1, f2, s = goals.force(d[:, 0], d[:, 1], d[:, 2], stiffness)
    total[0], total[1], total[2] = total[0] + f0, total[1] + f1, total[2] + f2
    total[3], total[6], total[8] = total[3] + s, total[6] + s, total[8] + s
    rows = slots = ids = corners = np.zeros(0, dtype=np.int64)
    if contact_plan.contact_count:
        rows, slots = _rows(contact_plan.point_offsets, points)
        ids = contact_plan.point_contacts[rows]
        keep = near[ids]
        rows, slots, ids = rows[keep], slots[keep], ids[keep]
        corners = contact_plan.point_corners[rows]
        if rows.shape[0]:
            _accumulate(total, _contact_force(x, contact_plan, p_start, eps, ids,
                                              contact_plan.weights[ids, corners],
                                              contact_plan.shares[ids, corners]), slots, count)
    dx = np.stack(solve_symmetric(*total[3:], *total[:3]), axis=1)
    x[points] += dx
    return _contacts_switched(x, contact_plan, ids, corners, slots, dx, count)


def _contacts_switched(x: np.ndarray, plan: ContactPlan, ids: np.ndarray, corners: np.ndarray,
                       slots: np.ndarray, dx: np.ndarray, count: int) -> np.ndarray:
    """bool [count]: whether each point's step ``dx`` moved one of its near contacts (rows
    ``ids``/``corners`` of the point at ``slots``) into or out of contact."""
    w = plan.weights[ids]
    xs = x[plan.indices[ids]]
    p = w[:, 0, None] * xs[:, 0] + w[:, 1, None] * xs[:, 1] + w[:, 2, None] * xs[:, 2] + w[:, 3, None] * xs[:, 3]
    n, s, depth = plan.normals[ids], plan.surfaces[ids], plan.depths[ids]
    after = n[:, 0] * (p[:, 0] - s[:, 0]) + n[:, 1] * (p[:, 1] - s[:, 1]) + n[:, 2] * (p[:, 2] - s[:, 2])
    d = dx[slots]
    before = after - plan.weights[ids, corners] * (n[:, 0] * d[:, 0] + n[:, 1] * d[:, 1] + n[:, 2] * d[:, 2])
    flipped = ((before < 0.0) & (before > -depth)) != ((after < 0.0) & (after > -depth))
    return np.bincount(slots[flipped], minlength=count) > 0


def _coarse_step(model: Model, x: np.ndarray, y: np.ndarray, q: np.ndarray, free: np.ndarray,
                 h2: float, goal: np.ndarray, p_start: np.ndarray, near: np.ndarray, eps: float,
                 edge_plan: EdgePlan, volume_plan: VolumePlan, continuum_plan: ContinuumPlan,
                 bending_plan: BendingPlan, pressure_plan: PressurePlan, goal_plan: GoalPlan,
                 contact_plan: ContactPlan) -> None:
    """One Newton step on a uniform translation of each body (component) of free points (see
    ``loop.py``)."""
    topo = model.topology
    if topo.component_count == 0:
        return
    body = topo.components
    mh = model.masses[free] / h2
    d = x[free] - goal[free]
    f0, f1, f2, s = goals.force(d[:, 0], d[:, 1], d[:, 2], goal_plan.stiffness[free])
    zero = np.zeros_like(mh)
    parts = [(body[free], (-mh * (x[free, 0] - y[free, 0]) + f0, -mh * (x[free, 1] - y[free, 1]) + f1,
                           -mh * (x[free, 2] - y[free, 2]) + f2, mh + s, zero, zero, mh + s, zero, mh + s))]
    if edge_plan.active and topo.boundary_edges.shape[0]:
        ids = topo.boundary_edges
        ends = model.edges[ids]
        end_free = free[ends[:, 0]]
        i = np.where(end_free, ends[:, 0], ends[:, 1])
        j = np.where(end_free, ends[:, 1], ends[:, 0])
        dd = x[i] - x[j]
        parts.append((body[i], edges.force(dd[:, 0], dd[:, 1], dd[:, 2], model.rest_lengths[ids],
                                           edge_plan.stiffness[ids])))
    if (volume_plan.active or continuum_plan.active) and topo.boundary_tets.shape[0]:
        ids = topo.boundary_tets
        corners = model.tets[ids]
        mask = free[corners].astype(np.float64)
        owner = body[corners].max(1)
        if volume_plan.active:
            arguments = _tet_coordinates(x, corners) + [
                mask[:, 0], mask[:, 1], mask[:, 2], mask[:, 3], volume_plan.six_rest_volumes[ids],
                volume_plan.stiffness[ids]]
            parts.append((owner, volumes.tet_force(*arguments)))
        else:
            p, cof = _continuum_state(model, x, q, ids, continuum_plan, update=False)
            vec = np.einsum("tk,tkc->tc", mask, continuum_plan.shape_vectors[ids])
            parts.append((owner, continuum.corner_force(p, cof, continuum_plan.mu_volumes[ids],
                                                        continuum_plan.lambda_volumes[ids],
                                                        vec[:, 0], vec[:, 1], vec[:, 2])))
    if bending_plan.active and topo.boundary_hinges.shape[0]:
        ids = topo.boundary_hinges
        corners = model.hinges[ids]
        delta, grads = _hinge_gradients(model, x, ids, bending_plan)
        g = np.einsum("hk,hkc->hc", free[corners].astype(np.float64), grads)
        parts.append((body[corners].max(1), bending.force(delta, bending_plan.stiffness[ids],
                                                          g[:, 0], g[:, 1], g[:, 2])))
    if pressure_plan.active:  # a body's translation T changes the volume by G·T (G = Σ of its gᵢ)
        gas = _gas(model, x, pressure_plan)
        count = topo.component_count
        g = [np.bincount(body[free], weights=gas[2][free, k], minlength=count) for k in range(3)]
        parts.append((np.arange(count), pressure.force(gas[0], gas[1], *g)))
    ids = np.flatnonzero(near)
    if ids.shape[0]:
        owner = body[contact_plan.indices[ids]].max(1)
        moving = owner >= 0
        ids, owner = ids[moving], owner[moving]
        parts.append((owner, _contact_force(x, contact_plan, p_start, eps, ids,
                                            contact_plan.free_weights[ids], contact_plan.free_shares[ids])))
    count = topo.component_count
    total = [np.zeros(count) for _ in range(9)]
    for owner, part in parts:
        for k in range(9):
            total[k] += np.bincount(owner, weights=np.broadcast_to(part[k], owner.shape), minlength=count)
    shift = np.stack(solve_symmetric(*total[3:], *total[:3]), axis=1)
    x[free] += shift[body[free]]


def _hinge_gradients(model: Model, x: np.ndarray, ids: np.ndarray,
                     plan: BendingPlan) -> tuple[np.ndarray, np.ndarray]:
    """(θ − θ₀ [rows], ∂θ/∂x of the four corners [rows, 4, 3]) of the hinges ``ids``."""
    p = x[model.hinges[ids]]
    values = bending.angle_gradients(*(p[:, j, a] for j in range(4) for a in range(3)))
    grads = np.stack(values[1:], axis=1).reshape(-1, 4, 3)
    return bending.angle_change(values[0], model.rest_angles[ids]), grads


def _gas(model: Model, x: np.ndarray, plan: PressurePlan) -> tuple:
    """(E', E'', volume gradients [particle_count, 3]) of the gas at ``x``; zeros when inactive."""
    if not plan.active:
        return 0.0, 0.0, None
    e1, e2 = pressure.gas(pressure.enclosed_volume(x, model.triangles), plan.pressure, plan.rest_volume)
    return float(e1), float(e2), pressure.volume_gradients(x, model.triangles)


def _pressure_step(model: Model, x: np.ndarray, y: np.ndarray, free: np.ndarray, h2: float,
                   plan: PressurePlan) -> None:
    """The gas's Newton step along dᵢ = wᵢ·gᵢ (``pressure``), in place."""
    e1, e2, g = _gas(model, x, plan)
    w = model.inverse_masses
    weight = float(np.einsum("i,ij,ij->", w, g, g))
    slope = float(np.einsum("ij,ij->", (x - y)[free], g[free]))
    x += pressure.step_length(slope, e1, e2, weight, h2) * w[:, None] * g
