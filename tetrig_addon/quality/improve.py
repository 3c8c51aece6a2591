"""The quality pass itself, the NumPy reference (the package's docstring says what it does and
why): the edge-length clamp in colours, the smoothing of the displacement, and ``improve``, which
runs the Numba kernel (``kernel``) instead once it is loaded (``backend``), with the same result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import TetRigInputError
from . import backend
from .plan import DEGENERATE_EDGE_SHARE, QualityPlan
from .settings import QualitySettings


@dataclass(frozen=True)
class QualityResult:
    """The repaired displacement and what the clamp did.

    Attributes:
        displacements: float64 [vertex_count, 3].
        sweeps: clamp sweeps run before and after the smoothing (each ≤ constraint_iterations).
        violations_left: edges outside their limits in the last sweep (0 when it converged).
    """

    displacements: np.ndarray
    sweeps: tuple[int, int]
    violations_left: int


def _clamp_colour(x: np.ndarray, a: np.ndarray, b: np.ndarray, rest: np.ndarray, mobility: np.ndarray,
                  limits: tuple[float, float, float, float]) -> int:
    """Fix the edges (a, b) of one colour in place; returns how many were outside their limits."""
    lo, hi, lo_tol, hi_tol = limits
    d = x[b] - x[a]
    squared = d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1] + d[:, 2] * d[:, 2]
    longest, shortest = rest * hi_tol, rest * lo_tol
    bad = np.flatnonzero((squared > longest * longest) | (squared < shortest * shortest))
    fix = bad[squared[bad] > 0.0]  # a collapsed edge has no direction
    if fix.size:
        fa, fb = a[fix], b[fix]
        length = np.sqrt(squared[fix])
        target = np.minimum(np.maximum(length / rest[fix], lo), hi) * rest[fix]
        corr = (length - target) / length
        ma, mb = mobility[fa], mobility[fb]
        total = ma + mb
        x[fa] += d[fix] * (corr * (ma / total))[:, None]
        x[fb] -= d[fix] * (corr * (mb / total))[:, None]
    return int(bad.size)


def _sweep(plan: QualityPlan, x: np.ndarray, limits: tuple[float, float, float, float],
           lengths: tuple[np.ndarray, np.ndarray]) -> int:
    """One sweep over every clamped edge (pass numbering), colour by colour: the edges inside
    blocks, then those between them (``lengths``: their rest lengths, inner and cross). Returns
    the edges found outside their limits."""
    violations = 0
    for edges, rest in zip((plan.inner, plan.cross), lengths):
        offsets = edges.colour_offsets
        for c in range(offsets.size - 1):
            idx = edges.members[offsets[c]:offsets[c + 1]]
            violations += _clamp_colour(x, edges.ends[idx, 0], edges.ends[idx, 1], rest[idx],
                                        plan.mobility, limits)
    return violations


def frame_rest_lengths(plan: QualityPlan, sorted_rest: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The clamped edges' lengths in another rest shape (a posed input), inner and cross edges:
    float64 [inner edge count], [cross edge count].

    An edge the pose collapses (shorter than ``DEGENERATE_EDGE_SHARE`` of the mesh's size) gets
    NaN: every comparison with NaN is false, so the clamp never counts or moves it, as
    ``build_plan`` leaves degenerate rest edges out.

    Args:
        sorted_rest: float64 [vertex_count, 3], the rest shape in the pass's numbering
            (``rest[plan.order]``).
    """
    size = float(np.ptp(plan.sorted_rest, axis=0).max()) if plan.vertex_count else 0.0
    out = []
    for edges in (plan.inner, plan.cross):
        ends = edges.ends
        length = np.linalg.norm(sorted_rest[ends[:, 1]] - sorted_rest[ends[:, 0]], axis=1)
        out.append(np.where(length > DEGENERATE_EDGE_SHARE * size, length, np.nan))
    return out[0], out[1]


