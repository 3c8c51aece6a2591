"""The NumPy path of the jiggle step: every bone of one depth level of all chains at once, levels
root to tip, so each child starts from its parent's frame simulated in the same step.

The compiled path (``kernel.py``) runs the same formulas bone by bone; both give the same tails to
rounding (tests/test_engine_jiggle.py). Mesh colliders (``colliders.Collider``) are handled here
only. The formulas, per step h and bone (the seed's spring-damper, semi-implicit Euler):

    target tail  x_t = head + R_anim[:, 1] · length,  v_rig = (M x − x) / h  (the rig object's motion)
    a = −k (x − x_t) − c (v − v_rig) + g · gravity_scale,   v ← v + a h,   |v − v_rig| ≤ max speed
    x ← x + v h, then projected: length kept (unless stretch), the cone around x_t − head,
    colliders; v ← (x − x_before) / h (the projections remove the velocity they undo, as PBD).
"""

from __future__ import annotations

import math

import numpy as np

from .. import colliders as collision
from ..colliders import clipped
from .model import COLLISION_PASSES, ChainModel, ChainState, FramePose, quaternion_to_matrix

# Below this length [m] a direction is undefined (a zero-length offset).
TINY = 1e-12
# Collision surfaces are met this much outside (relative), so rounding never leaves a tail inside.
SURFACE_MARGIN = 1e-9


def _norm(v: np.ndarray) -> np.ndarray:
    return np.sqrt(np.einsum("...i,...i->...", v, v))


def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.einsum("...i,...i->...", a, b)


def _any_perpendicular(u: np.ndarray) -> np.ndarray:
    """A unit vector perpendicular to each unit vector of u [n, 3]."""
    helper = np.where((np.abs(u[:, 0]) < 0.9)[:, None], np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0]))
    p = np.cross(u, helper)
    return p / _norm(p)[:, None]


def _turn(u: np.ndarray, towards: np.ndarray, cos_angle: np.ndarray, length: np.ndarray) -> np.ndarray:
    """length · (cos θ · u + sin θ · w): the direction at angle θ from the unit vectors u, in the
    plane of u and ``towards`` (on the side of ``towards``; any side when they are parallel)."""
    perp = towards - _dot(towards, u)[:, None] * u
    size = _norm(perp)
    perp = np.where((size > TINY)[:, None], perp / np.maximum(size, TINY)[:, None], _any_perpendicular(u))
    sin_angle = np.sqrt(np.maximum(1.0 - cos_angle * cos_angle, 0.0))
    return length[:, None] * (cos_angle[:, None] * u + sin_angle[:, None] * perp)


def _push_out(d: np.ndarray, head: np.ndarray, core: np.ndarray, reach: np.ndarray,
              stretch: np.ndarray) -> np.ndarray:
    """Move tails head + d out of the balls (core, reach): a stretching bone radially, a bone of
    kept length by turning it about its head to the ball's surface."""
    tail = head + d
    off = tail - core
    dist = _norm(off)
    inside = dist < reach
    if not np.any(inside):
        return d
    r = reach * (1.0 + SURFACE_MARGIN)
    radial = np.where((dist > TINY)[:, None], off / np.maximum(dist, TINY)[:, None], _any_perpendicular(
        np.tile([0.0, 0.0, 1.0], (len(d), 1))))
    pushed = core + radial * r[:, None] - head
    length = _norm(d)
    w = core - head
    far = _norm(w)
    with np.errstate(divide="ignore", invalid="ignore"):
        cos_min = (length * length + far * far - r * r) / (2.0 * length * far)
    turnable = (far > TINY) & (length > TINY) & (cos_min >= -1.0) & (cos_min < 1.0)
    wu = w / np.maximum(far, TINY)[:, None]
    du = d / np.maximum(length, TINY)[:, None]
    turned = _turn(wu, du, np.clip(cos_min, -1.0, 1.0), length)
    keep = np.where((turnable & ~stretch)[:, None], turned, pushed)
    return np.where(inside[:, None], keep, d)


