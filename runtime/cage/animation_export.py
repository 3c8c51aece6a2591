"""Exporting the animation a soft body plays: per-frame control points (JSON) and per-frame vertex
positions (a PC2 point cache). Baked frames come from the bake, the others are simulated live
(``playback_control_points``), so a file holds exactly what the viewport shows: the PC2
positions have the quality pass applied (``quality_pass.vertex_offsets``, as the viewport), the
animation JSON carries the pass's settings and the mesh's edges for its readers.
"""

from __future__ import annotations

import os

import bpy
import numpy as np

from ...tetrig_addon.formats import animation_json, pc2
from ..common import bake_store, binding_store, frames, mesh_io, stack
from ..common.soft_body import StaleBindingError
from . import export, model, quality_pass
from .kind import KIND
from .model import Prepared


def prepared(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> Prepared:
    """The cage body's model, its binding checked afresh (an export writes what it binds).

    Raises:
        StaleBindingError: the binding or the cage no longer matches.
    """
    model.check_binding(obj, fresh=True)
    return KIND.prepare(obj, scene, depsgraph, frames.slot(obj, KIND.name))


def playback_control_points(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                            frame_start: int, frame_end: int) -> np.ndarray:
    """The control points playback shows over a frame range: baked frames from the bake, the others
    simulated live (as the scene driver does).

    Returns:
        float64 [frame_count, Q, 3], object space.

    Raises:
        StaleBindingError, ValueError: as live playback.
    """
    rest_local = prepared(obj, scene, depsgraph).rest_local
    out = np.empty((frame_end - frame_start + 1, rest_local.shape[0], 3))
    for i, frame in enumerate(range(frame_start, frame_end + 1)):
        baked = bake_store.baked_displacements(obj, frame)
        if baked is None:
            baked = KIND.bake_frame(obj, scene, frame, depsgraph)[0]
        out[i] = rest_local + baked
    return out


def frame_range(scene: bpy.types.Scene, obj: bpy.types.Object) -> tuple[int, int]:
    """The frames an export covers: the bake's when there is one, else the scene's."""
    header = bake_store.source_bake(obj)
    if header is not None:
        return header.frame_start, header.frame_end
    return scene.frame_start, scene.frame_end


def fps(scene: bpy.types.Scene) -> float:
    return scene.render.fps / scene.render.fps_base


def animation_data(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                   frame_start: int, frame_end: int) -> animation_json.AnimationData:
    """Control points per frame in object space (the seed's ``bones_rest`` space), and the quality
    pass they are shown with when it is on (its settings, the mesh's edges, open border and fixed
    vertices: what a reader needs to repeat it, ``animation_json.vertex_positions``)."""
    cps = playback_control_points(obj, scene, depsgraph, frame_start, frame_end)
    chosen = quality_pass.settings(obj)
    block = None
    if chosen is not None:
        repair = quality_pass.surface(obj, prepared(obj, scene, depsgraph))
        block = animation_json.QualityBlock(chosen, repair.edges, np.flatnonzero(repair.boundary),
                                            np.flatnonzero(repair.fixed))
    return animation_json.AnimationData(frame_start=frame_start, fps=fps(scene), control_points=cps,
                                        quality=block)


def write_animation_json(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                         path: str | os.PathLike, frame_start: int, frame_end: int) -> animation_json.AnimationData:
    """Write the animation JSON of ``obj`` to ``path``; returns what was written.

    Raises:
        export.ExportError: the path cannot be written (checked before any frame is simulated).
    """
    target = export.output_path(path)
    data = animation_data(obj, scene, depsgraph, frame_start, frame_end)
    animation_json.write(target, data)
    return data


def vertex_positions(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                     control_points: np.ndarray, frames: list[int] | None = None) -> np.ndarray:
    """Vertex positions TetRig shows for given control points: float32 [F, N, 3] object space.

    Computed as the offset modifier shows them: ``input + offset`` in float32, with the offsets of
    ``quality_pass.vertex_offsets`` (the seed's blend ``Σₖ wₖ · (q − q_rest)[iₖ]``, then the quality
    pass when it is on) rounded to float32 like the ``tetrig_offset`` attribute, so the result
    matches the modifier's output to float32 rounding. ``input`` is the mesh's own (rest)
    coordinates, or for a posed mesh (``stack``) the input of each of ``frames``, read by setting
    the scene to each frame; its control points at rest are then that frame's pose, and the
    quality pass keeps that frame's edge lengths.

    Args:
        control_points: float [F, Q, 3] object space (as ``playback_control_points``).
        frames: the F frames (needed for a posed mesh).

    Raises:
        StaleBindingError: the binding or the cage no longer matches.
        ValueError: a posed mesh without ``frames``.
    """
    body = prepared(obj, scene, depsgraph)
    count = body.indices.shape[0]
    inputs = None
    if stack.posed(obj):
        if frames is None:
            raise ValueError("a posed mesh's positions need their frames")
        try:
            inputs = stack.inputs_over(obj, frames, count)
        except stack.InputError as exc:
            raise StaleBindingError(str(exc)) from exc
    co = mesh_io.vertex_positions(binding_store.holder(obj))
    out = np.empty((control_points.shape[0], count, 3), dtype=np.float32)
    for f in range(control_points.shape[0]):
        disp = np.asarray(control_points[f], dtype=np.float64) - body.rest_local
        base = co if inputs is None else inputs[f]
        offsets = quality_pass.vertex_offsets(obj, body, disp, None if inputs is None else inputs[f])
        out[f] = base.astype(np.float32) + offsets.astype(np.float32)
    return out


def write_pc2(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
              path: str | os.PathLike, frame_start: int, frame_end: int) -> int:
    """Write the soft body's vertex positions per frame as a PC2 file; returns the vertex count.

    In Blender, load it with a Mesh Cache modifier (format PC2, Frame Start = ``frame_start``) in
    place of the TetRig modifier.

    Raises:
        export.ExportError: the path cannot be written (checked before any frame is simulated).
    """
    target = export.output_path(path)
    cps = playback_control_points(obj, scene, depsgraph, frame_start, frame_end)
    positions = vertex_positions(obj, scene, depsgraph, cps, list(range(frame_start, frame_end + 1)))
    pc2.write(target, positions, start_frame=frame_start, sample_rate=1.0)
    return int(positions.shape[1])
