"""A torn Surface body's mesh, shown split along its torn edges without touching the mesh.

The engine splits every vertex along a tear into one particle per fan of faces still joined
(``tetrig_addon.surface.tearing``). The mesh itself keeps its vertices (the rest shape is never
written); instead two attributes tell the TetRig node group (``offset_modifier``) where to split
and how far each side moved:

- ``tetrig_torn``, boolean on the EDGE domain: the edges a crack runs along. The node group's
  Split Edges node splits them, which gives each vertex one copy per fan of faces around it, as
  the engine does.
- ``tetrig_tear_offset``, vector on the CORNER domain [m], object space: each face corner's
  particle's displacement minus its vertex's own particle's displacement (the ``tetrig_offset``
  point attribute). After the split the corners of each copy are one fan and carry one value,
  so the node group reads the attribute on the point domain (Blender averages the corners) and
  adds it to ``tetrig_offset``.

Absent attributes read as false and zero in Geometry Nodes, so an untorn body (``write(obj,
None, None)`` removes them) evaluates as it did before tearing existed, bit for bit.
"""

from __future__ import annotations

from typing import Any, cast

import bpy
import numpy as np

from ..common import mesh_io
from ..common.offset_modifier import TEAR_OFFSET_ATTRIBUTE, TORN_ATTRIBUTE


def write(obj: bpy.types.Object, torn: np.ndarray | None, corner_offsets: np.ndarray | None,
          update: bool = True) -> None:
    """Store the torn edges and the corners' offsets on the mesh of ``obj`` for the offset
    modifier (``foreach_set``; the mesh's coordinates are never written), or remove them.

    Args:
        obj: a mesh object carrying the TetRig offset modifier.
        torn: bool [edge_count] (``len(mesh.edges)``), the edges a crack runs along
            (``SurfaceState.torn``), or ``None`` with ``corner_offsets`` ``None``: nothing torn
            (the attributes are removed).
        corner_offsets: float [corner_count, 3] (``len(mesh.loops)``) [m], object space: each
            corner's particle's displacement minus its vertex's own particle's displacement
            (zero where the vertex is not split and on the vertex's own first fan;
            ``corner_offsets`` below makes it).

        update: tag the mesh for re-evaluation (``Mesh.update``) after a change; ``False`` for
            a caller that writes more and tags it once itself (the frame handler's write-back).

    A mesh in Edit Mode is left alone (its attributes live in the edit mesh until it leaves).

    Raises:
        ValueError: only one of ``torn`` and ``corner_offsets`` is ``None``, or their lengths are
            not the mesh's edge and corner counts.
    """
    mesh = mesh_io.mesh_of(obj)
    if mesh.is_editmode:
        return
    if torn is None or corner_offsets is None:
        if torn is not None or corner_offsets is not None:
            raise ValueError("tear_display.write: torn and corner_offsets are given together or not at all")
        removed = False
        for name in (TORN_ATTRIBUTE, TEAR_OFFSET_ATTRIBUTE):
            attr = mesh.attributes.get(name)
            if attr is not None:
                mesh.attributes.remove(attr)
                removed = True
        if removed and update:
            mesh.update()
        return
    edge_count, corner_count = len(mesh.edges), len(mesh.loops)
    if torn.shape != (edge_count,):
        raise ValueError(f"tear_display.write: torn has shape {torn.shape}, the mesh {edge_count} edges")
    if corner_offsets.shape != (corner_count, 3):
        raise ValueError(f"tear_display.write: corner_offsets has shape {corner_offsets.shape}, "
                         f"the mesh {corner_count} corners")
    _attribute(mesh, TORN_ATTRIBUTE, "BOOLEAN", "EDGE").foreach_set(
        "value", np.ascontiguousarray(torn, dtype=bool))
    _attribute(mesh, TEAR_OFFSET_ATTRIBUTE, "FLOAT_VECTOR", "CORNER").foreach_set(
        "vector", np.ascontiguousarray(corner_offsets, dtype=np.float32).ravel())
    if update:
        mesh.update()


def _attribute(mesh: bpy.types.Mesh, name: str, kind: str, domain: str) -> Any:
    """The data of attribute ``name``, (re)created when missing or of another type or domain."""
    attr = mesh.attributes.get(name)
    if attr is not None and (attr.data_type != kind or attr.domain != domain):
        mesh.attributes.remove(attr)
        attr = None
    if attr is None:
        # (the stubs type ``type``/``domain`` as literals; these are valid values of both)
        attr = mesh.attributes.new(name=name, type=cast(Any, kind), domain=cast(Any, domain))
    return cast(Any, attr).data


def corner_offsets(particle_offsets: np.ndarray, corner_particles: np.ndarray,
                   corner_vertices: np.ndarray) -> np.ndarray:
    """The corners' offsets ``write`` takes, from the particles' displacements.

    Args:
        particle_offsets: float [particle_count, 3] [m], object space: each particle's
            displacement from its vertex's rest position (particle v < vertex_count is vertex v's
            own; ``SplitMesh.positions`` minus the rest of ``SplitMesh.source_vertices``, in
            object space).
        corner_particles: int [corner_count], each corner's particle (``SplitMesh.corner_vertices``).
        corner_vertices: int [corner_count], each corner's mesh vertex (``Mesh.loops``'
            ``vertex_index``).

    Returns:
        float32 [corner_count, 3] [m]: zero on the corners whose particle is their vertex's own.
    """
    offsets = np.asarray(particle_offsets, dtype=np.float64)
    out = offsets[corner_particles] - offsets[corner_vertices]
    out[corner_particles == corner_vertices] = 0.0  # exact zeros on the vertices' own fans
    return out.astype(np.float32)
