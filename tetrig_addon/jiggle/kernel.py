"""The compiled jiggle step: ``reference.substeps`` bone by bone (parents first) in Numba.

The formulas and their order are those of ``reference.py`` (see there), written out for one bone
at a time so that Numba compiles them to plain loops; sphere and capsule colliders only (mesh
colliders take the NumPy path). Imported only by ``backend``, which keeps Numba optional.
"""

from __future__ import annotations

import math

import numba
import numpy as np

TINY = 1e-12
SURFACE_MARGIN = 1e-9
COLLISION_PASSES = 3


@numba.njit(cache=True)
def _any_perpendicular(ux: float, uy: float, uz: float) -> tuple[float, float, float]:
    if abs(ux) < 0.9:
        hx, hy, hz = 1.0, 0.0, 0.0
    else:
        hx, hy, hz = 0.0, 1.0, 0.0
    px, py, pz = uy * hz - uz * hy, uz * hx - ux * hz, ux * hy - uy * hx
    n = math.sqrt(px * px + py * py + pz * pz)
    return px / n, py / n, pz / n


@numba.njit(cache=True)
def _turn(u: np.ndarray, towards: np.ndarray, cos_angle: float, length: float, out: np.ndarray) -> None:
    dot = towards[0] * u[0] + towards[1] * u[1] + towards[2] * u[2]
    px, py, pz = towards[0] - dot * u[0], towards[1] - dot * u[1], towards[2] - dot * u[2]
    size = math.sqrt(px * px + py * py + pz * pz)
    if size > TINY:
        px, py, pz = px / size, py / size, pz / size
    else:
        px, py, pz = _any_perpendicular(u[0], u[1], u[2])
    sin_angle = math.sqrt(max(1.0 - cos_angle * cos_angle, 0.0))
    out[0] = length * (cos_angle * u[0] + sin_angle * px)
    out[1] = length * (cos_angle * u[1] + sin_angle * py)
    out[2] = length * (cos_angle * u[2] + sin_angle * pz)


@numba.njit(cache=True)
def _push_out(d: np.ndarray, head: np.ndarray, cx: float, cy: float, cz: float, reach: float,
              stretch: bool, scratch: np.ndarray, u: np.ndarray, towards: np.ndarray) -> None:
    ox, oy, oz = head[0] + d[0] - cx, head[1] + d[1] - cy, head[2] + d[2] - cz
    dist = math.sqrt(ox * ox + oy * oy + oz * oz)
    if not dist < reach:
        return
    r = reach * (1.0 + SURFACE_MARGIN)
    if dist > TINY:
        rx, ry, rz = ox / dist, oy / dist, oz / dist
    else:
        rx, ry, rz = _any_perpendicular(0.0, 0.0, 1.0)
    length = math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2)
    wx, wy, wz = cx - head[0], cy - head[1], cz - head[2]
    far = math.sqrt(wx * wx + wy * wy + wz * wz)
    turnable = False
    cos_min = 0.0
    if far > TINY and length > TINY:
        cos_min = (length * length + far * far - r * r) / (2.0 * length * far)
        turnable = -1.0 <= cos_min < 1.0
    if turnable and not stretch:
        u[0], u[1], u[2] = wx / far, wy / far, wz / far
        towards[0], towards[1], towards[2] = d[0] / length, d[1] / length, d[2] / length
        _turn(u, towards, min(max(cos_min, -1.0), 1.0), length, scratch)
        d[0], d[1], d[2] = scratch[0], scratch[1], scratch[2]
    else:
        d[0] = cx + rx * r - head[0]
        d[1] = cy + ry * r - head[1]
        d[2] = cz + rz * r - head[2]


