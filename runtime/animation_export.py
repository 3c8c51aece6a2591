"""Exporting the animation a soft body plays: per-frame control points (JSON) and per-frame vertex
positions (a PC2 point cache). Baked frames come from the bake, the others are simulated live
(``bake.playback_control_points``), so a file holds exactly what the viewport shows.
"""

from __future__ import annotations

import os

import bpy
import numpy as np

from ..tetrig_addon import animation_json, pc2
from . import bake, bake_store, binding_store, cage_object, export, mesh_io, simulation, stack
from .properties import object_settings


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
    """Control points per frame in object space (the seed's ``bones_rest`` space)."""
    cps = bake.playback_control_points(obj, scene, depsgraph, frame_start, frame_end)
    return animation_json.AnimationData(frame_start=frame_start, fps=fps(scene), control_points=cps)


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


def vertex_positions(obj: bpy.types.Object, control_points: np.ndarray,
                     frames: list[int] | None = None) -> np.ndarray:
    """Vertex positions TetRig shows for given control points: float32 [F, N, 3] object space.

    Computed as the offset modifier does: ``input + offset`` in float32, with
    ``offset = Σₖ wₖ · (q − q_rest)[iₖ]`` rounded to float32 like the ``tetrig_offset`` attribute,
    so the result matches the modifier's output to float32 rounding. ``input`` is the mesh's own
    (rest) coordinates, or for a posed mesh (``stack``) the input of each of ``frames``, read by
    setting the scene to each frame; its control points at rest are then that frame's pose.

    Args:
        control_points: float [F, Q, 3] object space (as ``bake.playback_control_points``).
        frames: the F frames (needed for a posed mesh).

    Raises:
        simulation.StaleBindingError: the binding or the cage no longer matches.
    """
    simulation.check_binding(obj)
    mesh = binding_store.holder(obj)
    bound = binding_store.load(mesh)
    cage_data = cage_object.read(object_settings(obj).cage)
    if bound is None or cage_data is None:
        raise simulation.StaleBindingError(f"{obj.name}: the binding is stale; press Build Cage again.")
    indices, weights = bound
    rest_cps = cage_data[0]
    inputs = None
    if stack.posed(obj):
        if frames is None:
            raise ValueError("a posed mesh's positions need their frames")
        try:
            inputs = stack.inputs_over(obj, frames, indices.shape[0])
        except stack.InputError as exc:
            raise simulation.StaleBindingError(str(exc)) from exc
    co = mesh_io.vertex_positions(mesh).astype(np.float32)
    out = np.empty((control_points.shape[0], indices.shape[0], 3), dtype=np.float32)
    for f in range(control_points.shape[0]):
        disp = np.asarray(control_points[f], dtype=np.float64) - rest_cps
        offsets = np.einsum("vk,vkj->vj", weights, disp[indices]).astype(np.float32)
        out[f] = (co if inputs is None else inputs[f].astype(np.float32)) + offsets
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
    cps = bake.playback_control_points(obj, scene, depsgraph, frame_start, frame_end)
    positions = vertex_positions(obj, cps, list(range(frame_start, frame_end + 1)))
    pc2.write(target, positions, start_frame=frame_start, sample_rate=1.0)
    return int(positions.shape[1])
