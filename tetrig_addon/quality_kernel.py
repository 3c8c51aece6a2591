"""The quality pass (``quality.py``) compiled with Numba: one call per frame, no NumPy temporaries.

The same arithmetic as the NumPy reference in ``quality.py``, written edge by edge and vertex by
vertex: the clamp walks the edges in the plan's colour order (within a colour no two edges share a
vertex, so this equals the reference's colour-at-once update), the smoothing sums each vertex's
neighbours in the order of the reference's sparse product. A test compares the two. Importing
this module imports Numba; ``quality`` does that lazily and falls back to the reference. Machine
code is cached on disk (``cache=True``, under ``NUMBA_CACHE_DIR``); ``fastmath`` stays off.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .quality import LIMIT_TOLERANCE, QualityPlan, QualityResult, QualitySettings


@njit(cache=True)
def _constrain(x, ends, rest_lengths, shares, lo, hi, lo_tol, hi_tol, iterations):
    """Clamp sweeps in place; returns (sweeps, violations of the last sweep)."""
    sweeps = 0
    violations = 0
    for _ in range(iterations):
        sweeps += 1
        violations = 0
        for e in range(ends.shape[0]):
            a, b = ends[e, 0], ends[e, 1]
            d0, d1, d2 = x[b, 0] - x[a, 0], x[b, 1] - x[a, 1], x[b, 2] - x[a, 2]
            squared = d0 * d0 + d1 * d1 + d2 * d2
            rest = rest_lengths[e]
            longest, shortest = rest * hi_tol, rest * lo_tol
            if squared > longest * longest or squared < shortest * shortest:
                violations += 1
                if squared > 0.0:
                    length = math.sqrt(squared)
                    target = min(max(length / rest, lo), hi) * rest
                    corr = (length - target) / length
                    sa, sb = corr * shares[e, 0], corr * shares[e, 1]
                    x[a, 0] += d0 * sa
                    x[a, 1] += d1 * sa
                    x[a, 2] += d2 * sa
                    x[b, 0] -= d0 * sb
                    x[b, 1] -= d1 * sb
                    x[b, 2] -= d2 * sb
        if violations == 0:
            break
    return sweeps, violations


@njit(cache=True)
def _smooth(d, offsets, ids, scale, weight, expected, use_expected, iterations):
    """Jacobi smoothing of the displacement d [n, 3]; returns the result (d is not modified).
    Each neighbour sum runs in the order of the reference's sparse product."""
    n = d.shape[0]
    cur = d.copy()
    nxt = d.copy()
    for _ in range(iterations):
        for i in range(n):
            start, stop = offsets[i], offsets[i + 1]
            s = weight * scale[i]
            if s == 0.0 or stop == start:
                nxt[i, 0], nxt[i, 1], nxt[i, 2] = cur[i, 0], cur[i, 1], cur[i, 2]
                continue
            inv = 1.0 / (stop - start)
            m0 = m1 = m2 = 0.0
            for j in range(start, stop):
                v = ids[j]
                m0 += inv * cur[v, 0]
                m1 += inv * cur[v, 1]
                m2 += inv * cur[v, 2]
            c0, c1, c2 = m0 - cur[i, 0], m1 - cur[i, 1], m2 - cur[i, 2]
            if use_expected:
                c0, c1, c2 = c0 - expected[i, 0], c1 - expected[i, 1], c2 - expected[i, 2]
            nxt[i, 0] = cur[i, 0] + s * c0
            nxt[i, 1] = cur[i, 1] + s * c1
            nxt[i, 2] = cur[i, 2] + s * c2
        cur, nxt = nxt, cur
    return cur


@njit(cache=True)
def _improve(d, rest, ends, rest_lengths, shares, offsets, ids, scale, expected, use_expected,
             lo, hi, lo_tol, hi_tol, constraint_iterations, weight, smoothing_iterations):
    x = rest + d
    first, _ = _constrain(x, ends, rest_lengths, shares, lo, hi, lo_tol, hi_tol, constraint_iterations)
    smoothed = _smooth(x - rest, offsets, ids, scale, weight, expected, use_expected, smoothing_iterations)
    x = rest + smoothed
    second, left = _constrain(x, ends, rest_lengths, shares, lo, hi, lo_tol, hi_tol, constraint_iterations)
    return x - rest, first, second, left


def improve(plan: QualityPlan, displacements: np.ndarray, settings: QualitySettings,
            expected_laplacian: np.ndarray | None) -> QualityResult:
    """``quality.improve`` with the kernel (same arguments, already checked)."""
    use_expected = expected_laplacian is not None
    expected = (np.ascontiguousarray(expected_laplacian, dtype=np.float64) if use_expected
                else np.zeros((1, 3)))
    lo, hi = float(settings.max_compression), float(settings.max_stretch)
    d, first, second, left = _improve(
        np.ascontiguousarray(displacements, dtype=np.float64), plan.rest_positions, plan.edge_ends,
        plan.rest_lengths, plan.edge_shares, plan.neighbour_offsets, plan.neighbour_ids,
        plan.smoothing_scale, expected, use_expected, lo, hi, lo * (1.0 - LIMIT_TOLERANCE),
        hi * (1.0 + LIMIT_TOLERANCE), int(settings.constraint_iterations),
        float(settings.smoothing_weight), int(settings.smoothing_iterations))
    return QualityResult(d, (int(first), int(second)), int(left))


def warm_up() -> None:
    """Compile (or load from the cache) by running the pass on one triangle."""
    from .quality import build_plan

    rest = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    plan = build_plan(rest, np.array([[0, 1], [1, 2], [0, 2]]))
    improve(plan, np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 0.0]]), QualitySettings(),
            np.zeros((3, 3)))
    improve(plan, np.zeros((3, 3)), QualitySettings(), None)
