"""The global step (``global_solve``) in NumPy: the reference the compiled kernel's
``_global_step`` must match, and the fallback when Numba cannot load; with the two helpers it shares
with ``reference.py`` (the tets' corner coordinates and a candidate's contact force)."""

from __future__ import annotations

import numpy as np

from . import continuum, contacts, edges, global_solve, goals, volumes
from .contacts import ContactPlan
from .continuum import ContinuumPlan
from .edges import EdgePlan
from .global_solve import GlobalPlan
from .goals import GoalPlan
from .linear3 import solve_symmetric
from .model import Model
from .volumes import VolumePlan


def tet_coordinates(x: np.ndarray, tets: np.ndarray) -> list[np.ndarray]:
    """The corners' coordinates as 12 arrays: x of corners 0-3, then y, then z."""
    p = x[tets]
    return [p[:, j, a] for a in range(3) for j in range(4)]


def contact_force(x: np.ndarray, plan: ContactPlan, p_start: np.ndarray, eps: float,
                   ids: np.ndarray, w: np.ndarray, share: np.ndarray) -> tuple:
    """``contacts.force`` of the candidates ``ids`` on a point of weight ``w`` and force ``share``."""
    p = np.einsum("vk,vkc->vc", plan.weights[ids], x[plan.indices[ids]])
    q, s, n = p_start[ids], plan.surfaces[ids], plan.normals[ids]
    return contacts.force(p[:, 0], p[:, 1], p[:, 2], q[:, 0], q[:, 1], q[:, 2], s[:, 0], s[:, 1],
                          s[:, 2], n[:, 0], n[:, 1], n[:, 2], plan.depths[ids], plan.stiffness[ids],
                          plan.static_friction[ids], plan.kinetic_friction[ids], eps, w, share)


def global_step(model: Model, x: np.ndarray, y: np.ndarray, q: np.ndarray, moving: np.ndarray, h2: float,
                 goal: np.ndarray, p_start: np.ndarray, near: np.ndarray, eps: float, edge_plan: EdgePlan,
                 volume_plan: VolumePlan, continuum_plan: ContinuumPlan, goal_plan: GoalPlan,
                 contact_plan: ContactPlan, plan: GlobalPlan) -> None:
    """The global step (``global_solve``) of the free points ``moving``: ``plan.iterations`` PCG
    iterations on H·Δx = −∇G from Δx = 0, the rigid motion of floating bodies taken out, then
    x ← x + Δx (scaled down to ``plan.step_limit``); nothing while a tet is inverted. The
    continuum tets' rotations converge first (written to ``q``)."""
    tets = model.tets
    coords = tet_coordinates(x, tets)
    corners = x[tets]
    six_volumes = np.einsum("ta,ta->t", corners[:, 1] - corners[:, 0],
                            np.cross(corners[:, 2] - corners[:, 0], corners[:, 3] - corners[:, 0]))
    if not (six_volumes > 0.0).all():
        return
    inertia = model.masses / h2 + goal_plan.stiffness
    d = x - goal
    f0, f1, f2, _ = goals.force(d[:, 0], d[:, 1], d[:, 2], goal_plan.stiffness)
    f = np.stack([f0, f1, f2], axis=1) - (model.masses / h2)[:, None] * (x - y)
    product = []  # the material's H·p, element by element
    if continuum_plan.active:
        b = tuple(continuum_plan.shape_vectors.reshape(-1, 12).T)
        rot = tuple(q[:, k] for k in range(4))
        deformation = continuum.deformation_gradient(*(coords + [b]))
        for _ in range(global_solve.ROTATION_CALLS):
            rot = continuum.extract_rotation(deformation, *rot)
        q[:] = np.stack(rot, axis=1)
        r = continuum.rotation_matrix(*rot)
        mu_v, lam_v = continuum_plan.mu_volumes, continuum_plan.lambda_volumes
        stress = np.stack(continuum.stress(deformation, r, mu_v, lam_v)[0], axis=-1).reshape(-1, 3, 3)
        np.add.at(f, tets, -np.einsum("tab,tjb->tja", stress, continuum_plan.shape_vectors))

        def tet_part(p: np.ndarray) -> None:
            part = global_solve.tet_product(r, b, mu_v, lam_v, tet_coordinates(p, tets))
            np.add.at(out[0], tets, np.stack(part, axis=-1).reshape(-1, 3, 4).transpose(0, 2, 1))
        product.append(tet_part)
    if edge_plan.active:
        ends = model.edges
        dd = x[ends[:, 0]] - x[ends[:, 1]]
        spring = edges.force(dd[:, 0], dd[:, 1], dd[:, 2], model.rest_lengths, edge_plan.stiffness)
        fe = np.stack(spring[:3], axis=1)
        np.add.at(f, ends[:, 0], fe)
        np.add.at(f, ends[:, 1], -fe)
        block = _symmetric(spring[3:])

        def edge_part(p: np.ndarray) -> None:
            hv = np.einsum("eab,eb->ea", block, p[ends[:, 0]] - p[ends[:, 1]])
            np.add.at(out[0], ends[:, 0], hv)
            np.add.at(out[0], ends[:, 1], -hv)
        product.append(edge_part)
    if volume_plan.active:
        g = np.stack(volumes.corner_gradients(*coords), axis=-1).reshape(-1, 3, 4).transpose(0, 2, 1)
        k = volume_plan.stiffness
        np.add.at(f, tets, -(k * (six_volumes - volume_plan.six_rest_volumes))[:, None, None] * g)

        def volume_part(p: np.ndarray) -> None:
            s = np.einsum("tja,tja->t", g, p[tets])
            np.add.at(out[0], tets, (k * s)[:, None, None] * g)
        product.append(volume_part)
    blocks = plan.blocks
    ids = np.flatnonzero(near)
    if ids.shape[0]:
        c = contact_plan
        w = c.weights[ids]
        cf = contact_force(x, c, p_start, eps, ids, np.ones(ids.shape[0]), np.ones(ids.shape[0]))
        np.add.at(f, c.indices[ids], c.shares[ids, :, None] * np.stack(cf[:3], axis=1)[:, None, :])
        stiff = _symmetric(cf[3:])
        blocks = blocks.copy()
        np.add.at(blocks, c.indices[ids], (w * w)[:, :, None] * np.stack(cf[3:], axis=1)[:, None, :])

        def contact_part(p: np.ndarray) -> None:
            a = np.einsum("cab,cb->ca", stiff, np.einsum("ck,cka->ca", w, p[c.indices[ids]]))
            np.add.at(out[0], c.indices[ids], w[:, :, None] * a[:, None, :])
        product.append(contact_part)
    f[~moving] = 0.0

    def multiply(p: np.ndarray) -> np.ndarray:
        out[0] = inertia[:, None] * p
        for part in product:
            part(p)
        out[0][~moving] = 0.0
        return out[0]

    if not continuum_plan.active:  # the springs' tets turn too: one cheap rotation step each, for R below
        rot = global_solve.rotation_step(
            continuum.deformation_gradient(*(coords + [tuple(plan.shape_vectors.reshape(-1, 12).T)])),
            *(q[:, k] for k in range(4)))
        q[:] = np.stack(rot, axis=1)
    turn = _point_rotations(model, q)

    def precondition(r: np.ndarray) -> np.ndarray:
        r = np.einsum("iba,ib->ia", turn, r)  # into each point's rest frame: Rᵀ r
        coarse = plan.coarse @ np.einsum("iam,ia->m", plan.modes, r)
        z = np.stack(solve_symmetric(*blocks.T, *r.T), axis=1) + np.einsum("iam,m->ia", plan.modes, coarse)
        z = np.einsum("iab,ib->ia", turn, z)
        z[~moving] = 0.0
        return z

    out = [np.zeros_like(x)]
    step = np.zeros_like(x)
    residual = f
    z = precondition(residual)
    direction = z
    rz = float(np.einsum("ia,ia->", residual, z))
    for iteration in range(plan.iterations):
        hp = multiply(direction)
        curvature = float(np.einsum("ia,ia->", direction, hp))
        if not curvature > 0.0:
            break
        alpha = rz / curvature
        step = step + alpha * direction
        if iteration == plan.iterations - 1:
            break
        residual = residual - alpha * hp
        z = precondition(residual)
        rz_next = float(np.einsum("ia,ia->", residual, z))
        direction = z + (rz_next / rz) * direction
        rz = rz_next
    _drop_rigid_motion(model, x, step, moving, plan.floating)
    longest = float(np.sqrt(np.einsum("ia,ia->i", step, step).max(initial=0.0)))
    scale = plan.step_limit / longest if longest > plan.step_limit else 1.0
    x[moving] += scale * step[moving]


