"""Soft bodies as colliders of jiggle rigs (issue 21): which soft bodies a rig sees, and each one's
shown surface at any frame, read from its own frames (``common/soft_surfaces`` says why).

**Who sees whom.** A rig with *Colliders* on and a bone with a *Collision Radius* sees the soft
bodies (cage and Surface bodies) of its own scene that touch other bodies: *Soft Bodies* on, and,
when the body has a *Collision Collection*, only if the armature is in that collection (the rule
soft bodies keep among themselves, ``common/touching``). A body with Soft Bodies off passes
through chains as it passes through other soft bodies. One-way: the chains stay out, the soft
body does not feel them.

**Which frame.** The surface at frame F is what the body shows at F: its bake where it has that
frame, else its simulated state (its frame cache, stepped to F if it was not yet: ``cage/kind``
``state_at``), blended to the mesh's vertices (``Σ wₖ · control point``, before the quality pass,
which only straightens badly shaped triangles). A Surface body's is its particles and its faces,
split where it tore (``SurfaceBody.split_mesh``); an open one (a sheet) is one-sided, as any mesh
collider: the side its face normals point to is outside (``colliders.distance``). The scene driver
steps the rigs after the soft bodies, so in playback the frames are already in the cache; a rig's
bake steps them as it goes.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import bpy
import numpy as np

from ..tetrig_addon.colliders import clipped
from .cage import kind as cage_kind
from .cage.kind import KIND as CAGE
from .common import bake_store, frames, scene_inputs, soft_surfaces, touching
from .common.animation import recorded_rest_matrix
from .common.properties import object_settings
from .surface import bake_frames as surface_frames
from .surface import kind as surface_kind
from .surface.kind import KIND as SURFACE

# A soft body's triangles are taken to be at most this many times as long as at rest (the bound
# ``clipped.around`` needs): a longer triangle crossing a tail's region with no corner near it is
# missed.
EDGE_STRETCH = 2.0
# (model, longest rest edge [m]) per soft body (its session uid): measured once per model.
_edges: dict[int, tuple[Any, float]] = {}


def touches(obj: bpy.types.Object, rig: bpy.types.Object) -> bool:
    """Whether the soft body ``obj`` touches the rig ``rig`` (the module docstring)."""
    s = object_settings(obj)
    if not s.use_soft_bodies:
        return False
    collection = s.soft_body_collection
    return collection is None or collection.all_objects.get(rig.name) == rig


def find(scene: bpy.types.Scene, rig: bpy.types.Object,
         depsgraph: bpy.types.Depsgraph | None) -> list[soft_surfaces.Seen]:
    """The soft bodies of ``scene`` the rig sees (``soft_surfaces.Finder``), in name order; one that
    cannot be simulated now is left out. Without a depsgraph (a bake's status): those with a
    model already, their keys only (their surfaces are ``None``)."""
    found = []
    bodies = [(obj, CAGE, surface) for obj in CAGE.objects(scene)] + [
        (obj, SURFACE, surface_body) for obj in SURFACE.objects(scene)]
    for obj, kind, shown in sorted(bodies, key=lambda b: b[0].name_full):
        if kind.editing(obj) or not touches(obj, rig):
            continue
        slot = frames.slot(obj, kind.name)
        try:
            prepared = frames.prepare(kind, slot, obj, scene, depsgraph) if depsgraph is not None else slot.prepared
            if prepared is None or not _has_faces(prepared):  # no model yet, or a points object: no surface
                continue
            key = kind.fingerprint(obj, scene, recorded_rest_matrix(obj))
            partners = touching.partners(obj, touching.candidates(scene))
            session = (kind.motion_key(obj, scene, prepared), slot.version,
                       tuple(getattr(frames.find(o), "version", -1) for o in partners))
        except kind.errors:
            continue
        found.append(soft_surfaces.Seen(obj.name_full, key, session, partial(shown, obj, scene, depsgraph)
                                        if depsgraph is not None else _nothing))
    return found


def _has_faces(prepared: Any) -> bool:
    """Whether a prepared body shows a surface: a cage body's mesh has triangles (not a points
    object), a Surface body's mesh has faces."""
    body = getattr(prepared, "body", None)
    if body is not None:  # a Surface body (``SurfacePrepared``)
        return bool(body.mesh.triangles.shape[0])
    return prepared.triangles is not None


def _nothing(frame: int) -> None:
    return None


def surface(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
            frame: int) -> soft_surfaces.SoftSurface | None:
    """What the cage soft body ``obj`` shows at ``frame`` (the module docstring), or ``None`` when it
    cannot be simulated now."""
    slot = frames.slot(obj, CAGE.name)
    try:
        prepared = frames.prepare(CAGE, slot, obj, scene, depsgraph)
        baked = bake_store.baked_displacements(obj, frame)
        points = _baked(obj, scene, slot, prepared, baked, frame) if baked is not None else _live(
            obj, scene, slot, prepared, frame, depsgraph)
    except CAGE.errors:
        return None
    return soft_surfaces.SoftSurface(points.min(axis=0), points.max(axis=0),
                                     partial(_collider, obj, prepared, points))


