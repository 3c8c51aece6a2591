"""The binding as mesh attributes on the source mesh (POINT domain, readable in the spreadsheet).

``tetrig_cp0..3`` (INT) are the seed's ``vertex_bones`` columns, ``tetrig_w0..3`` (FLOAT) its
``weights`` columns; ``tetrig_offset`` (FLOAT_VECTOR) is the simulated displacement the offset
modifier adds. The user's vertex positions are never written.
"""

from __future__ import annotations

import bpy
import numpy as np

from . import mesh_io

INDEX_ATTRIBUTES = tuple(f"tetrig_cp{k}" for k in range(4))
WEIGHT_ATTRIBUTES = tuple(f"tetrig_w{k}" for k in range(4))
OFFSET_ATTRIBUTE = "tetrig_offset"
ALL_ATTRIBUTES = INDEX_ATTRIBUTES + WEIGHT_ATTRIBUTES + (OFFSET_ATTRIBUTE,)


def store(mesh: bpy.types.Mesh, indices: np.ndarray, weights: np.ndarray) -> None:
    """Write int [N, 4] control-point indices and float [N, 4] weights, and a zero offset."""
    for k in range(4):
        mesh_io.write_attribute(mesh, INDEX_ATTRIBUTES[k], "INT", indices[:, k])
        mesh_io.write_attribute(mesh, WEIGHT_ATTRIBUTES[k], "FLOAT", weights[:, k])
    mesh_io.write_attribute(mesh, OFFSET_ATTRIBUTE, "FLOAT_VECTOR", np.zeros((len(mesh.vertices), 3)))


def load(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray] | None:
    """Read the binding back: (int32 [N, 4] indices, float32 [N, 4] weights), or ``None`` when any
    attribute is missing or its length no longer matches the mesh (a stale binding)."""
    cols_i = [mesh_io.read_attribute(mesh, n, np.int32) for n in INDEX_ATTRIBUTES]
    cols_w = [mesh_io.read_attribute(mesh, n, np.float32) for n in WEIGHT_ATTRIBUTES]
    indices = [c for c in cols_i if c is not None]
    weights = [c for c in cols_w if c is not None]
    if len(indices) + len(weights) != 8:
        return None
    return np.stack(indices, axis=1), np.stack(weights, axis=1)


def clear(mesh: bpy.types.Mesh) -> None:
    """Remove every TetRig attribute from the mesh."""
    for name in ALL_ATTRIBUTES:
        mesh_io.remove_attribute(mesh, name)
