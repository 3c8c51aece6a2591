"""Tet geometry shared by the cage (building, binding) and the solver: signed volumes, shape
quality, the unique edges of a set of tets, inverses of many 3×3 matrices, and the barycentric
transforms of tets.

Pure NumPy, vectorized over the tets (or matrices): one call for all of them.
"""

from __future__ import annotations

import numpy as np


def tet_volumes(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Signed volumes of tets.

    Args:
        points: float [point_count, 3] [m].
        tets: int [tet_count, 4].

    Returns:
        float64 [tet_count] [m³]; positive for positively oriented tets.
    """
    p = np.asarray(points, dtype=np.float64)[tets]
    e1, e2, e3 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]
    return np.einsum("ij,ij->i", np.cross(e1, e2), e3) / 6.0


def tet_quality(points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Normalized tet quality: 6√2·V / l_rms³, 1 for a regular tet, ≤ 0 for inverted or flat ones.

    Args:
        points: float [point_count, 3] [m].
        tets: int [tet_count, 4].

    Returns:
        float64 [tet_count], dimensionless.
    """
    p = np.asarray(points, dtype=np.float64)[tets]
    pairs = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))
    sq = sum(np.einsum("ij,ij->i", p[:, a] - p[:, b], p[:, a] - p[:, b]) for a, b in pairs)
    l_rms = np.sqrt(sq / 6.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = 6.0 * np.sqrt(2.0) * tet_volumes(points, tets) / l_rms**3
    return np.nan_to_num(q, nan=0.0)


def unique_edges(tets: np.ndarray) -> np.ndarray:
    """Unique undirected edges of a set of tets (the seed's spring list).

    Args:
        tets: int [tet_count, 4].

    Returns:
        int32 [edge_count, 2], each row sorted (i < j), rows sorted lexicographically.
    """
    tets = np.asarray(tets)
    pairs = np.array([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    e = np.sort(tets[:, pairs].reshape(-1, 2), axis=1).astype(np.int64)
    if e.shape[0] == 0:
        return np.zeros((0, 2), dtype=np.int32)
    # one int64 key per edge, i * n + j, sorts like the rows (several times faster than unique rows)
    n = int(e.max()) + 1
    keys = np.unique(e[:, 0] * n + e[:, 1])
    return np.stack([keys // n, keys % n], axis=1).astype(np.int32)


def barycentric_transforms(control_points: np.ndarray, tets: np.ndarray) -> np.ndarray:
    """Per-tet inverse edge matrices for barycentric coordinates.

    Args:
        control_points: float [control_point_count, 3] [m].
        tets: int [tet_count, 4], non-degenerate.

    Returns:
        float64 [tet_count, 3, 3] [1/m]: for a point p, λ₁₂₃ = T @ (p − q₀), λ₀ = 1 − Σλ₁₂₃.
    """
    p = np.asarray(control_points, dtype=np.float64)[tets]
    edges = np.stack([p[:, 1] - p[:, 0], p[:, 2] - p[:, 0], p[:, 3] - p[:, 0]], axis=2)
    return inverse3(edges)


def inverse3(m: np.ndarray) -> np.ndarray:
    """Inverses of 3×3 matrices by their adjugate: float64 [..., 3, 3] → [..., 3, 3].

    Elementwise NumPy, about 20 times faster than ``np.linalg.inv`` on many small matrices (which
    calls LAPACK once per matrix); a singular matrix gives inf/nan entries, never an exception.
    """
    a = np.asarray(m, dtype=np.float64)
    c0 = np.cross(a[..., :, 1], a[..., :, 2])  # rows of the adjugate: cross products of columns
    c1 = np.cross(a[..., :, 2], a[..., :, 0])
    c2 = np.cross(a[..., :, 0], a[..., :, 1])
    det = np.einsum("...i,...i->...", a[..., :, 0], c0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([c0, c1, c2], axis=-2) / det[..., None, None]


def bounding_box(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(low, high), float64 [3] each [m], of the points float64 [n ≥ 1, 3], column by column
    (``points.min(axis=0)`` on rows of three is about ten times slower)."""
    return (np.array([points[:, 0].min(), points[:, 1].min(), points[:, 2].min()]),
            np.array([points[:, 0].max(), points[:, 1].max(), points[:, 2].max()]))


def boxes_overlap(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray]) -> bool:
    """Whether the boxes (low, high) ``a`` and ``b`` (float64 [3] each) overlap or touch."""
    return bool(np.all(a[0] <= b[1]) and np.all(b[0] <= a[1]))
