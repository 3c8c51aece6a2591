"""A cage soft body's model in the Blender layer: built once from its cage, binding and settings
(``prepare``), reused while everything it is built from holds (its key), and the checks that tell
a binding gone stale (an edited mesh, a deleted or edited cage).

Units: the engine works in metres, world space; Blender lengths × the scene's unit scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np

from ...tetrig_addon import solver
from ...tetrig_addon.cage import blend, blend_matrix, control_point_goal_weights, pinned_control_points, posing
from ..common import binding_store, edits, mesh_io, stack
from ..common.animation import frame_dt
from ..common.properties import is_surface, object_settings, plastic_settings
from ..common.soft_body import (PIN_THRESHOLD, StaleBindingError, follows_animation, goal_key,
                                input_group_weights, self_collision, sim_settings, vertex_goal_weights)
from . import cage_object, quality_pass


@dataclass
class Prepared:
    """What the per-frame path needs for one object, built once per model key."""

    key: tuple
    model: solver.Model
    indices: np.ndarray  # int32 [N, 4]
    weights: np.ndarray  # float64 [N, 4], summing to 1
    blend: Any  # scipy.sparse.csr_matrix [N, Q]: offsets = blend @ displacements
    world: np.ndarray  # float64 [4, 4], the start-frame world matrix the body rests in
    world_to_local: np.ndarray  # float64 [3, 3], linear part of the inverse world matrix
    unit_scale: float  # metres per Blender unit
    rest_local: np.ndarray  # float64 [Q, 3], control points at rest in object space
    follows: bool  # goals or pins follow the object's animated world matrix, frame by frame
    # A posed mesh (``stack``): how its control points follow the input (else None), and whether
    # the input can change from frame to frame.
    follow: posing.Follow | None = None
    input_animated: bool = False
    # bool [N]: pinned vertices and those of goal weight 1, which the quality pass leaves alone
    fixed: np.ndarray | None = None
    surface: quality_pass.SurfacePass | None = None  # the quality pass's plan, built at its first use
    # int32 [T, 3] or None: the bound mesh's triangles as indices into its vertices (the model's
    # contact points), counterclockwise seen from outside in world space; what touching bodies touch
    triangles: np.ndarray | None = None


def model_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray, fresh: bool = False) -> tuple:
    """What the model is built from: a new model when any of it changes. ``fresh``: digest the rest
    shape again (``edits.rest_fingerprint``) rather than trust the last digest."""
    s = object_settings(obj)
    cage = s.cage
    return (s.bind_id, world.round(12).tobytes(), s.density, s.pin_group, goal_key(obj),
            scene.unit_settings.scale_length, len(mesh_io.mesh_of(obj).vertices), follows_animation(obj),
            edits.rest_fingerprint(obj, fresh), stack.posed(obj), stack.input_animated(obj),
            cage.session_uid if cage is not None else None)  # last: motion_key leaves it out


def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray, fresh: bool = False) -> tuple:
    """Everything the motion of ``obj`` depends on, as saved in the .blend: the model's key (without
    the cage's session id, which only names this session's data), the settings, the frame duration
    and the start frame. A bake stores its fingerprint to tell when it is outdated, also after the
    file is reopened; the frame cache is keyed by the same (``kind.CageKind.motion_key``).

    Args:
        world: float64 [4, 4], the object's world matrix (see ``animation.rest_world_matrix``).
        fresh: digest the rest shape again (bakes and exports).
    """
    return (model_key(obj, scene, world, fresh)[:-1] + (sim_settings(obj, scene), frame_dt(scene), scene.frame_start)
            + optional_settings(obj, scene, stack.posed(obj)))


def optional_settings(obj: bpy.types.Object, scene: bpy.types.Scene, posed: bool) -> tuple:
    """The settings a cage's motion depends on only when they are on, each only then (so the bakes
    made before they existed stay current): plasticity (not on a ``posed`` cage: its rest shape is
    the pose of each frame, ``solver.with_rest``, which crept rest data would replace), then
    self-collision."""
    plastic = None if posed else plastic_settings(obj)
    own = self_collision(obj, scene)
    return (*((plastic,) if plastic else ()), *((own,) if own else ()))


def binding_problem(obj: bpy.types.Object) -> str:
    """``check_binding``'s message, or '' when the binding matches the mesh (for the panel)."""
    try:
        check_binding(obj)
    except StaleBindingError as exc:
        return str(exc)
    return ""


def check_binding(obj: bpy.types.Object, fresh: bool = False) -> None:
    """Raise ``StaleBindingError`` when the mesh changed since it was bound: its vertex positions
    (an edit, an applied transform), vertex count or shape keys (``binding_store.rest_fingerprint``;
    ``fresh``: digested again now), or the vertex count of TetRig's input."""
    s = object_settings(obj)
    if s.rest_fingerprint and edits.rest_fingerprint(obj, fresh) != s.rest_fingerprint:
        raise StaleBindingError(f"{obj.name}: the mesh changed since binding; press Rebind (it keeps "
                                "the settings).")
    count = len(binding_store.holder(obj).vertices)
    if s.points is None and count != s.bound_vertex_count:
        raise StaleBindingError(f"{obj.name}: the mesh changed since binding ({s.bound_vertex_count} → "
                                f"{count} vertices); press Rebind (it keeps the settings).")