@numba.njit(cache=True)
def _constrain(axis: np.ndarray, head: np.ndarray, d: np.ndarray, stretch: bool, limit: float,
               radius: float, spheres: np.ndarray, capsules: np.ndarray, scratch: np.ndarray,
               u: np.ndarray, towards: np.ndarray) -> None:
    rest = math.sqrt(axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2)
    size = math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2)
    if not size > TINY:
        d[0], d[1], d[2] = axis[0], axis[1], axis[2]
        size = rest
    if not stretch:
        f = rest / size
        d[0], d[1], d[2] = d[0] * f, d[1] * f, d[2] * f
    if limit < math.pi:
        size = math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2)
        cos_limit = math.cos(limit)
        u[0], u[1], u[2] = axis[0] / rest, axis[1] / rest, axis[2] / rest
        if d[0] * u[0] + d[1] * u[1] + d[2] * u[2] < cos_limit * size:
            _turn(u, d, cos_limit, size, scratch)
            d[0], d[1], d[2] = scratch[0], scratch[1], scratch[2]
    if spheres.shape[0] or capsules.shape[0]:
        for _ in range(COLLISION_PASSES):
            for s in range(spheres.shape[0]):
                _push_out(d, head, spheres[s, 0], spheres[s, 1], spheres[s, 2], spheres[s, 3] + radius,
                          stretch, scratch, u, towards)
            for c in range(capsules.shape[0]):
                ax, ay, az = capsules[c, 0], capsules[c, 1], capsules[c, 2]
                bx, by, bz = capsules[c, 3] - ax, capsules[c, 4] - ay, capsules[c, 5] - az
                px, py, pz = head[0] + d[0], head[1] + d[1], head[2] + d[2]
                denom = max(bx * bx + by * by + bz * bz, TINY)
                t = ((px - ax) * bx + (py - ay) * by + (pz - az) * bz) / denom
                t = min(max(t, 0.0), 1.0)
                _push_out(d, head, ax + t * bx, ay + t * by, az + t * bz, capsules[c, 6] + radius,
                          stretch, scratch, u, towards)


@numba.njit(cache=True)
def _aim(r_pre: np.ndarray, d: np.ndarray, rest: float, stretch: bool, out: np.ndarray) -> float:
    """out = the bone's turn (3×3) for the tail offset d (influence 1); returns its stretch."""
    bx, c, bz = _aim_local(r_pre, d, 1.0)
    _swing(bx, c, bz, out)
    if stretch:
        return math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2) / rest
    return 1.0


@numba.njit(cache=True)
def _local_frame(q0: np.ndarray, q1: np.ndarray, s0: float, s1: float, a: float, out: np.ndarray) -> None:
    w = (1.0 - a) * q0[0] + a * q1[0]
    x = (1.0 - a) * q0[1] + a * q1[1]
    y = (1.0 - a) * q0[2] + a * q1[2]
    z = (1.0 - a) * q0[3] + a * q1[3]
    n = math.sqrt(w * w + x * x + y * y + z * z)
    w, x, y, z = w / n, x / n, y / n, z / n
    s = (1.0 - a) * s0 + a * s1
    out[0, 0], out[0, 1], out[0, 2] = s * (1 - 2 * (y * y + z * z)), s * 2 * (x * y - w * z), s * 2 * (x * z + w * y)
    out[1, 0], out[1, 1], out[1, 2] = s * 2 * (x * y + w * z), s * (1 - 2 * (x * x + z * z)), s * 2 * (y * z - w * x)
    out[2, 0], out[2, 1], out[2, 2] = s * 2 * (x * z - w * y), s * 2 * (y * z + w * x), s * (1 - 2 * (x * x + y * y))


