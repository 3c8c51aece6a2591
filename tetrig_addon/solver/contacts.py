"""Contacts: the mesh vertices against the ground plane and collision objects, with Coulomb
friction.

Each frame, the contact vertices that could reach a surface during the frame become candidates,
each with the plane it may touch: the ground, or the tangent plane at its closest point on a
collider (Müller et al. 2007, "Position Based Dynamics" §3.5: constraints generated once per time
step, here a frame, and kept through its substeps). A candidate p = Σₖ wₖxₖ (its control points
and barycentric weights) closer to its plane than the contact thickness gets the penalty energy
½·k_c·C², C = n·(p − s) < 0, with k_c = ``CONTACT_STIFFNESS_RATIO``·m_eff/Δt² (m_eff the
contact's effective mass; see the constant for short steps): stiff against the vertex's own
inertia, so the resting penetration is about 1/``CONTACT_STIFFNESS_RATIO`` of one step's fall under
its load (a fraction of a millimetre for a 15 cm bunny at 240 steps per second), and solved in the
same block descent as the material, so a body resting on the ground is an exact equilibrium.

Friction is Coulomb's, with the smoothed stick-slip of Li et al. 2020, "Incremental Potential
Contact" (§5): the contact point's tangential displacement u over the substep meets the force
−μ·N·f₁(|u|)/|u|·u, f₁ rising from 0 to 1 over |u| < ε = ``FRICTION_SLIP_SPEED``·Δt (static,
μ_s) and 1 beyond (sliding, μ_k). So the friction force never exceeds μ·N (nothing sticks in the
air), a body whose tangential load is below μ_s·N creeps at most ``FRICTION_SLIP_SPEED``, and
neither depends on the substep count. N = k_c·max(0, −C) is the contact's normal force.

``force`` is written once for both backends (arrays in NumPy, scalars in the compiled kernel).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Sequence, TypeAlias

import numpy as np
from numpy import maximum, sqrt  # elementwise: the kernel swaps them for math's scalar ones (``kernel._scalar``)

from .. import colliders as collision
from .model import Model, State, TINY
from .settings import SimSettings

# Contact stiffness k_c against the contact point's inertia m_eff/Δt² at steps of
# ``CONTACT_REFERENCE_STEP`` and longer; at shorter steps k_c keeps its value there (a stiffness in
# N/m, so the resting penetration does not change with the step), down to ``CONTACT_MIN_RATIO``
# times the inertia. Measured: a contact far stiffer than the material around it makes one point
# of a Gauss-Seidel sweep take a whole contact's push, and a cube resting on a 15° slope chattered
# and crept at 40 substeps per frame with a ratio of 100 (but not with 30).
CONTACT_STIFFNESS_RATIO = 100.0
CONTACT_REFERENCE_STEP = 1.0 / 240.0
CONTACT_MIN_RATIO = 20.0
# A contact point whose free control points carry less than this share of it (a vertex bound almost
# wholly to pinned points) counts as pinned: no contact stiffness. Its stiffness is set so its free
# points carry the whole correction, so a share s moves them by the depth / s: measured, a pinned
# arm's vertex with a share of 1e-17 on a free point (round-off in its weights) threw that point at
# 1e10 m/s when another part of the body touched it.
CONTACT_FREE_SHARE = 0.05
# Below this tangential speed [m/s] a contact sticks (static friction); it is the most a body held
# by static friction creeps.
FRICTION_SLIP_SPEED = 1e-4
# A candidate takes part in a substep when it is closer to its plane than this many times the
# distance it could travel in the substep (its control points' speeds and gravity); the others
# cannot touch before the next substep looks again.
SUBSTEP_REACH_FACTOR = 2.0
# Contacts farther from their surface than this many times the distance their control points could
# travel in one frame (speed and gravity) are skipped for that frame's substeps.
CONTACT_MARGIN_FACTOR = 3.0
# ... plus this fraction of the cage's size, for motion the material adds on top.
CONTACT_MARGIN_EXTENT = 0.01
# A contact's speed is taken as at least this share of the fastest control point's.
CONTACT_SPEED_SHARE = 0.25


@dataclass(frozen=True)
class ContactPlan:
    """The frame's contact candidates and, for every control point, the ones it is part of.

    Attributes:
        indices: int32 [contact_count, 4], control points of each candidate.
        weights: float64 [contact_count, 4], their barycentric weights.
        shares: float64 [contact_count, 4], how the contact force is shared among them: the
            positive weights, normalized (= the weights inside a tet). A vertex bound outside its
            tet has negative weights; pushing those corners away would fight the others, so they
            take no share, as in the PBD update over the positive weights.
        normals: float64 [contact_count, 3], unit normal of the plane it may touch.
        surfaces: float64 [contact_count, 3] [m], a point of that plane, moved out by the contact
            thickness: the vertex is in contact while n·(p − s) < 0.
        depths: float64 [contact_count] [m], how far below that plane still counts as contact
            (inf for the ground, closed colliders and vertices that started the frame outside an
            open one; Thickness Outer + Inner below an open surface otherwise, as Blender's Soft
            Body).
        stiffness: float64 [contact_count] [N/m], k_c.
        static_friction, kinetic_friction: float64 [contact_count], μ_s ≥ μ_k ≥ 0.
        point_offsets: int64 [particle_count + 1]; point i's rows are point_offsets[i]:[i+1] of
            ``point_contacts`` / ``point_corners``.
        point_contacts: int32 [rows], the candidate of each row.
        point_corners: int32 [rows], which of its four corners the point is.
        free_weights: float64 [contact_count], Σ of the weights of its free control points (how a
            uniform translation of the free points moves it).
        free_shares: float64 [contact_count], Σ of the shares of its free control points (how much
            of its force moves them).
    """

    indices: np.ndarray
    weights: np.ndarray
    shares: np.ndarray
    normals: np.ndarray
    surfaces: np.ndarray
    depths: np.ndarray
    stiffness: np.ndarray
    static_friction: np.ndarray
    kinetic_friction: np.ndarray
    point_offsets: np.ndarray
    point_contacts: np.ndarray
    point_corners: np.ndarray
    free_weights: np.ndarray
    free_shares: np.ndarray

    @property
    def contact_count(self) -> int:
        return int(self.indices.shape[0])


def force(p0, p1, p2, q0, q1, q2, s0, s1, s2, n0, n1, n2, depth, kc, mu_s, mu_k, eps, w, share):
    """Force on a control point in a contact, and its Hessian block.

    Args: the contact point p and its position q at the substep's start [m], the plane (point s,
    normal n), how deep contact counts, k_c [N/m], μ_s, μ_k, the stick distance ε [m], the point's
    weight w in p and its share of the contact force (``ContactPlan.shares``).

    Returns:
        (f₀, f₁, f₂, H₀₀, H₀₁, H₀₂, H₁₁, H₁₂, H₂₂) [N, N/m]: share·(N·n − c·u) and
        share·w·(k_c·n nᵀ + c·(I − n nᵀ)) while in contact, c = μ·N·f₁(|u|)/|u| (see the module).
    """
    c = n0 * (p0 - s0) + n1 * (p1 - s1) + n2 * (p2 - s2)
    active = (c < 0.0) * (c > -depth) * 1.0
    normal_force = -kc * c * active
    u0, u1, u2 = p0 - q0, p1 - q1, p2 - q2
    un = u0 * n0 + u1 * n1 + u2 * n2
    u0, u1, u2 = u0 - un * n0, u1 - un * n1, u2 - un * n2
    slip = sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    stick = (slip < eps) * 1.0
    f1_over_slip = stick * (2.0 / eps - slip / (eps * eps)) + (1.0 - stick) / maximum(slip, eps)
    friction = (stick * mu_s + (1.0 - stick) * mu_k) * normal_force * f1_over_slip
    kn = kc * active * share * w
    kt = friction * share * w
    d = kn - kt
    return (share * (normal_force * n0 - friction * u0), share * (normal_force * n1 - friction * u1),
            share * (normal_force * n2 - friction * u2),
            kt + d * n0 * n0, d * n0 * n1, d * n0 * n2, kt + d * n1 * n1, d * n1 * n2, kt + d * n2 * n2)


def near(distance, speed, sim_dt, gravity):
    """Whether a candidate at ``distance`` [m] from its plane, moving at ``speed`` [m/s], takes
    part in a substep of ``sim_dt`` [s] under ``gravity`` [m/s²] (arrays or scalars)."""
    return distance < SUBSTEP_REACH_FACTOR * (speed * sim_dt + gravity * sim_dt * sim_dt)


def contact_margins(model: Model, state: State, settings: SimSettings, frame_dt: float,
                    fall_factor: float = CONTACT_MARGIN_FACTOR) -> np.ndarray:
    """float64 [contact_count] [m]: how far each contact vertex could move during the next frame:
    its control points' own speeds (Σₖ|wₖ|·|vₖ|), at least ``CONTACT_SPEED_SHARE`` of the fastest
    point's, times ``CONTACT_MARGIN_FACTOR``, plus a free fall from rest (½·g·Δt²) times
    ``fall_factor``, plus ``CONTACT_MARGIN_EXTENT`` of the cage's size (``kernel.ground_candidates``
    computes the same for the ground)."""
    idx, w = model.contact_indices, np.abs(model.contact_weights)
    speeds = sqrt(np.einsum("ij,ij->i", state.velocities, state.velocities))
    reach = w[:, 0] + w[:, 1] + w[:, 2] + w[:, 3]
    own = sum(w[:, k] * speeds[idx[:, k]] for k in range(4))
    speed = np.maximum(own, reach * (CONTACT_SPEED_SHARE * float(speeds.max(initial=0.0))))
    fall = 0.5 * float(np.linalg.norm(settings.gravity)) * frame_dt * frame_dt
    extent = model.extent
    return (CONTACT_MARGIN_FACTOR * frame_dt) * speed + (fall_factor * fall + CONTACT_MARGIN_EXTENT * extent) * reach


def contact_points(model: Model, positions: np.ndarray, axis: int | None = None) -> np.ndarray:
    """p = Σₖ wₖ xₖ of every contact vertex: float64 [contact_count, 3] [m], or [contact_count]
    for one coordinate ``axis``."""
    idx, w = model.contact_indices, model.contact_weights
    x = positions if axis is None else positions[:, axis]
    wk = (lambda k: w[:, k]) if axis is not None else (lambda k: w[:, k, None])
    return wk(0) * x[idx[:, 0]] + wk(1) * x[idx[:, 1]] + wk(2) * x[idx[:, 2]] + wk(3) * x[idx[:, 3]]


def plan(model: Model, state: State, settings: SimSettings, colliders: Sequence[collision.Collider],
         frame_dt: float, sim_dt: float, compiled: ModuleType | None = None) -> ContactPlan:
    """The frame's contact candidates against the ground (``settings.ground_height``) and the
    colliders, with their per-point incidences. ``compiled`` (the kernel module) does the
    per-vertex work of the ground and the incidences faster, with the same result."""
    return assemble(model, candidate_rows(model, state, settings, colliders, frame_dt, compiled), sim_dt, compiled)


# One group of candidates (``candidate_rows``): (contact int64 [r] (rows of the model's contacts),
# normals float64 [r, 3], surfaces float64 [r, 3] [m], depths float64 [r] [m], μ_s float64 [r],
# μ_k float64 [r]), as ``ContactPlan`` names them.
Rows: TypeAlias = tuple


def candidate_rows(model: Model, state: State, settings: SimSettings, colliders: Sequence[collision.Collider],
                   frame_dt: float, compiled: ModuleType | None = None) -> list[Rows]:
    """The frame's candidates against the ground and the colliders, a ``Rows`` group per surface
    (``plan`` assembles them)."""
    rows: list[Rows] = []
    idx, w = model.contact_indices, model.contact_weights
    if (settings.ground_height is not None or colliders) and idx.shape[0]:
        fall = 0.5 * float(np.linalg.norm(settings.gravity)) * frame_dt * frame_dt
        extent = model.extent
        margins = None
        if settings.ground_height is not None:
            if compiled is not None:
                near = compiled.ground_candidates(state.positions, state.velocities, idx, w,
                                                  settings.ground_height, frame_dt, fall, extent)
            else:
                margins = contact_margins(model, state, settings, frame_dt)
                z = contact_points(model, state.positions, axis=2)
                near = np.flatnonzero(z - settings.ground_height < margins)
            count = near.shape[0]
            normals = np.zeros((count, 3))
            normals[:, 2] = 1.0
            surfaces = np.zeros((count, 3))
            surfaces[:, 2] = settings.ground_height
            rows.append((near, normals, surfaces, np.full(count, np.inf),
                         np.full(count, settings.ground_static_friction),
                         np.full(count, settings.ground_friction)))
        if colliders:
            p = contact_points(model, state.positions)
            if margins is None:
                margins = contact_margins(model, state, settings, frame_dt)
            for collider in colliders:
                rows.extend(_collider_rows(collider, p, margins))
    return rows


def assemble(model: Model, rows: Sequence[Rows], sim_dt: float, compiled: ModuleType | None = None) -> ContactPlan:
    """The ``ContactPlan`` of candidate groups (``candidate_rows``, ``pairs``) for substeps of
    ``sim_dt`` [s]."""
    if not rows:
        return _assemble(model, np.zeros(0, dtype=np.int64), np.zeros((0, 3)), np.zeros((0, 3)),
                         np.zeros(0), np.zeros(0), np.zeros(0), sim_dt, compiled)
    if len(rows) == 1:
        near, normals, surfaces, depths, mu_s, mu_k = rows[0]
    else:
        near, normals, surfaces, depths, mu_s, mu_k = (np.concatenate(parts) for parts in zip(*rows))
    return _assemble(model, near, normals, surfaces, depths, mu_s, mu_k, sim_dt, compiled)


def _collider_rows(collider: collision.Collider, p: np.ndarray, margins: np.ndarray) -> list[tuple]:
    """The candidates of one collider: the contact vertices that could touch it during the frame,
    with the tangent plane at their closest point (exact signed distance, ``colliders``). Exact
    queries are made only for vertices a cheap lower bound (distance to the collider's box, or to
    the nearest triangle's enclosing ball) cannot rule out."""
    near = np.flatnonzero(collision.near(collider, p, float(margins.max(initial=0.0))))
    if near.shape[0] == 0:
        return []
    reach = margins[near] + collider.contact_reach
    q = p[near]
    lower = lower_bounds(collider, q)
    # a closed collider's inside is a contact at any depth: a zero lower bound keeps it
    maybe = np.flatnonzero(lower < reach)
    if maybe.shape[0] == 0:
        return []
    distance, normal = collision.signed_distance(collider, q[maybe])
    band = (distance if collider.closed else np.abs(distance)) < reach[maybe]
    if not band.any():
        return []
    keep = near[maybe[band]]
    distance, normal = distance[band], normal[band]
    # the plane moved out by the outer thickness: contact while n·(p − s) < 0
    surfaces = q[maybe[band]] - (distance - collider.thickness_outer)[:, None] * normal
    outside = distance >= 0.0
    if collider.closed:
        depths = np.full(keep.shape[0], np.inf)
    else:  # below an open surface only as deep as its inner thickness, unless it came from outside
        depths = np.where(outside, np.inf, collider.thickness_outer + collider.thickness_inner)
    count = keep.shape[0]
    return [(keep, normal, surfaces, depths, np.full(count, collider.static_friction),
             np.full(count, collider.kinetic_friction))]


def lower_bounds(collider: collision.Collider, points: np.ndarray) -> np.ndarray:
    """float64 [n] [m]: a lower bound of each point's distance to the collider's surface, cheap (the
    distance to its bounding box, and inside that to the nearest triangle's enclosing ball), so
    exact queries are made only for points it cannot rule out."""
    gap = maximum(maximum(collider.bounds_min - points, points - collider.bounds_max), 0.0)
    lower = sqrt(np.einsum("ij,ij->i", gap, gap))
    inside_box = lower == 0.0
    if inside_box.any():
        centre_distance, _ = collider.center_tree.query(points[inside_box], k=1)
        lower[inside_box] = maximum(centre_distance - collider.max_reach, 0.0)
    return lower


def _assemble(model: Model, near: np.ndarray, normals: np.ndarray, surfaces: np.ndarray,
              depths: np.ndarray, mu_s: np.ndarray, mu_k: np.ndarray, sim_dt: float,
              compiled: ModuleType | None) -> ContactPlan:
    """The ``ContactPlan`` of the candidate rows ``near`` (indices into the model's contacts);
    ``compiled`` (the kernel module) computes the same arrays in one pass."""
    ratio = max(CONTACT_STIFFNESS_RATIO * min(sim_dt / CONTACT_REFERENCE_STEP, 1.0) ** 2, CONTACT_MIN_RATIO)
    if compiled is not None:
        (idx, w, shares, stiffness, free_weights, free_shares, offsets, point_contacts,
         point_corners) = compiled.assemble_contacts(model.contact_indices, model.contact_weights,
                                                     model.inverse_masses, near.astype(np.int64, copy=False),
                                                     ratio, sim_dt)
    else:
        idx = np.ascontiguousarray(model.contact_indices[near], dtype=np.int32)
        w = np.ascontiguousarray(model.contact_weights[near], dtype=np.float64)
        inv = model.inverse_masses[idx]
        positive = np.maximum(w, 0.0)
        shares = positive / np.maximum(positive.sum(1, keepdims=True), TINY)
        free = inv > 0.0
        moving = (shares > 0.0) & free
        # the contact point's inertia against its force: 1/Σₖ shareₖ·wₖ/mₖ over the points it moves
        compliance = np.where(moving, shares * w * inv, 0.0).sum(1)
        # (a pinned contact point has no compliance: divide by 1 there, not by TINY, which overflows)
        safe = np.where(compliance > 0.0, compliance, 1.0)
        free_weights, free_shares = np.where(free, w, 0.0).sum(1), np.where(free, shares, 0.0).sum(1)
        stiffness = np.where((compliance > 0.0) & (free_shares >= CONTACT_FREE_SHARE),
                             ratio / (sim_dt * sim_dt * safe), 0.0)
        offsets, point_contacts, point_corners = point_incidence(idx, moving, model.particle_count)
    return ContactPlan(indices=idx, weights=w, shares=shares,
                       normals=np.ascontiguousarray(normals, dtype=np.float64),
                       surfaces=np.ascontiguousarray(surfaces, dtype=np.float64),
                       depths=np.ascontiguousarray(depths, dtype=np.float64),
                       stiffness=stiffness,
                       static_friction=np.ascontiguousarray(mu_s, dtype=np.float64),
                       kinetic_friction=np.ascontiguousarray(mu_k, dtype=np.float64),
                       point_offsets=offsets, point_contacts=point_contacts,
                       point_corners=point_corners, free_weights=free_weights, free_shares=free_shares)


def point_incidence(indices: np.ndarray, moving: np.ndarray,
                    particle_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For every control point, the candidates it moves in (``moving``: bool [count, 4], a free
    corner with a share of the force): (offsets int64 [particle_count + 1], candidate int32 [rows],
    corner int32 [rows]), grouped by point in candidate order (``kernel.assemble_contacts`` does
    the same, compiled)."""
    flat_contacts = np.repeat(np.arange(indices.shape[0], dtype=np.int32), 4)[moving.ravel()]
    flat_corners = np.tile(np.arange(4, dtype=np.int32), indices.shape[0])[moving.ravel()]
    flat_points = indices.ravel()[moving.ravel()]
    order = np.argsort(flat_points, kind="stable")
    offsets = np.zeros(particle_count + 1, dtype=np.int64)
    np.cumsum(np.bincount(flat_points, minlength=particle_count), out=offsets[1:])
    return offsets, flat_contacts[order], flat_corners[order]


# Passes of ``project_out`` (Jacobi, averaged per control point): enough to settle the few contacts
# a resting body has; more only matter inside a pile of them.
PROJECTION_PASSES = 4


def project_out(positions: np.ndarray, inverse_masses: np.ndarray, plan: ContactPlan,
                passes: int = PROJECTION_PASSES, compiled: ModuleType | None = None) -> np.ndarray:
    """Move the frame's penetrating contact points back onto their surfaces (positions only).

    The penalty contact rests at a penetration of the load over k_c: one vertex of a small ball
    carries the whole ball, and a fine cage gives that vertex's control points little mass (k_c
    follows their inertia), so a 1 cm ball sank 0.34 mm (0.9 mm at resolution 12). A position
    correction of what each frame shows, as PBD's contact projection (Müller et al. 2007, §3.5,
    ∂C/∂xₖ = wₖ·n), takes it out: Δxₖ = −C·sₖ·mₖ⁻¹ / Σⱼ wⱼ·sⱼ·mⱼ⁻¹ · n (s the shares), averaged
    where contacts share a control point. ``loop.step`` keeps it out of the dynamics
    (``State.shown_positions``), so it adds no bounce and no frame-rate dependence.

    Args:
        positions: float64 [particle_count, 3] [m], the frame's end positions (not modified).
        inverse_masses: float64 [particle_count] [1/kg]; kinematic points (0) never move.
        plan: the frame's ``ContactPlan``.
        passes: Jacobi passes.
        compiled: the kernel module, whose ``project_out`` gives the same positions faster.

    Returns:
        float64 [particle_count, 3] [m], the corrected positions (``positions`` itself when no
        contact penetrates).
    """
    if compiled is not None:
        x, moved = compiled.project_out(positions, inverse_masses, plan.indices, plan.weights, plan.shares,
                                        plan.free_shares, plan.normals, plan.surfaces, plan.depths, passes)
        return x if moved else positions
    if plan.indices.shape[0] == 0:
        return positions
    idx, w, shares = plan.indices, plan.weights, plan.shares

    def depth(rows: np.ndarray, x: np.ndarray) -> np.ndarray:
        p = np.einsum("ck,ckj->cj", w[rows], x[idx[rows]])
        return np.einsum("cj,cj->c", p - plan.surfaces[rows], plan.normals[rows])

    everyone = np.arange(idx.shape[0])
    c = depth(everyone, positions)
    # only the penetrating candidates take part (the passes move their control points outward,
    # which lifts the others sharing them, never sinks them on a plane)
    # (a contact point held almost wholly by pinned points counts as pinned: ``CONTACT_FREE_SHARE``)
    rows = everyone[(c < 0.0) & (c > -plan.depths) & (plan.free_shares >= CONTACT_FREE_SHARE)]
    inv = inverse_masses[idx[rows]]  # [a, 4]
    denominator = (w[rows] * shares[rows] * inv).sum(axis=1)
    keep = denominator > TINY
    rows, inv, denominator, c = rows[keep], inv[keep], denominator[keep], c[rows][keep]
    if rows.shape[0] == 0:
        return positions
    x = positions.copy()
    corners = idx[rows].ravel()
    moving = (shares[rows] * inv > 0.0).ravel()
    count = np.bincount(corners, weights=moving, minlength=x.shape[0])
    for _ in range(passes):
        scale = np.where((c < 0.0) & (c > -plan.depths[rows]), -c / denominator, 0.0)  # [a]
        if not scale.any():
            break
        moves = (shares[rows] * inv * scale[:, None])[:, :, None] * plan.normals[rows, None, :]
        total = np.zeros_like(x)
        for k in range(3):
            total[:, k] = np.bincount(corners, weights=moves[:, :, k].ravel(), minlength=x.shape[0])
        touched = count > 0
        x[touched] += total[touched] / count[touched, None]
        c = depth(rows, x)
    return x
