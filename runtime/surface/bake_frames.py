"""A Surface body's frames as its bake stores them (``common/bake_store``): the displacements of
its own vertices and, for a tearing body, per frame, the torn edges and the face corners of split
vertices with their offsets (only those: most corners of a torn sheet are not split)."""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..common import bake_store, mesh_io


@dataclass(frozen=True)
class SurfaceFrame:
    """What a frame of a surface body shows, in its object space (what a bake stores).

    Attributes:
        displacements: float64 [N, 3], each vertex's own particle from where the vertex rests this
            frame (its posed input, else the mesh's own position).
        torn: bool [edge_count], the mesh's torn edges, or ``None`` when the body cannot tear.
        corner_offsets: float64 [corner_count, 3] or ``None``: each face corner's particle minus its
            vertex's own particle (zero where the vertex is not split).
    """

    displacements: np.ndarray
    torn: np.ndarray | None = None
    corner_offsets: np.ndarray | None = None


def tear_arrays(frames: list[SurfaceFrame]) -> dict[str, np.ndarray]:
    """The stored form of a tearing body's frames (each with ``torn`` and ``corner_offsets``):
    ``torn_edges`` int32 [Σ torn], ``torn_counts`` int32 [F], ``split_corners`` int32 [Σ split],
    ``split_offsets`` float32 [Σ split · 3], ``split_counts`` int32 [F]."""
    torn = [np.flatnonzero(f.torn).astype(np.int32) if f.torn is not None else np.zeros(0, np.int32)
            for f in frames]
    split = [np.flatnonzero(np.any(f.corner_offsets != 0.0, axis=1)) if f.corner_offsets is not None
             else np.zeros(0, np.int64) for f in frames]
    offsets = [f.corner_offsets[c] if f.corner_offsets is not None else np.zeros((0, 3))
               for f, c in zip(frames, split)]
    return {"torn_edges": np.concatenate([np.zeros(0, np.int32)] + torn).astype(np.int32),
            "torn_counts": np.array([t.shape[0] for t in torn], dtype=np.int32),
            "split_corners": np.concatenate([np.zeros(0, np.int64)] + split).astype(np.int32),
            "split_offsets": np.concatenate([np.zeros((0, 3))] + offsets).astype(np.float32).ravel(),
            "split_counts": np.array([c.shape[0] for c in split], dtype=np.int32)}


def baked_frame(obj: bpy.types.Object, frame: int) -> SurfaceFrame | None:
    """The baked ``SurfaceFrame`` of a Surface body at ``frame``: displacements float64 [N, 3]
    object space and, for a tearing bake, the torn edges bool [edge_count] and the corner offsets
    float64 [corner_count, 3]; ``None`` when ``frame`` is not baked."""
    displacements = bake_store.baked_displacements(obj, frame)
    header = bake_store.source_bake(obj)
    if displacements is None or header is None:
        return None
    group = bake_store.group(obj)
    index = frame - header.frame_start
    edges = bake_store.frame_slice(group, "torn_edges", "torn_counts", index, 1, np.int32)
    corners = bake_store.frame_slice(group, "split_corners", "split_counts", index, 1, np.int32)
    offsets = bake_store.frame_slice(group, "split_offsets", "split_counts", index, 3, np.float32)
    if edges is None or corners is None or offsets is None:
        return SurfaceFrame(displacements)
    mesh = mesh_io.mesh_of(obj)
    torn = np.zeros(len(mesh.edges), dtype=bool)
    torn[edges] = True
    corner_offsets = np.zeros((len(mesh.loops), 3))
    corner_offsets[corners] = offsets
    return SurfaceFrame(displacements, torn, corner_offsets)
