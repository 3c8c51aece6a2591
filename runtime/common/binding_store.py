"""The binding as mesh attributes (POINT domain, readable in the spreadsheet), and the fingerprint
that tells when it went stale.

``tetrig_cp0..3`` (INT) are the seed's ``vertex_bones`` columns, ``tetrig_w0..3`` (FLOAT) its
``weights`` columns; ``tetrig_offset`` (FLOAT_VECTOR) is the simulated displacement the offset
modifier adds. They live on the source mesh, or on its points object when the modifiers before
TetRig make vertices of their own (``stack``). The user's vertex positions are never written.
"""

from __future__ import annotations

import hashlib

import bpy
import numpy as np

from . import mesh_io
from .properties import object_settings

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


def holder(obj: bpy.types.Object) -> bpy.types.Mesh:
    """The mesh holding the binding of a soft body: its points object's, else its own."""
    points = object_settings(obj).points
    if points is not None and points.type == "MESH":
        return mesh_io.mesh_of(points)
    return mesh_io.mesh_of(obj)


def shown_holder(obj: bpy.types.Object) -> bpy.types.Mesh:
    """The mesh holding the offsets ``obj`` shows: its offsets object's (one instance of a mesh
    that several soft bodies share, Alt+D), else the binding's ``holder``."""
    offsets = object_settings(obj).offsets
    if offsets is not None and offsets.type == "MESH" and object_settings(offsets).source == obj:
        return mesh_io.mesh_of(offsets)
    return holder(obj)


def load(mesh: bpy.types.Mesh) -> tuple[np.ndarray, np.ndarray] | None:
    """Read the binding back: (int32 [N, 4] indices, float64 [N, 4] weights), or ``None`` when any
    attribute is missing or its length no longer matches the mesh (a stale binding).

    The weights are stored as float32; they come back in float64 divided by their sum, so that
    they sum to 1 to float64 rounding: a blend of control points 1e5 m from the origin is then
    off by 1e-11 m, not by the 1e-2 m a float32 sum's error would give."""
    cols_i = [mesh_io.read_attribute(mesh, n, np.int32) for n in INDEX_ATTRIBUTES]
    cols_w = [mesh_io.read_attribute(mesh, n, np.float32) for n in WEIGHT_ATTRIBUTES]
    indices = [c for c in cols_i if c is not None]
    weights = [c for c in cols_w if c is not None]
    if len(indices) + len(weights) != 8:
        return None
    w = np.stack(weights, axis=1).astype(np.float64)
    total = w.sum(1, keepdims=True)
    return np.stack(indices, axis=1), np.where(total != 0.0, w / np.where(total != 0.0, total, 1.0), w)


def clear(mesh: bpy.types.Mesh) -> None:
    """Remove every TetRig attribute from the mesh."""
    for name in ALL_ATTRIBUTES:
        mesh_io.remove_attribute(mesh, name)


# The last digest of each mesh (by session_uid) and the exact data it was made of: the frame
# handler checks the binding every frame, and hashing the bunny's positions took 0.5 ms of it.
_FINGERPRINT_MEMO_SIZE = 64
_fingerprints: dict[int, tuple[list[tuple[bytes, np.ndarray]], str]] = {}


def rest_fingerprint(obj: bpy.types.Object) -> str:
    """Digest of what the binding was made from: the mesh's vertex count and positions (so also a
    transform applied to it) and every shape key's positions. Hex, 32 digits.

    Posing (an armature, a lattice, shape key values) does not change it; editing the mesh or a
    shape key does. The data is read every call; the digest is reused while it is bit for bit the
    same as last time's."""
    mesh = mesh_io.mesh_of(obj)
    parts = [(len(mesh.vertices).to_bytes(8, "little"), mesh_io.positions_float32(mesh))]
    keys = mesh.shape_keys
    if keys is not None:
        for block in keys.key_blocks:
            data = np.empty(len(block.data) * 3, dtype=np.float32)
            block.data.foreach_get("co", data)
            parts.append((block.name.encode("utf-8") + b"\0", data))
    memo = _fingerprints.get(mesh.session_uid)
    if memo is not None and len(memo[0]) == len(parts) and all(
            a[0] == b[0] and a[1].shape == b[1].shape and np.array_equal(a[1].view(np.uint32), b[1].view(np.uint32))
            for a, b in zip(memo[0], parts)):
        return memo[1]
    digest = hashlib.blake2b(digest_size=16)
    for label, data in parts:
        digest.update(label)
        digest.update(data.tobytes())
    if len(_fingerprints) >= _FINGERPRINT_MEMO_SIZE:
        _fingerprints.pop(next(iter(_fingerprints)))
    _fingerprints[mesh.session_uid] = (parts, digest.hexdigest())
    return digest.hexdigest()