def _live(obj: bpy.types.Object, scene: bpy.types.Scene, slot: frames.Slot, prepared: Any, frame: int,
          depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """The control points the body shows at ``frame`` simulated: float64 [Q, 3] [m], world space;
    straight from its frame cache when it steps alone and has the frame."""
    cache = slot.cache
    frame = max(frame, scene.frame_start)
    if (slot.shared is None and cache is not None and frame in cache.cached_frames()
            and cache.key == (*CAGE.motion_key(obj, scene, prepared), slot.version)
            and not touching.partners(obj, touching.candidates(scene))):
        return cache.state_at(frame, _never).shown()
    return cage_kind.state_at(obj, scene, frame, depsgraph)[1].shown()


def _never(state: Any, frame: int) -> Any:
    raise AssertionError("a cached frame needs no step")


def _baked(obj: bpy.types.Object, scene: bpy.types.Scene, slot: frames.Slot, prepared: Any,
           displacements: np.ndarray, frame: int) -> np.ndarray:
    """A baked frame's control points (``displacements`` float [Q, 3], object space, from where
    they rest in that frame): float64 [Q, 3] [m], world space (``model.local_displacements``
    undone; a body that follows its animation, at that frame's world matrix and pose)."""
    unit = prepared.unit_scale
    if not prepared.follows:
        return prepared.model.rest_positions + unit * (np.asarray(displacements, dtype=np.float64)
                                                       @ prepared.world[:3, :3].T)
    inputs = _inputs(obj, scene, slot, prepared, frame, CAGE)
    rest = prepared.rest_local if inputs.posed is None else inputs.posed
    world = inputs.world
    return ((displacements + rest) @ world[:3, :3].T + world[:3, 3]) * unit


def _collider(obj: bpy.types.Object, prepared: Any, points: np.ndarray) -> clipped.ClippedSurface:
    """The shown mesh of control points ``points`` [Q, 3] [m] as a clipped collider (its
    triangles counterclockwise seen from outside, ``model.surface_triangles``)."""
    vertices = np.einsum("nk,nkj->nj", prepared.weights, points[prepared.indices])
    return clipped.clipped_surface(vertices, prepared.triangles, EDGE_STRETCH * _rest_edge(obj, prepared))


def surface_body(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                 frame: int) -> soft_surfaces.SoftSurface | None:
    """What the Surface body ``obj`` shows at ``frame`` (the module docstring), or ``None`` when it
    cannot be simulated now."""
    slot = frames.slot(obj, SURFACE.name)
    try:
        prepared = frames.prepare(SURFACE, slot, obj, scene, depsgraph)
        baked = surface_frames.baked_frame(obj, frame)
        if baked is not None:
            points, triangles = _surface_baked(obj, scene, slot, prepared, baked, frame)
        else:
            _, state, _ = surface_kind.state_at(obj, scene, max(frame, scene.frame_start), depsgraph)
            split = prepared.body.split_mesh(state)
            points, triangles = split.positions, split.corner_vertices[prepared.body.mesh.triangles]
    except SURFACE.errors:
        return None
    if prepared.body.mesh.closure.inward:  # the collider's triangles face out of a closed surface
        triangles = triangles[:, ::-1]
    edge = EDGE_STRETCH * _rest_edge(obj, prepared)
    return soft_surfaces.SoftSurface(points.min(axis=0), points.max(axis=0),
                                     partial(clipped.clipped_surface, points, triangles.astype(np.int32), edge))


def _surface_baked(obj: bpy.types.Object, scene: bpy.types.Scene, slot: frames.Slot, prepared: Any,
                   baked: Any, frame: int) -> tuple[np.ndarray, np.ndarray]:
    """A Surface body's baked frame (``bake_frames.SurfaceFrame``: object-space displacements, and
    the tear with its corners' offsets) as (vertices float64 [P, 3] [m] world space, triangles
    int [T, 3] on them): a torn frame's split vertices at their corners' positions."""
    world, rest = prepared.world, prepared.rest_local
    if prepared.follows:
        inputs = _inputs(obj, scene, slot, prepared, frame, SURFACE)
        world, rest = inputs.world, (rest if inputs.posed is None else inputs.posed)
    unit = prepared.unit_scale
    local = rest + np.asarray(baked.displacements, dtype=np.float64)
    vertices = (local @ world[:3, :3].T + world[:3, 3]) * unit
    corners = prepared.body.mesh.triangles
    if baked.torn is None or not baked.torn.any() or baked.corner_offsets is None:
        return vertices, prepared.corner_vertices[corners]
    current = prepared.body.model_for(baked.torn)
    split = np.empty((current.particle_vertices.shape[0], 3))
    split[:vertices.shape[0]] = vertices
    at_corners = local[prepared.corner_vertices] + baked.corner_offsets
    split[current.corner_particles] = (at_corners @ world[:3, :3].T + world[:3, 3]) * unit
    return split, current.corner_particles[corners]


def _inputs(obj: bpy.types.Object, scene: bpy.types.Scene, slot: frames.Slot, prepared: Any, frame: int,
            kind: Any) -> scene_inputs.FrameInputs:
    """A baked frame's scene inputs (world matrix, pose), sampled when the driver showed the frame
    without reading them."""
    try:
        return frames.inputs(kind, slot, obj, scene, prepared, frame)
    except scene_inputs.InputsUnavailable:
        frames.sample(scene, [(kind, slot, obj, prepared, [frame])])
        return frames.inputs(kind, slot, obj, scene, prepared, frame)


def _rest_edge(obj: bpy.types.Object, prepared: Any) -> float:
    """The longest edge [m] of the body's mesh at rest (measured once per model)."""
    surface = getattr(prepared, "body", None)  # a Surface body's, or a cage body's model
    model = surface if surface is not None else prepared.model
    known = _edges.get(obj.session_uid)
    if known is not None and known[0] is model:
        return known[1]
    if surface is not None:
        rest, triangles = surface.rest_positions, prepared.corner_vertices[surface.mesh.triangles]
    else:
        rest = np.einsum("nk,nkj->nj", prepared.weights, prepared.model.rest_positions[prepared.indices])
        triangles = prepared.triangles
    corners = rest[triangles]
    edge = float(np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2).max())
    _edges[obj.session_uid] = (model, edge)
    return edge


def register() -> None:
    soft_surfaces.register(find)


def unregister() -> None:
    soft_surfaces.register(None)
    _edges.clear()