def _closest_on_segments(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ab = b - a
    denom = np.maximum(_dot(ab, ab), TINY)
    s = np.clip(_dot(p - a, ab) / denom, 0.0, 1.0)
    return a + s[:, None] * ab


def constrain(model: ChainModel, idx: np.ndarray, head: np.ndarray, axis: np.ndarray, d: np.ndarray,
              spheres: np.ndarray, capsules: np.ndarray, meshes: tuple) -> np.ndarray:
    """Project the tail offsets d = tail − head [n, 3] of bones ``idx``: their length (unless
    stretch) to |axis|, into the cone of ``angle_limit`` around axis = target − head, out of the
    colliders (spheres [s, 4], capsules [c, 7], mesh colliders: ``colliders.Collider`` or
    ``colliders.clipped.ClippedSurface``) by each bone's radius [m]."""
    stretch = model.stretch[idx]
    rest = _norm(axis)
    au = axis / rest[:, None]
    size = _norm(d)
    d = np.where((size > TINY)[:, None], d, axis)
    size = np.where(size > TINY, size, rest)
    d = np.where(stretch[:, None], d, d * (rest / size)[:, None])
    limit = model.angle_limit[idx]
    if np.any(limit < math.pi):
        size = _norm(d)
        cos_limit = np.cos(limit)
        over = (_dot(d, au) < cos_limit * size) & (limit < math.pi)
        if np.any(over):
            d = np.where(over[:, None], _turn(au, d, cos_limit, size), d)
    radius = model.radius[idx]
    if len(spheres) or len(capsules):
        for _ in range(COLLISION_PASSES):
            for sphere in spheres:
                d = _push_out(d, head, np.broadcast_to(sphere[:3], d.shape), sphere[3] + radius, stretch)
            for capsule in capsules:
                core = _closest_on_segments(head + d, np.broadcast_to(capsule[:3], d.shape),
                                            np.broadcast_to(capsule[3:6], d.shape))
                d = _push_out(d, head, core, capsule[6] + radius, stretch)
    for mesh in meshes:
        d = _push_out_of_mesh(mesh, head, d, radius, rest, stretch)
    return d


def _push_out_of_mesh(found: collision.Collider | clipped.ClippedSurface, head: np.ndarray, d: np.ndarray,
                      radius: np.ndarray, rest: np.ndarray, stretch: np.ndarray) -> np.ndarray:
    """Push tails out of a mesh collider (or a soft body's surface, ``clipped``: the collider of
    its triangles near the tails) along its surface normal to radius + Thickness Outer, then back
    to the bone's length (twice: the length step can move a tail back in a little)."""
    for _ in range(2):
        tail = head + d
        if isinstance(found, clipped.ClippedSurface):
            built = clipped.around(found, tail, float(radius.max(initial=0.0)) + found.thickness_outer)
            if built is None:
                return d
            mesh = built
        else:
            mesh = found
        near = collision.near(mesh, tail, float(radius.max(initial=0.0)))
        if not np.any(near):
            return d
        dist, normal = collision.signed_distance(mesh, tail[near])
        depth = radius[near] + mesh.thickness_outer - dist
        hit = np.zeros(len(d), dtype=bool)
        hit[near] = depth > 0.0
        if not np.any(hit):
            return d
        moved = tail.copy()
        moved[near] += np.maximum(depth, 0.0)[:, None] * normal
        d = moved - head
        size = _norm(d)
        d = np.where((stretch | ~hit)[:, None], d, d * (rest / np.maximum(size, TINY))[:, None])
    return d


def swing_from_y(b: np.ndarray) -> np.ndarray:
    """The shortest rotation taking the y axis to each unit vector b [n, 3]: float64 [n, 3, 3]
    (Rodrigues' formula for the axis y × b; b = −y gives the half turn about x)."""
    bx, c, bz = b[:, 0], b[:, 1], b[:, 2]
    ok = c > -1.0 + 1e-12
    f = np.where(ok, 1.0 / np.where(ok, 1.0 + c, 1.0), 0.0)
    r = np.empty((len(b), 3, 3))
    r[:, 0, 0] = 1.0 - bx * bx * f
    r[:, 0, 1] = bx
    r[:, 0, 2] = -bx * bz * f
    r[:, 1, 0] = -bx
    r[:, 1, 1] = c
    r[:, 1, 2] = -bz
    r[:, 2, 0] = -bx * bz * f
    r[:, 2, 1] = bz
    r[:, 2, 2] = 1.0 - bz * bz * f
    r[~ok] = np.diag([1.0, -1.0, -1.0])
    return r


def aim(r_pre: np.ndarray, d: np.ndarray, rest: np.ndarray, stretch: np.ndarray,
        influence: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Each bone's jiggle in its own frame: the swing taking its y axis to the tail offset d
    (world, [n, 3]) and, for stretching bones, the scale |d|/rest along y; ``influence`` < 1 turns
    and scales that share of the way.

    Returns:
        (turn float64 [n, 3, 3], a rotation; stretch float64 [n]): the bone's final frame is
        pre · turn · diag(1, stretch, 1).
    """
    local = np.einsum("nji,nj->ni", r_pre, d)  # R_preᵀ d: the direction in the bone's frame
    size = _norm(local)
    local = np.where((size > TINY)[:, None], local / np.maximum(size, TINY)[:, None], np.array([0.0, 1.0, 0.0]))
    if influence < 1.0:
        angle = np.arccos(np.clip(local[:, 1], -1.0, 1.0)) * influence
        side = np.stack([local[:, 0], np.zeros(len(local)), local[:, 2]], axis=1)
        side_size = _norm(side)
        side = np.where((side_size > TINY)[:, None], side / np.maximum(side_size, TINY)[:, None], 0.0)
        local = np.cos(angle)[:, None] * np.array([0.0, 1.0, 0.0]) + np.sin(angle)[:, None] * side
    return swing_from_y(local), np.where(stretch, 1.0 + influence * (_norm(d) / rest - 1.0), 1.0)


def interpolated_frames(pose0: FramePose, pose1: FramePose, a: float) -> tuple[np.ndarray, np.ndarray]:
    """Each bone's local frame a of the way from pose0 to pose1 (quaternions normalized-lerped,
    scale and translation lerped): R float64 [n, 3, 3], t float64 [n, 3]."""
    q0, q1 = pose0.rotation, pose1.rotation
    q1 = np.where((_dot(q0, q1) < 0.0)[:, None], -q1, q1)
    q = (1.0 - a) * q0 + a * q1
    scale = (1.0 - a) * pose0.scale + a * pose1.scale
    return (quaternion_to_matrix(q) * scale[:, None, None],
            (1.0 - a) * pose0.translation + a * pose1.translation)


def pre_frames(model: ChainModel, idx: np.ndarray, r_local: np.ndarray, t_local: np.ndarray,
               r_final: np.ndarray, t_final: np.ndarray, s_final: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pre frames of bones ``idx``: their local frames carried by their parents' final frames
    (roots: the local frame is the world frame). A stretched parent (s_final ≠ 1 along its y)
    moves its children's heads with its tail but does not pass the stretch on to their frames."""
    p = model.parent[idx]
    r, t = r_local[idx], t_local[idx]
    if np.all(p < 0):
        return r, t
    root = (p < 0)
    rp, tp = r_final[p], t_final[p]
    scaled = t * np.stack([np.ones(len(p)), s_final[p], np.ones(len(p))], axis=1)
    r_pre = np.where(root[:, None, None], r, np.einsum("nij,njk->nik", rp, r))
    t_pre = np.where(root[:, None], t, np.einsum("nij,nj->ni", rp, scaled) + tp)
    return r_pre, t_pre


def animated_frames(model: ChainModel, idx: np.ndarray, r_local: np.ndarray, r_anim: np.ndarray) -> np.ndarray:
    """The animated (un-jiggled) world orientation of bones ``idx``: their local frames carried by
    their parents' animated orientations. A bone's target is its head (on its parent's *simulated*
    tail) plus its animated direction, as KawaiiPhysics pulls a bone to its parent's simulated
    location plus the animated offset: the parent's swing moves the child's head but does not
    turn its target, so a chain of bones tuned alike does not drive each other at resonance."""
    p = model.parent[idx]
    r = r_local[idx]
    if np.all(p < 0):
        return r
    return np.where((p < 0)[:, None, None], r, np.einsum("nij,njk->nik", r_anim[np.maximum(p, 0)], r))


def _lerp_colliders(c0: np.ndarray, c1: np.ndarray, a: float) -> np.ndarray:
    return (1.0 - a) * c0 + a * c1 if c0.shape == c1.shape else c1


def substeps(model: ChainModel, state: ChainState, pose0: FramePose, pose1: FramePose, h: float,
             count: int, gravity: np.ndarray, motion: np.ndarray) -> ChainState:
    """Advance ``count`` steps of h [s] from pose0's time to pose1's (a new state).

    Args:
        motion: float64 [count, 3, 4], the rig object's motion over each step (``rig_motion``).
    """
    x, v = state.positions.copy(), state.velocities.copy()
    n = model.bone_count
    r_final, t_final, s_final = np.zeros((n, 3, 3)), np.zeros((n, 3)), np.ones(n)
    r_anim = np.zeros((n, 3, 3))
    k, c = model.stiffness[:, None], model.damping[:, None]
    pull = gravity[None, :] * model.gravity_scale[:, None]
    for step in range(count):
        a = (step + 1) / count
        r_local, t_local = interpolated_frames(pose0, pose1, a)
        spheres = _lerp_colliders(pose0.spheres, pose1.spheres, a)
        capsules = _lerp_colliders(pose0.capsules, pose1.capsules, a)
        m = motion[step]
        for idx in model.levels:
            r_pre, head = pre_frames(model, idx, r_local, t_local, r_final, t_final, s_final)
            r_anim[idx] = animated_frames(model, idx, r_local, r_anim)
            axis = r_anim[idx][:, :, 1] * model.length[idx, None]
            target = head + axis
            xi, vi = x[idx], v[idx]
            rig_v = (xi @ m[:, :3].T + m[:, 3] - xi) / h
            vi = vi + h * (-k[idx] * (xi - target) - c[idx] * (vi - rig_v) + pull[idx])
            rel = vi - rig_v
            speed = _norm(rel)
            cap = model.max_speed[idx]
            vi = np.where((speed > cap)[:, None], rig_v + rel * (cap / np.maximum(speed, TINY))[:, None], vi)
            d = constrain(model, idx, head, axis, xi + h * vi - head, spheres, capsules, pose1.meshes)
            new = head + d
            v[idx] = (new - xi) / h
            x[idx] = new
            turn, s_final[idx] = aim(r_pre, d, _norm(axis), model.stretch[idx])
            r_final[idx] = np.einsum("nij,njk->nik", r_pre, turn)
            t_final[idx] = head
    return ChainState(x, v)


def shown(model: ChainModel, state: ChainState, pose: FramePose,
          influence: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """What a frame shows: every bone aimed at its simulated tail, parents first.

    The influence (the seed's alpha) blends each bone's own jiggle, as Blender blends the local
    rotations of two poses: with influence a every bone turns by a times the turn it has in the
    fully jiggled chain (and stretches by a of its stretch), from its parent as shown. The state
    does not depend on it, so animating it never restarts the simulation.

    Args:
        influence: the share of the jiggle shown, 0..1 (default ``pose.influence``).

    Returns:
        (jiggle, heads, tails, targets): jiggle float64 [n, 4, 4], each bone's extra transform in
        its own frame (final = pre · jiggle: what the bone's constraint applies); heads, tails and
        the target tails (the head as shown plus the bone's animated direction: the axis of its
        cone) float64 [n, 3] [m], world space.
    """
    alpha = float(np.clip(pose.influence if influence is None else influence, 0.0, 1.0))
    n = model.bone_count
    r_local, t_local = interpolated_frames(pose, pose, 1.0)
    full_r, full_t, full_s = np.zeros((n, 3, 3)), np.zeros((n, 3)), np.ones(n)
    shown_r, shown_t, shown_s = np.zeros((n, 3, 3)), np.zeros((n, 3)), np.ones(n)
    r_anim = np.zeros((n, 3, 3))
    jiggle = np.tile(np.eye(4), (n, 1, 1))
    heads, tails, targets = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    for idx in model.levels:
        r_pre, head = pre_frames(model, idx, r_local, t_local, full_r, full_t, full_s)
        rest = _norm(r_pre[:, :, 1]) * model.length[idx]
        d = state.positions[idx] - head
        stretch = model.stretch[idx]
        turn, full_s[idx] = aim(r_pre, d, rest, stretch)
        full_r[idx] = np.einsum("nij,njk->nik", r_pre, turn)
        full_t[idx] = head
        turn, shown_s[idx] = aim(r_pre, d, rest, stretch, alpha)
        r_show, head_show = pre_frames(model, idx, r_local, t_local, shown_r, shown_t, shown_s)
        shown_r[idx] = np.einsum("nij,njk->nik", r_show, turn)
        shown_t[idx] = head_show
        jiggle[idx, :3, :3] = _inherited_stretch_undone(model, idx, r_local, shown_s) @ turn
        jiggle[idx, :3, 1] *= shown_s[idx, None]
        heads[idx] = head_show
        tails[idx] = head_show + shown_r[idx][:, :, 1] * (model.length[idx] * shown_s[idx])[:, None]
        r_anim[idx] = animated_frames(model, idx, r_local, r_anim)
        targets[idx] = head_show + r_anim[idx][:, :, 1] * model.length[idx, None]
    return jiggle, heads, tails, targets


def _inherited_stretch_undone(model: ChainModel, idx: np.ndarray, r_local: np.ndarray,
                              s_final: np.ndarray) -> np.ndarray:
    """Blender passes a parent's scale on to its children (Inherit Scale: Full): the 3×3 that
    undoes a stretched parent's diag(1, s, 1) in each child's own frame, R_L⁻¹ · diag(1, 1/s, 1) · R_L
    (the identity for roots and children of bones that do not stretch)."""
    p = model.parent[idx]
    scale = np.where(p < 0, 1.0, s_final[np.maximum(p, 0)])
    out = np.tile(np.eye(3), (len(idx), 1, 1))
    moved = np.flatnonzero(scale != 1.0)
    if len(moved):
        r = r_local[idx[moved]]
        undo = np.tile(np.eye(3), (len(moved), 1, 1))
        undo[:, 1, 1] = 1.0 / scale[moved]
        out[moved] = np.linalg.inv(r) @ undo @ r
    return out