def _constrain(plan: QualityPlan, x: np.ndarray, settings: QualitySettings, iterations: int,
               lengths: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[int, int]:
    """Clamp sweeps on x (pass numbering) in place: (sweeps run, violations of the last).
    ``lengths``: the edges' rest lengths (``frame_rest_lengths``), default the plan's."""
    limits = settings.limits()
    rest = (plan.inner.rest_lengths, plan.cross.rest_lengths) if lengths is None else lengths
    sweeps = violations = 0
    for _ in range(iterations):
        sweeps += 1
        violations = _sweep(plan, x, limits, rest)
        if violations == 0:
            break
    return sweeps, violations


def constrain_edge_lengths(plan: QualityPlan, positions: np.ndarray, settings: QualitySettings,
                           iterations: int | None = None) -> tuple[np.ndarray, int, int]:
    """The edge-length clamp (NumPy reference).

    Args:
        positions: float [vertex_count, 3] (mesh order), not modified.
        iterations: sweeps at most; default ``settings.constraint_iterations``.

    Returns:
        (positions float64 [vertex_count, 3], sweeps run, edges outside their limits in the last
        sweep — 0 when the last sweep found none).
    """
    x = np.asarray(positions, dtype=np.float64)[plan.order]
    sweeps, violations = _constrain(plan, x, settings,
                                    settings.constraint_iterations if iterations is None else iterations)
    out = np.empty_like(x)
    out[plan.order] = x
    return out, sweeps, violations


def _smooth(plan: QualityPlan, d: np.ndarray, settings: QualitySettings, expected: np.ndarray | None) -> np.ndarray:
    """Jacobi smoothing in the pass's numbering (see ``smooth_displacements``)."""
    step = (settings.smoothing_weight * plan.scale)[:, None]
    for _ in range(settings.smoothing_iterations):
        change = (plan.adjacency @ d) * plan.inverse_degree[:, None] - d
        if expected is not None:
            change = change - expected
        d = d + step * change
    return d


def smooth_displacements(plan: QualityPlan, displacements: np.ndarray, settings: QualitySettings,
                         expected_laplacian: np.ndarray | None = None) -> np.ndarray:
    """Jacobi Laplacian smoothing of a displacement (NumPy reference).

    d_i ← d_i + w·s_i·(mean_j d_j − d_i − e_i), ``smoothing_iterations`` times, with w the weight,
    s_i ``plan.smoothing_scale`` and e_i the expected Laplacian (0 without one: the seed's pass).

    Args:
        displacements: float [vertex_count, 3] (mesh order); not modified.
        expected_laplacian: float [vertex_count, 3] or ``None`` (``affine_laplacian_matrix``).

    Returns:
        float64 [vertex_count, 3].
    """
    d = np.asarray(displacements, dtype=np.float64)[plan.order]
    expected = None if expected_laplacian is None else np.asarray(expected_laplacian, dtype=np.float64)[plan.order]
    out = np.empty_like(d)
    out[plan.order] = _smooth(plan, d, settings, expected)
    return out


def improve(plan: QualityPlan, displacements: np.ndarray, settings: QualitySettings,
            expected_laplacian: np.ndarray | None = None, use_kernel: bool | None = None,
            rest_positions: np.ndarray | None = None) -> QualityResult:
    """The whole pass: clamp, smooth, clamp (seed 003's sandwich).

    Args:
        displacements: float [vertex_count, 3] from the rest mesh (the blended offsets), mesh order.
        settings: validated ``QualitySettings``.
        expected_laplacian: float [vertex_count, 3] or ``None``: see the module's docstring.
        use_kernel: ``True`` the Numba kernel (compiling it first), ``False`` the NumPy reference,
            ``None`` the kernel once it is loaded (``backend.warm_up``), else the
            reference. Both give the same displacements (to rounding).
        rest_positions: float [vertex_count, 3] (mesh order) or ``None``: this frame's rest shape
            when it is not the plan's, e.g. a mesh posed by an armature or shape keys: the
            displacements are from it and the edges keep its lengths (the pose is the user's,
            only what the simulation adds is repaired). ``None``: the plan's rest.

    Raises:
        TetRigInputError: an array of another vertex count.
        backend.KernelUnavailable: ``use_kernel=True`` and Numba cannot load.
    """
    for name, array in (("displacements", displacements), ("expected Laplacian", expected_laplacian),
                        ("rest positions", rest_positions)):
        if array is not None and np.shape(array) != plan.rest_positions.shape:
            raise TetRigInputError(f"The {name} must be {plan.vertex_count}×3 like the mesh, got "
                                   f"{np.shape(array)}.")
    sorted_rest, lengths = plan.sorted_rest, None
    if rest_positions is not None:
        sorted_rest = np.asarray(rest_positions, dtype=np.float64)[plan.order]
        lengths = frame_rest_lengths(plan, sorted_rest)
    if use_kernel is None:
        use_kernel = backend.kernel_ready()
    if use_kernel:
        out, sweeps, left = backend.kernel().improve(plan, displacements, settings, expected_laplacian,
                                                             None if lengths is None else (sorted_rest, lengths))
        return QualityResult(out, sweeps, left)
    d = np.asarray(displacements, dtype=np.float64)[plan.order]
    expected = None if expected_laplacian is None else np.asarray(expected_laplacian, dtype=np.float64)[plan.order]
    x = sorted_rest + d
    first, _ = _constrain(plan, x, settings, settings.constraint_iterations, lengths)
    x = sorted_rest + _smooth(plan, x - sorted_rest, settings, expected)
    second, left = _constrain(plan, x, settings, settings.constraint_iterations, lengths)
    out = np.empty_like(x)
    out[plan.order] = x - sorted_rest
    return QualityResult(out, (first, second), left)
