"""How a torn Surface body is shown: the torn edges and the face corners' extra offsets as mesh
attributes, which the offset node group uses to split the shown mesh.

Interim: this stores and clears the attributes only (the contract of the tear display that
branch surface-tear brings with its node group; that version replaces this file).
"""

from __future__ import annotations

import bpy
import numpy as np

from . import mesh_io

TORN_ATTRIBUTE = "tetrig_torn"
TEAR_OFFSET_ATTRIBUTE = "tetrig_tear_offset"


def write(obj: bpy.types.Object, torn: np.ndarray | None, corner_offsets: np.ndarray | None) -> None:
    """Store the torn edges (bool [edge_count]) and every face corner's extra offset (float32
    [corner_count, 3], object space [m]: the corner's particle minus its vertex's own); ``None``
    removes them (nothing torn)."""
    mesh = mesh_io.mesh_of(obj)
    if torn is None or corner_offsets is None:
        for name in (TORN_ATTRIBUTE, TEAR_OFFSET_ATTRIBUTE):
            mesh_io.remove_attribute(mesh, name)
        return
    attr = mesh.attributes.get(TORN_ATTRIBUTE) or mesh.attributes.new(TORN_ATTRIBUTE, "BOOLEAN", "EDGE")
    attr.data.foreach_set("value", np.ascontiguousarray(torn, dtype=bool))  # type: ignore[attr-defined]
    attr = (mesh.attributes.get(TEAR_OFFSET_ATTRIBUTE)
            or mesh.attributes.new(TEAR_OFFSET_ATTRIBUTE, "FLOAT_VECTOR", "CORNER"))
    attr.data.foreach_set("vector", np.ascontiguousarray(corner_offsets, dtype=np.float32).ravel())  # type: ignore[attr-defined]