@numba.njit(cache=True)
def _compose(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    for i in range(3):
        for j in range(3):
            out[i, j] = a[i, 0] * b[0, j] + a[i, 1] * b[1, j] + a[i, 2] * b[2, j]


@numba.njit(cache=True)
def substeps(parent, length, stiffness, damping, gravity_scale, max_speed, angle_limit, radius, stretch,
             q0, q1, s0, s1, t0, t1, spheres0, spheres1, capsules0, capsules1, gravity, motion, h, count,
             x, v):  # pragma: no cover -- compiled; checked against the NumPy path
    """Advance ``count`` steps of h [s] in place on x, v (float64 [n, 3]); see ``reference``."""
    n = parent.shape[0]
    r_final = np.zeros((n, 3, 3))
    t_final = np.zeros((n, 3))
    s_final = np.ones(n)
    r_anim = np.zeros((n, 3, 3))
    r_local = np.empty((3, 3))
    r_pre = np.empty((3, 3))
    jig = np.empty((3, 3))
    scratch = np.empty(3)
    u = np.empty(3)
    towards = np.empty(3)
    head = np.empty(3)
    axis = np.empty(3)
    d = np.empty(3)
    rel = np.empty(3)
    spheres = np.empty_like(spheres1)
    capsules = np.empty_like(capsules1)
    for step in range(count):
        a = (step + 1) / count
        for i in range(spheres.shape[0]):
            for j in range(4):
                spheres[i, j] = (1.0 - a) * spheres0[i, j] + a * spheres1[i, j]
        for i in range(capsules.shape[0]):
            for j in range(7):
                capsules[i, j] = (1.0 - a) * capsules0[i, j] + a * capsules1[i, j]
        for b in range(n):
            _local_frame(q0[b], q1[b], s0[b], s1[b], a, r_local)
            p = parent[b]
            if p < 0:
                for i in range(3):
                    head[i] = (1.0 - a) * t0[b, i] + a * t1[b, i]
                    for j in range(3):
                        r_pre[i, j] = r_local[i, j]
                        r_anim[b, i, j] = r_local[i, j]
            else:
                _compose(r_final[p], r_local, r_pre)
                _compose(r_anim[p], r_local, r_anim[b])
                for i in range(3):
                    head[i] = t_final[p, i]
                    for j in range(3):
                        lt = (1.0 - a) * t0[b, j] + a * t1[b, j]
                        head[i] += r_final[p, i, j] * (lt * s_final[p] if j == 1 else lt)
            k, c, cap = stiffness[b], damping[b], max_speed[b]
            speed2 = 0.0
            for i in range(3):
                rig_v = (motion[step, i, 0] * x[b, 0] + motion[step, i, 1] * x[b, 1]
                         + motion[step, i, 2] * x[b, 2] + motion[step, i, 3] - x[b, i]) / h
                axis[i] = r_anim[b, i, 1] * length[b]
                target = head[i] + axis[i]
                vi = v[b, i] + h * (-k * (x[b, i] - target) - c * (v[b, i] - rig_v)
                                    + gravity[i] * gravity_scale[b])
                u[i] = rig_v  # the rig's velocity here, for the speed cap
                rel[i] = vi - rig_v
                speed2 += rel[i] * rel[i]
            speed = math.sqrt(speed2)
            f = max_speed[b] / max(speed, TINY) if speed > cap else 1.0
            for i in range(3):
                d[i] = x[b, i] + h * (u[i] + rel[i] * f) - head[i]
            _constrain(axis, head, d, stretch[b] != 0, angle_limit[b], radius[b], spheres, capsules,
                       scratch, u, towards)
            for i in range(3):
                new = head[i] + d[i]
                v[b, i] = (new - x[b, i]) / h
                x[b, i] = new
            s_final[b] = _aim(r_pre, d, math.sqrt(axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2), stretch[b] != 0, jig)
            _compose(r_pre, jig, r_final[b])
            for i in range(3):
                t_final[b, i] = head[i]


def warm_up() -> None:
    """Compile (or load from the cache) by stepping a two-bone chain once, with the argument types
    of ``backend.substeps`` (the model's arrays are read-only, a type of their own to Numba)."""
    n = 2

    def frozen(a: np.ndarray) -> np.ndarray:
        a.setflags(write=False)
        return a

    q = np.tile(np.array([1.0, 0.0, 0.0, 0.0]), (n, 1))
    pos = np.zeros((n, 3))
    model = [frozen(np.array([-1, 0], dtype=np.int64))] + [frozen(np.ones(n)) for _ in range(7)]
    substeps(*model, np.zeros(n, dtype=np.uint8), q, q.copy(), np.ones(n), np.ones(n), pos, pos.copy(),
             np.zeros((1, 4)), np.zeros((1, 4)), np.zeros((1, 7)), np.zeros((1, 7)), np.zeros(3),
             np.zeros((1, 3, 4)), 0.01, 1, pos.copy(), pos.copy())
    shown(model[0], model[1], np.zeros(n, dtype=np.uint8), q, np.ones(n), pos, pos, 0.5, np.zeros((n, 3, 3)),
          pos.copy(), pos.copy(), pos.copy())


@numba.njit(cache=True)
def _aim_local(r_pre: np.ndarray, d: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """The direction the bone turns its y axis to, in its own frame, ``alpha`` of the way."""
    lx = r_pre[0, 0] * d[0] + r_pre[1, 0] * d[1] + r_pre[2, 0] * d[2]
    ly = r_pre[0, 1] * d[0] + r_pre[1, 1] * d[1] + r_pre[2, 1] * d[2]
    lz = r_pre[0, 2] * d[0] + r_pre[1, 2] * d[1] + r_pre[2, 2] * d[2]
    n = math.sqrt(lx * lx + ly * ly + lz * lz)
    if n > TINY:
        lx, ly, lz = lx / n, ly / n, lz / n
    else:
        lx, ly, lz = 0.0, 1.0, 0.0
    if alpha < 1.0:
        angle = math.acos(min(max(ly, -1.0), 1.0)) * alpha
        side = math.sqrt(lx * lx + lz * lz)
        sx, sz = (lx / side, lz / side) if side > TINY else (0.0, 0.0)
        lx, ly, lz = math.sin(angle) * sx, math.cos(angle), math.sin(angle) * sz
    return lx, ly, lz


@numba.njit(cache=True)
def _swing(bx: float, c: float, bz: float, out: np.ndarray) -> None:
    if c > -1.0 + 1e-12:
        f = 1.0 / (1.0 + c)
        out[0, 0], out[0, 1], out[0, 2] = 1.0 - bx * bx * f, bx, -bx * bz * f
        out[1, 0], out[1, 1], out[1, 2] = -bx, c, -bz
        out[2, 0], out[2, 1], out[2, 2] = -bx * bz * f, bz, 1.0 - bz * bz * f
    else:
        out[:, :] = 0.0
        out[0, 0], out[1, 1], out[2, 2] = 1.0, -1.0, -1.0


@numba.njit(cache=True)
def shown(parent, length, stretch, q, s, t, positions, alpha,
          jiggle, heads, tails, targets):  # pragma: no cover -- compiled; checked against the NumPy path
    """``reference.shown`` bone by bone, into jiggle [n, 3, 3], heads, tails, targets [n, 3]."""
    n = parent.shape[0]
    full_r = np.zeros((n, 3, 3))
    full_t = np.zeros((n, 3))
    full_s = np.ones(n)
    shown_r = np.zeros((n, 3, 3))
    shown_t = np.zeros((n, 3))
    shown_s = np.ones(n)
    r_anim = np.zeros((n, 3, 3))
    r_local = np.empty((3, 3))
    r_pre = np.empty((3, 3))
    r_show = np.empty((3, 3))
    turn = np.empty((3, 3))
    undo = np.empty((3, 3))
    tmp = np.empty((3, 3))
    head = np.empty(3)
    head_show = np.empty(3)
    d = np.empty(3)
    for b in range(n):
        _local_frame(q[b], q[b], s[b], s[b], 1.0, r_local)
        p = parent[b]
        for frame in range(2):  # 0: the fully jiggled chain, 1: the chain as shown
            rr = full_r if frame == 0 else shown_r
            tt = full_t if frame == 0 else shown_t
            ss = full_s if frame == 0 else shown_s
            out_r = r_pre if frame == 0 else r_show
            out_h = head if frame == 0 else head_show
            if p < 0:
                out_r[:, :] = r_local
                for i in range(3):
                    out_h[i] = t[b, i]
            else:
                _compose(rr[p], r_local, out_r)
                for i in range(3):
                    out_h[i] = tt[p, i]
                    for j in range(3):
                        out_h[i] += rr[p, i, j] * (t[b, j] * ss[p] if j == 1 else t[b, j])
        if p < 0:
            r_anim[b] = r_local
        else:
            _compose(r_anim[p], r_local, r_anim[b])
        rest = math.sqrt(r_pre[0, 1] ** 2 + r_pre[1, 1] ** 2 + r_pre[2, 1] ** 2) * length[b]
        for i in range(3):
            d[i] = positions[b, i] - head[i]
        size = math.sqrt(d[0] ** 2 + d[1] ** 2 + d[2] ** 2)
        bx, c, bz = _aim_local(r_pre, d, 1.0)
        _swing(bx, c, bz, turn)
        _compose(r_pre, turn, full_r[b])
        full_t[b] = head
        full_s[b] = size / rest if stretch[b] else 1.0
        bx, c, bz = _aim_local(r_pre, d, alpha)
        _swing(bx, c, bz, turn)
        shown_s[b] = 1.0 + alpha * (size / rest - 1.0) if stretch[b] else 1.0
        _compose(r_show, turn, shown_r[b])
        shown_t[b] = head_show
        if p >= 0 and shown_s[p] != 1.0:
            undo[:, :] = 0.0
            undo[0, 0], undo[1, 1], undo[2, 2] = 1.0, 1.0 / shown_s[p], 1.0
            _compose(undo, r_local, tmp)
            _compose(np.linalg.inv(r_local), tmp, undo)
            _compose(undo, turn, jiggle[b])
        else:
            jiggle[b] = turn
        for i in range(3):
            jiggle[b, i, 1] *= shown_s[b]
            heads[b, i] = head_show[i]
            tails[b, i] = head_show[i] + shown_r[b, i, 1] * length[b] * shown_s[b]
            targets[b, i] = head_show[i] + r_anim[b, i, 1] * length[b]
