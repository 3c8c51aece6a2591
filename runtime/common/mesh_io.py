"""Arrays in and out of Blender meshes, moved once with ``foreach_get``/``foreach_set``."""

from __future__ import annotations

from typing import Any, Literal, cast

import bpy
import numpy as np


def mesh_of(obj: bpy.types.Object) -> bpy.types.Mesh:
    """The mesh data of a mesh object (callers check ``obj.type == "MESH"``)."""
    return cast(bpy.types.Mesh, obj.data)


def vertex_positions(mesh: bpy.types.Mesh) -> np.ndarray:
    """Rest vertex positions (the mesh's own coordinates, object space).

    Returns:
        float64 [vertex_count, 3] [m].
    """
    return positions_float32(mesh).reshape(-1, 3).astype(np.float64)


def positions_float32(mesh: bpy.types.Mesh) -> np.ndarray:
    """The mesh's own vertex positions as stored: float32 [vertex_count * 3] [m], object space.

    Read from the ``position`` attribute, whose ``foreach_get`` copies the array at once (0.01 ms
    for the 35k-vertex bunny, against 1 ms through ``vertices``' ``co``, which the per-frame
    binding check paid); through ``vertices`` in Edit Mode, where the attribute is not there."""
    count = len(mesh.vertices)
    co = np.empty(count * 3, dtype=np.float32)
    attr = None if mesh.is_editmode else mesh.attributes.get("position")
    if attr is not None and attr.data_type == "FLOAT_VECTOR" and len(_data(attr)) == count:
        _data(attr).foreach_get("vector", co)
    else:
        mesh.vertices.foreach_get("co", co)
    return co


def polygon_corners(mesh: bpy.types.Mesh) -> np.ndarray:
    """Vertex index of every face corner in order; int32 [corner_count]."""
    corners = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    return corners


def polygon_sizes(mesh: bpy.types.Mesh) -> np.ndarray:
    """Corners of every face, in face order (the corners of ``polygon_corners`` run face after
    face); int32 [face_count]."""
    sizes = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    return sizes


def edge_vertices(mesh: bpy.types.Mesh) -> np.ndarray:
    """The two vertices of every edge; int32 [edge_count, 2]."""
    ends = np.empty(len(mesh.edges) * 2, dtype=np.int32)
    mesh.edges.foreach_get("vertices", ends)
    return ends.reshape(-1, 2)


def read_attribute(mesh: bpy.types.Mesh, name: str, dtype: type, width: int = 1) -> np.ndarray | None:
    """A POINT-domain attribute as an array [vertex_count] or [vertex_count, width], or ``None``."""
    attr = mesh.attributes.get(name)
    if attr is None or attr.domain != "POINT" or len(_data(attr)) != len(mesh.vertices):
        return None
    key = "vector" if width == 3 else "value"
    out = np.empty(len(mesh.vertices) * width, dtype=dtype)
    _data(attr).foreach_get(key, out)
    return out.reshape(-1, width) if width > 1 else out


AttributeKind = Literal["INT", "FLOAT", "FLOAT_VECTOR"]


def _data(attr: bpy.types.Attribute) -> Any:
    """``attr.data`` (each attribute subtype has it; the stubs' base class does not)."""
    return cast(Any, attr).data


def write_attribute(mesh: bpy.types.Mesh, name: str, kind: AttributeKind, values: np.ndarray) -> None:
    """Create or overwrite a POINT-domain attribute.

    Args:
        mesh: target mesh.
        name: attribute name.
        kind: Blender attribute type, ``"INT"``, ``"FLOAT"`` or ``"FLOAT_VECTOR"``.
        values: [vertex_count] or [vertex_count, 3]; cast to the attribute's storage type.
    """
    attr = mesh.attributes.get(name)
    if attr is not None and (attr.data_type != kind or attr.domain != "POINT"):
        mesh.attributes.remove(attr)
        attr = None
    if attr is None:
        attr = mesh.attributes.new(name=name, type=kind, domain="POINT")
    key = "vector" if kind == "FLOAT_VECTOR" else "value"
    dtype = np.int32 if kind == "INT" else np.float32
    _data(attr).foreach_set(key, np.ascontiguousarray(values, dtype=dtype).ravel())


def remove_attribute(mesh: bpy.types.Mesh, name: str) -> None:
    """Remove an attribute if present."""
    attr = mesh.attributes.get(name)
    if attr is not None:
        mesh.attributes.remove(attr)


def vertex_group_weights(obj: bpy.types.Object, group_name: str) -> np.ndarray | None:
    """Weights of one vertex group per vertex (0 where unassigned); float64 [vertex_count] or None.

    Vertex groups have no ``foreach_get`` for membership, so this walks the vertices' group lists
    once; it runs when the model is (re)built, never per frame.
    """
    group = obj.vertex_groups.get(group_name)
    if group is None:
        return None
    gi = group.index
    mesh = mesh_of(obj)
    out = np.zeros(len(mesh.vertices))
    for v in mesh.vertices:
        for g in v.groups:
            if g.group == gi:
                out[v.index] = g.weight
                break
    return out


def triangles(mesh: bpy.types.Mesh) -> np.ndarray:
    """The faces as triangles (Blender's own triangulation): int32 [triangle_count, 3] vertex
    indices, wound as the faces are."""
    mesh.calc_loop_triangles()
    out = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", out)
    return out.reshape(-1, 3)