def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray,
            cached: Prepared | None = None) -> Prepared:
    """The simulation model of a bound object: ``cached`` while its key holds, else built anew.

    Args:
        world: float64 [4, 4], the object's world matrix (see ``animation.rest_world_matrix``).

    Raises:
        StaleBindingError: the cage is gone or edited, or the mesh changed since binding.
    """
    key = model_key(obj, scene, world)
    if cached is not None and cached.key == key:
        return cached
    if is_surface(obj):  # the cage-only paths (exports of control points) have nothing to read
        raise StaleBindingError(f"{obj.name} is a Surface body: it has no cage or control points.")
    cage = object_settings(obj).cage
    if cage is None or cage.type != "MESH":
        raise StaleBindingError(f"{obj.name}: its cage object is gone; press Build Cage again.")
    owner = object_settings(cage).source
    if owner != obj:
        raise StaleBindingError(
            f"{obj.name} is a copy of {owner.name if owner else 'another soft body'} and shares its "
            "cage; press Build Cage to give it its own.")
    cage_data = cage_object.read(cage)
    if cage_data is None:
        raise StaleBindingError(f"{obj.name}: its cage mesh was edited; press Build Cage again.")
    rest_local, tets = cage_data
    check_binding(obj)
    bound = binding_store.load(binding_store.holder(obj))
    if bound is None or len(bound[0]) != object_settings(obj).bound_vertex_count:
        raise StaleBindingError(f"{obj.name}: the mesh changed since binding; press Rebind (it keeps the "
                                "settings).")
    indices, weights = bound
    if indices.max(initial=0) >= rest_local.shape[0] or tets.max(initial=0) >= rest_local.shape[0]:
        raise StaleBindingError(f"{obj.name}: the binding does not match its cage; press Build Cage again.")
    unit_scale = scene.unit_settings.scale_length
    rest_world = (rest_local @ world[:3, :3].T + world[:3, 3]) * unit_scale
    pinned = None
    fixed = np.zeros(indices.shape[0], dtype=bool)
    if object_settings(obj).pin_group:
        group_weights = input_group_weights(obj, object_settings(obj).pin_group)
        if group_weights is not None:
            fixed = group_weights >= PIN_THRESHOLD
            pinned = pinned_control_points(indices, weights, fixed, rest_local.shape[0])
    goal = vertex_goal_weights(obj)
    if goal is not None:
        fixed |= goal >= 1.0  # as control_point_goal_weights: these follow their goal exactly
    goal_weights = None if goal is None else control_point_goal_weights(indices, weights, goal, rest_local.shape[0])
    # every mesh vertex is a contact point: the mesh, not the cage, touches the ground
    model = solver.build_model(rest_world, tets, density=object_settings(obj).density, pinned=pinned,
                               contacts=(indices, weights), goal_weights=goal_weights)
    posed = stack.posed(obj)
    # the input at binding is the blend of the cage at rest (exact: the weights reconstruct it)
    follow = posing.follow(blend(rest_local, indices, weights), rest_local) if posed else None
    return Prepared(key=key, model=model, indices=indices, weights=weights,
                    blend=blend_matrix(indices, weights, rest_local.shape[0]), world=world,
                    world_to_local=np.linalg.inv(world[:3, :3]), unit_scale=unit_scale,
                    rest_local=rest_local, follows=follows_animation(obj) or posed, follow=follow,
                    input_animated=posed and stack.input_animated(obj), fixed=fixed,
                    triangles=surface_triangles(binding_store.holder(obj), indices.shape[0], world))


def surface_triangles(holder: bpy.types.Mesh, count: int, world: np.ndarray) -> np.ndarray | None:
    """The faces of the mesh holding a binding as triangles (Blender's triangulation), int32 [T, 3]
    indices into its ``count`` bound vertices, counterclockwise seen from outside in world space
    (a mirrored world matrix [4, 4] turns them); ``None`` when it has no faces (a points object)."""
    if len(holder.vertices) != count or not len(holder.polygons):
        return None
    tris = mesh_io.triangles(holder)
    if np.linalg.det(world[:3, :3]) < 0.0:
        tris = tris[:, ::-1]
    return np.ascontiguousarray(tris, dtype=np.int32)


def goal_positions(prepared: Prepared, world: np.ndarray) -> np.ndarray:
    """The control points' rest positions carried by the world matrix ``world`` [4, 4]:
    float64 [Q, 3] [m], where their goals are."""
    return (prepared.rest_local @ world[:3, :3].T + world[:3, 3]) * prepared.unit_scale


def local_displacements(prepared: Prepared, positions: np.ndarray,
                        world: np.ndarray | None = None, rest: np.ndarray | None = None) -> np.ndarray:
    """Control-point displacements from rest in the object's local space: float64 [Q, 3].

    Args:
        world: float64 [4, 4], the object's world matrix at that frame when the soft body follows
            its animation; ``None`` for the start-frame pose it simulates in otherwise.
        rest: float64 [Q, 3], object space: a posed mesh's control points at rest in that frame
            (``FrameInputs.posed``); default the cage's rest.
    """
    if world is None:
        disp_world = (positions - prepared.model.rest_positions) / prepared.unit_scale
        return disp_world @ prepared.world_to_local.T
    local = (positions / prepared.unit_scale - world[:3, 3]) @ np.linalg.inv(world[:3, :3]).T
    return local - (prepared.rest_local if rest is None else rest)