def _point_rotations(model: Model, q: np.ndarray) -> np.ndarray:
    """float64 [particle_count, 3, 3]: each point's rotation for the preconditioner, the normalized
    sum of its tets' quaternions (each taken with w ≥ 0; the identity for a point without tets)."""
    aligned = q * np.where(q[:, :1] < 0.0, -1.0, 1.0)
    total = np.zeros((model.particle_count, 4))
    for j in range(4):
        np.add.at(total, model.tets[:, j], aligned)
    length = np.sqrt(np.einsum("ik,ik->i", total, total))
    total = np.where(length[:, None] > 0.0, total / np.where(length > 0.0, length, 1.0)[:, None], [1.0, 0.0, 0.0, 0.0])
    return np.stack(continuum.rotation_matrix(*total.T), axis=-1).reshape(-1, 3, 3)


def _drop_rigid_motion(model: Model, x: np.ndarray, step: np.ndarray, moving: np.ndarray,
                       floating: np.ndarray) -> None:
    """Take the mass-weighted translation t and rotation ω out of ``step`` (in place) on the
    moving points of each floating body: Σm·Δx = 0 and Σm·(x − c)×Δx = 0 afterwards."""
    body = model.topology.components
    for c in np.flatnonzero(floating):
        points = np.flatnonzero(moving & (body == c))
        if points.shape[0] == 0:
            continue
        m = model.masses[points]
        r = x[points] - (m @ x[points]) / m.sum()
        t = (m @ step[points]) / m.sum()
        momentum = np.einsum("i,ia->a", m, np.cross(r, step[points]))
        inertia = np.einsum("i,i->", m, np.einsum("ia,ia->i", r, r)) * np.eye(3) - np.einsum("i,ia,ib->ab", m, r, r)
        omega = np.array(solve_symmetric(inertia[0, 0], inertia[0, 1], inertia[0, 2], inertia[1, 1], inertia[1, 2],
                                         inertia[2, 2], *momentum))
        step[points] -= t + np.cross(omega, r)


def _symmetric(h: tuple) -> np.ndarray:
    """float64 [k, 3, 3] from the six entries (H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂) of k symmetric blocks."""
    h00, h01, h02, h11, h12, h22 = (np.broadcast_to(np.asarray(v, dtype=np.float64), np.shape(h[0])) for v in h)
    return np.stack([np.stack([h00, h01, h02], -1), np.stack([h01, h11, h12], -1),
                     np.stack([h02, h12, h22], -1)], -2)
