"""How good a deformed surface is: edge stretch against the rest mesh, and flipped triangles.

The measures of the quality pass (``quality``, seed 003): the share of edges beyond a stretch
limit and the triangles whose normal turned against their rest normal.
"""

from __future__ import annotations

import numpy as np

# A triangle whose rest height is below this share of its longest edge is a sliver: its normal is
# too ill-defined to call it flipped (``sliver_triangles``; the scanned bunny has one in 69,451).
SLIVER_HEIGHT_SHARE = 0.01


def edge_length_ratios(rest_positions: np.ndarray, positions: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Length of every edge over its rest length: float64 [edge_count] (rest lengths > 0)."""
    e = np.asarray(edges, dtype=np.int64)
    rest = np.linalg.norm(rest_positions[e[:, 1]] - rest_positions[e[:, 0]], axis=1)
    return np.linalg.norm(positions[e[:, 1]] - positions[e[:, 0]], axis=1) / rest


def flipped_triangles(rest_positions: np.ndarray, positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Triangles whose normal points against their rest normal: bool [triangle_count]."""
    t = np.asarray(triangles, dtype=np.int64)

    def normals(p: np.ndarray) -> np.ndarray:
        return np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])

    return np.einsum("ij,ij->i", normals(np.asarray(positions)), normals(np.asarray(rest_positions))) < 0.0


def sliver_triangles(rest_positions: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Triangles whose rest height is below ``SLIVER_HEIGHT_SHARE`` of their longest edge (needles
    and caps, whose normal a tiny move turns over): bool [triangle_count]."""
    p = np.asarray(rest_positions, dtype=np.float64)[np.asarray(triangles, dtype=np.int64)]
    longest = np.linalg.norm(p[:, [1, 2, 0]] - p, axis=2).max(axis=1)
    double_area = np.linalg.norm(np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]), axis=1)
    return double_area < SLIVER_HEIGHT_SHARE * longest * longest
