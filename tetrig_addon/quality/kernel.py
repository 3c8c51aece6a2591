"""The quality pass (``improve``) compiled with Numba: one call per frame, no NumPy temporaries.

The same arithmetic as the NumPy reference in ``improve``, written edge by edge and vertex by
vertex. The clamp walks the edges inside a block block by block (``plan``: blocks share no
vertex, so this equals the reference's colour-by-colour order), in the block's cache, and skips
a block while none of its vertices moved since a sweep found all its edges within their limits
(the seed's dirty flags: the skipped edges would be found within their limits again, so the sweeps
and violations counted are the reference's); the edges between blocks follow, colour by colour.
The smoothing sums each vertex's neighbours in the order of the reference's sparse product. A
test compares the two. Importing this module imports Numba; ``backend`` does that lazily.
Machine code is cached on disk (``cache=True``, under ``NUMBA_CACHE_DIR``); ``fastmath`` stays off.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .plan import QualityPlan
from .settings import QualitySettings


@njit
def _move(x, a, b, d0, d1, d2, squared, rest, mobility, lo, hi):
    """Bring edge (a, b), outside its limits and not collapsed, to the nearer limit."""
    length = math.sqrt(squared)
    target = min(max(length / rest, lo), hi) * rest
    corr = (length - target) / length
    ma, mb = mobility[a], mobility[b]
    total = ma + mb
    sa, sb = corr * (ma / total), corr * (mb / total)
    x[a, 0] += d0 * sa
    x[a, 1] += d1 * sa
    x[a, 2] += d2 * sa
    x[b, 0] -= d0 * sb
    x[b, 1] -= d1 * sb
    x[b, 2] -= d2 * sb


@njit(cache=True)
def _constrain(x, ends, rest_lengths, segments, mobility, block_size, lo, hi, lo_tol, hi_tol, iterations):
    """Clamp sweeps on x in place; returns (sweeps, violations of the last sweep).

    ``segments`` [block_count + 2]: segment k < block_count is block k's inner edges (skipped while
    the block is clean), the last one the edges between blocks (a move there dirties both blocks).
    A collapsed edge (length 0) counts as outside its limits but has no direction to move along.
    """
    blocks = segments.shape[0] - 2
    clean = np.zeros(blocks, dtype=np.bool_)
    sweeps = 0
    violations = 0
    for _ in range(iterations):
        sweeps += 1
        violations = 0
        for segment in range(blocks + 1):
            between = segment == blocks
            if not between and clean[segment]:
                continue
            count = 0
            for e in range(segments[segment], segments[segment + 1]):
                a, b, rest = ends[e, 0], ends[e, 1], rest_lengths[e]
                d0, d1, d2 = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
                squared = d0 * d0 + d1 * d1 + d2 * d2
                longest, shortest = rest * hi_tol, rest * lo_tol
                if squared > longest * longest or squared < shortest * shortest:
                    count += 1
                    if squared > 0.0:
                        _move(x, a, b, d0, d1, d2, squared, rest, mobility, lo, hi)
                        if between:
                            clean[a // block_size] = False
                            clean[b // block_size] = False
            if not between:
                clean[segment] = count == 0
            violations += count
        if violations == 0:
            break
    return sweeps, violations


@njit(cache=True)
def _smooth_step(cur, nxt, offsets, ids, inverse_degree, scale, weight, expected, use_expected):
    """One Jacobi step from cur into nxt."""
    for i in range(cur.shape[0]):
        start, stop = offsets[i], offsets[i + 1]
        s = weight * scale[i]
        if s == 0.0 or stop == start:
            nxt[i, 0], nxt[i, 1], nxt[i, 2] = cur[i, 0], cur[i, 1], cur[i, 2]
            continue
        m0 = m1 = m2 = 0.0
        for j in range(start, stop):
            v = ids[j]
            m0 += cur[v, 0]
            m1 += cur[v, 1]
            m2 += cur[v, 2]
        inv = inverse_degree[i]
        c0, c1, c2 = m0 * inv - cur[i, 0], m1 * inv - cur[i, 1], m2 * inv - cur[i, 2]
        if use_expected:
            c0, c1, c2 = c0 - expected[i, 0], c1 - expected[i, 1], c2 - expected[i, 2]
        nxt[i, 0] = cur[i, 0] + s * c0
        nxt[i, 1] = cur[i, 1] + s * c1
        nxt[i, 2] = cur[i, 2] + s * c2


@njit(cache=True)
def _gather(values, order, base, out):
    """out[i] = base[i] + values[order[i]], or values[order[i]] when ``base`` is empty (rows of 3)."""
    plain = base.shape[0] == 0
    for i in range(order.shape[0]):
        k = order[i]
        for c in range(3):
            out[i, c] = values[k, c] if plain else base[i, c] + values[k, c]


@njit(cache=True)
def _combine(a, b, sign, out, order):
    """out[order[i]] (out[i] when ``order`` is empty) = a[i] + sign · b[i] (rows of 3)."""
    plain = order.shape[0] == 0
    for i in range(a.shape[0]):
        k = i if plain else order[i]
        for c in range(3):
            out[k, c] = a[i, c] + b[i, c] if sign > 0 else a[i, c] - b[i, c]


def improve(plan: QualityPlan, displacements: np.ndarray, settings: QualitySettings,
            expected_laplacian: np.ndarray | None,
            frame_rest: tuple[np.ndarray, tuple[np.ndarray, np.ndarray]] | None = None,
            ) -> tuple[np.ndarray, tuple[int, int], int]:
    """``improve.improve`` with the kernel (mesh order in and out, arguments already checked):
    (displacements, sweeps, violations left). The pass order's work arrays are kept on the plan
    (``plan.workspace``), so a plan serves one thread at a time.

    Args:
        frame_rest: ``None`` for the plan's rest, else (rest float64 [vertex_count, 3] in the pass's
            numbering, (inner, cross) edge lengths from ``quality.frame_rest_lengths``).
    """
    n = plan.vertex_count
    work = plan.workspace
    if "x" not in work:
        work.update(x=np.empty((n, 3)), cur=np.empty((n, 3)), nxt=np.empty((n, 3)), expected=np.empty((n, 3)))
    x, cur, nxt = work["x"], work["cur"], work["nxt"]
    none, empty = np.zeros(0, dtype=np.int64), np.zeros((0, 3))
    use_expected = expected_laplacian is not None
    expected = work["expected"] if use_expected else np.zeros((1, 3))
    if expected_laplacian is not None:
        _gather(np.ascontiguousarray(expected_laplacian, dtype=np.float64), plan.order, empty, expected)
    lo, hi, lo_tol, hi_tol = settings.limits()
    iterations = int(settings.constraint_iterations)
    if "ends" not in work:  # the inner edges block by block, then those between blocks
        work.update(ends=np.concatenate([plan.inner.ends, plan.cross.ends]),
                    lengths=np.concatenate([plan.inner.rest_lengths, plan.cross.rest_lengths]),
                    segments=np.append(plan.inner.block_offsets[:, 0],
                                       [plan.inner.ends.shape[0], plan.edge_count]).astype(np.int64))
    rest, lengths = plan.sorted_rest, work["lengths"]
    if frame_rest is not None:
        rest, lengths = np.ascontiguousarray(frame_rest[0]), np.concatenate(frame_rest[1])
    edges = (work["ends"], lengths, work["segments"], plan.mobility, plan.block_size)
    _gather(np.ascontiguousarray(displacements, dtype=np.float64), plan.order, rest, x)
    first, _ = _constrain(x, *edges, lo, hi, lo_tol, hi_tol, iterations)
    _combine(x, rest, -1, cur, none)
    for _ in range(int(settings.smoothing_iterations)):
        _smooth_step(cur, nxt, plan.neighbour_offsets, plan.neighbour_ids, plan.inverse_degree, plan.scale,
                     float(settings.smoothing_weight), expected, use_expected)
        cur, nxt = nxt, cur
    _combine(rest, cur, 1, x, none)
    second, left = _constrain(x, *edges, lo, hi, lo_tol, hi_tol, iterations)
    out = np.empty((n, 3))
    _combine(x, rest, -1, out, plan.order)
    return out, (int(first), int(second)), int(left)


def warm_up() -> None:
    """Compile (or load from the cache) by running the pass on one triangle."""
    from .plan import build_plan

    rest = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    plan = build_plan(rest, np.array([[0, 1], [1, 2], [0, 2]]))
    stretched = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    improve(plan, stretched, QualitySettings(), np.zeros((3, 3)))
    improve(plan, np.zeros((3, 3)), QualitySettings(), None)
