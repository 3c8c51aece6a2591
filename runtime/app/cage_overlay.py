"""Show Cage: the cage's springs drawn over the 3D viewport as thin, see-through light-blue lines
(a ``gpu`` draw handler, POST_VIEW, world space), at the positions the simulation last wrote.

The cage object itself stays hidden (``cage_object``): Blender would draw it as an opaque wire in
the theme's colour. The lines are drawn in two passes against the scene's depth: where the mesh's
surface is in front of them they are faint (alpha ``BEHIND_ALPHA``), so the mesh's shading reads
through the dense interior of the cage and the cage's shape still shows; where nothing covers them
(the cage's margin around the mesh, any edge in front) they are stronger (``FRONT_ALPHA``). Lines
do not write depth, so the cage never hides itself or anything drawn after it. Viewports with
overlays turned off draw no cage, as they draw no other overlay.
"""

from __future__ import annotations

from typing import Any, Literal, cast

import bpy
import numpy as np

from ..common import binding_store, mesh_io
from ..cage import cage_object
from . import viewport_draw
from ..common.properties import ROLE_SOURCE, object_settings, show_cage

COLOR = cage_object.CAGE_COLOR[:3]
FRONT_ALPHA = 0.3
BEHIND_ALPHA = 0.07
LINE_WIDTH = 1.0  # pixels
# Both ends of every edge, int32 [2·edges], per cage mesh (session uid) drawn at the last redraw.
# Reading them is the slow part of a redraw (8 ms for a 95k-tet cage, against 1 ms for the
# positions), and a cage's edges change only when it is built again, as a new mesh.
_edge_ends: dict[int, np.ndarray] = {}


def _ends(mesh: bpy.types.Mesh) -> np.ndarray:
    ends = _edge_ends.get(mesh.session_uid)
    if ends is None or len(ends) != 2 * len(mesh.edges):
        ends = np.empty(len(mesh.edges) * 2, dtype=np.int32)
        mesh.edges.foreach_get("vertices", ends)
        _edge_ends[mesh.session_uid] = ends
    return ends


def _shown_cage(obj: bpy.types.Object) -> bpy.types.Object | None:
    """The cage of soft body ``obj`` when its Show Cage is on (only its own cage can be)."""
    s = object_settings(obj)
    cage = s.cage
    if s.role == ROLE_SOURCE and cage is not None and cage.type == "MESH" and s.show_cage:
        return cage
    return None


def _lines(cage: bpy.types.Object) -> np.ndarray:
    """The cage's edges at its simulated positions (its rest plus the ``tetrig_offset`` the
    simulation writes), as line-segment endpoints float32 [2·edges, 3] in world space."""
    mesh = mesh_io.mesh_of(cage)
    positions = mesh_io.vertex_positions(mesh)
    offsets = mesh_io.read_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, np.float32, 3)
    if offsets is not None:
        positions += offsets
    world = cage_object.world_matrix(cage)
    positions = positions @ world[:3, :3].T + world[:3, 3]
    return positions[_ends(mesh)].astype(np.float32)


def segments(context: Any) -> np.ndarray:
    """What to draw: the cages of the visible soft bodies with Show Cage on, as line-segment
    endpoints float32 [k, 3] in world space (``context.visible_objects`` honours local view and
    hidden objects)."""
    cages = [c for o in context.visible_objects if o.type == "MESH" and (c := _shown_cage(o)) is not None]
    parts = [_lines(c) for c in cages]
    for uid in set(_edge_ends) - {mesh_io.mesh_of(c).session_uid for c in cages}:
        del _edge_ends[uid]  # a cage no longer drawn: hidden, rebuilt or deleted
    return np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.float32)


def draw() -> None:
    """Draw the cages (``HANDLER`` calls it at each viewport redraw, never in background mode)."""
    context = bpy.context
    space: Any = context.space_data  # the SpaceView3D being drawn
    if space is not None and not space.overlay.show_overlays:
        return
    points = segments(context)
    if not len(points):
        return
    import gpu
    from gpu_extras.batch import batch_for_shader
    # a polyline shader: anti-aliased lines of a set width (the plain line shader draws aliased
    # 1-pixel lines, jagged at this density)
    shader = gpu.shader.from_builtin("POLYLINE_UNIFORM_COLOR")
    batch = batch_for_shader(shader, "LINES", {"pos": cast(Any, points)})  # (a float32 buffer)
    region: Any = context.region
    shader.bind()
    shader.uniform_float("viewportSize", (region.width, region.height))
    shader.uniform_float("lineWidth", LINE_WIDTH)
    # the state is shared with whatever draws after this handler: put it back as it was
    # (the stubs type the getters' results as str, the setters' arguments as literals)
    blend: Any = gpu.state.blend_get()
    depth_test: Any = gpu.state.depth_test_get()
    depth_mask = gpu.state.depth_mask_get()
    gpu.state.blend_set("ALPHA")
    gpu.state.depth_mask_set(False)
    passes: tuple[tuple[Literal["GREATER", "LESS_EQUAL"], float], ...] = (
        ("GREATER", BEHIND_ALPHA), ("LESS_EQUAL", FRONT_ALPHA))
    for test, alpha in passes:
        gpu.state.depth_test_set(test)
        shader.uniform_float("color", (*COLOR, alpha))
        batch.draw(shader)
    gpu.state.depth_test_set(depth_test)
    gpu.state.depth_mask_set(depth_mask)
    gpu.state.blend_set(blend)


def show_old_wires_as_overlays() -> None:
    """Cages saved shown by an older TetRig are visible wire objects: hide them and show their
    overlay instead (called when a file loads)."""
    for obj in bpy.data.objects:
        if obj.type == "MESH" and object_settings(obj).role == ROLE_SOURCE:
            cage = object_settings(obj).cage
            if cage is not None and not cage.hide_viewport and object_settings(cage).source == obj:
                show_cage(cage, True)


HANDLER = viewport_draw.DrawHandler(draw)
register = HANDLER.register
unregister = HANDLER.unregister
