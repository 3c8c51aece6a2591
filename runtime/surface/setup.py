"""Set Up Surface Body: the mesh's own vertices become the particles, shown through the offset
modifier; the settings are kept. It raises ``TetRigInputError`` with a user-facing message and
changes nothing when it refuses."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import bpy
import numpy as np

from ...tetrig_addon.errors import TetRigInputError
from ..common import binding_store, edits, frames, mesh_io, offset_modifier, stack, versioning
from ..common.properties import BODY_SURFACE, ROLE_SOURCE, object_settings, plastic_settings
from ..common.rig import check_source, remove
from ..common.soft_body import StaleBindingError
from . import kind


@dataclass(frozen=True)
class SurfaceReport:
    """What Set Up Surface Body made, for the operator's report and the batch summary."""

    vertex_count: int
    edge_count: int
    face_count: int
    closed: bool  # the surface encloses a volume (pressure can work)
    seconds: float

    def message(self, name: str) -> str:
        kind = "closed" if self.closed else "open (no pressure)"
        return (f"{name}: Surface body, {self.vertex_count} vertices, {self.edge_count} edges, "
                f"{self.face_count} faces, {kind} ({self.seconds * 1000:.0f} ms)")


def setup_surface(obj: bpy.types.Object) -> SurfaceReport:
    """Make ``obj`` a Surface body: its own vertices are the particles (replacing any cage),
    shown through the offset modifier; the settings are kept. The engine builds the body and
    checks it with the object's material first (``SurfaceBody.check``: pressure needs a closed
    mesh), so a refusal changes nothing.

    Raises:
        TetRigInputError: the object cannot be a Surface body (see ``check_source``; no faces,
            loose vertices, pressure on an open mesh, a missing goal group, modifiers before
            TetRig that make new vertices); the message says what to do.
    """
    check_source(obj)
    t0 = time.perf_counter()
    settings = object_settings(obj)
    if stack.posed(obj) and not stack.own_vertices(obj):
        raise TetRigInputError(f"{obj.name}: modifiers before TetRig make new vertices (Mirror, Array); a "
                               "Surface body simulates the mesh's own vertices: apply them first.")
    world = np.array(obj.matrix_world, dtype=np.float64)
    try:
        body = kind.build(obj, world, 1.0)
    except StaleBindingError as exc:  # a goal group that does not exist
        raise TetRigInputError(str(exc)) from exc
    body.check(kind.material(obj))
    kind.tear_settings(obj)  # settings out of range raise here, before anything changes
    plastic_settings(obj)
    position = stack.tetrig_index(obj)
    if position is None:
        position = stack.insert_index(obj)
    remove(obj)
    mesh = mesh_io.mesh_of(obj)
    mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", np.zeros((len(mesh.vertices), 3)))
    offset_modifier.ensure(obj, position)
    settings.role = ROLE_SOURCE
    settings.body_type = BODY_SURFACE
    versioning.stamp(obj)  # its unset settings read today's defaults (``versioning``)
    settings.surface_bound = True
    settings.bind_id = uuid.uuid4().hex
    settings.rest_fingerprint = edits.rest_fingerprint(obj, fresh=True)
    settings.has_rest_matrix = False  # the next evaluation records the pose
    settings.bound_vertex_count = len(mesh.vertices)
    frames.free(obj)
    return SurfaceReport(len(mesh.vertices), len(mesh.edges), len(mesh.polygons), body.mesh.closure.closed,
                         time.perf_counter() - t0)
