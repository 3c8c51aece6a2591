"""What cage soft bodies and Surface bodies share in the Blender layer: their step settings in SI
units, their pins and goals read from vertex groups, TetRig's input read from the evaluated mesh,
and the error a body raises when its binding no longer matches its mesh.

Units: the engine works in metres; Blender lengths are multiplied by the scene's unit scale.
"""

from __future__ import annotations

import bpy
import numpy as np

from ...tetrig_addon import solver
from ...tetrig_addon.solver.self_contact import SelfCollision
from . import binding_store, mesh_io, points_object, stack
from .animation import frame_dt, transform_animated
from .properties import ROLE_SOURCE, object_settings

# A vertex is pinned when its weight in the pin group is at least this.
PIN_THRESHOLD = 0.5


class StaleBindingError(RuntimeError):
    """The binding no longer matches the mesh or its cage; the message says how to fix it."""


def soft_bodies(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """The scene's TetRig soft bodies (cage or Surface) that are set to simulate."""
    return [o for o in scene.objects
            if o.type == "MESH" and object_settings(o).role == ROLE_SOURCE and object_settings(o).simulate]


def all_soft_bodies(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """The scene's soft bodies, Simulate on or off (``soft_bodies`` has only "on")."""
    return [o for o in scene.objects if o.type == "MESH" and object_settings(o).role == ROLE_SOURCE]


def sim_settings(obj: bpy.types.Object, scene: bpy.types.Scene, cage: bool = True) -> solver.SimSettings:
    """The object's simulation settings in SI units, read once per frame. The substeps per frame
    follow its Steps per Second and the scene's frame rate, so frame rates share one step.

    ``cage=False`` (a Surface body): the cages' material fields (mode, stiffness, volume) stay at
    their defaults, which a surface body does not read (``SurfaceBody.advance``), so they never
    change its frame cache or outdate its bake.

    Raises:
        TetRigInputError: a setting out of range.
    """
    s = object_settings(obj)
    scale = scene.unit_settings.scale_length
    gravity = tuple(np.array(scene.gravity).tolist()) if scene.use_gravity else (0.0, 0.0, 0.0)
    material = (dict(mode=s.mode, youngs_modulus=s.youngs_modulus, stiffness=s.stiffness, use_volume=s.use_volume,
                     volume_stiffness=s.volume_stiffness, global_iterations=s.global_iterations,
                     # (PBD Spring steps with implicit Euler whatever the setting: its bake stays current)
                     integrator=s.integrator if s.mode != solver.MODE_PBD else solver.INTEGRATOR_EULER)
                # (a Surface body steps with implicit Euler and no global step: said so, its bake's
                # fingerprint stays that of before they existed, whatever the engine's defaults)
                if cage else dict(global_iterations=0, integrator=solver.INTEGRATOR_EULER))
    return solver.SimSettings(
        **material, damping=s.damping,
        substeps=solver.substeps_for(s.steps_per_second, frame_dt(scene)), iterations=s.iterations,
        gravity=gravity, ground_height=s.ground_height * scale if s.use_ground else None,
        ground_friction=s.ground_friction,
        ground_static_friction=max(s.ground_static_friction, s.ground_friction),
        max_speed=s.max_speed, goal_stiffness=s.goal_stiffness, goal_damping=s.goal_damping,
    ).validated()


def goal_key(obj: bpy.types.Object) -> tuple:
    """The goal settings the model depends on (only the switch when goals are off)."""
    s = object_settings(obj)
    return (s.use_goal, s.goal_group, s.goal_default, s.goal_min, s.goal_max) if s.use_goal else (False,)


def follows_animation(obj: bpy.types.Object) -> bool:
    """Whether the soft body follows its object's animated transform with inertia: it has goals
    or pins and its world matrix is animated. Otherwise it simulates in its start-frame pose and
    the animation carries it rigidly (see ``animation.rest_world_matrix``)."""
    s = object_settings(obj)
    return (s.use_goal or bool(s.pin_group)) and transform_animated(obj)


def input_group_weights(obj: bpy.types.Object, group_name: str) -> np.ndarray | None:
    """A vertex group's weight of every vertex of TetRig's input, float64 [N] (0 where unassigned),
    or ``None`` when the group does not exist. An input made of new vertices (a points object)
    takes the weights of the mesh vertices they come from (a mirrored copy its original's)."""
    weights = mesh_io.vertex_group_weights(obj, group_name)
    points = object_settings(obj).points
    if weights is None or points is None:
        return weights
    source = points_object.source_index(points)
    if source is None:
        return np.zeros(len(mesh_io.mesh_of(points).vertices))
    return np.where(source >= 0, weights[np.clip(source, 0, len(weights) - 1)], 0.0)


def vertex_goal_weights(obj: bpy.types.Object) -> np.ndarray | None:
    """Goal weight of every vertex, float64 [N] in [0, 1], or ``None`` without goals: the goal
    group's weights mapped onto Min..Max (vertices outside the group get Min), or Default for all
    without a group (Blender Soft Body's goal settings).

    Raises:
        StaleBindingError: the goal group named does not exist.
    """
    s = object_settings(obj)
    if not s.use_goal:
        return None
    count = len(binding_store.holder(obj).vertices)
    if not s.goal_group:
        return np.full(count, s.goal_default)
    group = input_group_weights(obj, s.goal_group)
    if group is None:
        raise StaleBindingError(f"{obj.name}: its goal group {s.goal_group!r} does not exist; "
                                "pick a vertex group or clear the field.")
    return s.goal_min + (s.goal_max - s.goal_min) * np.clip(group, 0.0, 1.0)


def read_input(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, count: int) -> np.ndarray:
    """``stack.read_input``: TetRig's input in the evaluated mesh now, float64 [count, 3] object space.

    Raises:
        StaleBindingError: the input no longer matches the binding (``stack.InputError``'s message).
    """
    try:
        return stack.read_input(obj, depsgraph, count)
    except stack.InputError as exc:
        raise StaleBindingError(str(exc)) from exc


def in_scene(obj: bpy.types.Object | None) -> bool:
    """Whether ``obj`` still belongs to a collection (X unlinks a deleted object from every one; an
    object something else refers to stays in ``bpy.data``)."""
    return obj is not None and len(obj.users_collection) > 0


def others_sharing(obj: bpy.types.Object) -> list[bpy.types.Object]:
    """The other soft bodies (any kind) that show the mesh of ``obj`` or read its binding's holder
    (Alt+D copies, and their points object): what ``obj`` must never write zeros into or clear."""
    mesh = mesh_io.mesh_of(obj)
    if object_settings(obj).points is None and mesh.users - int(mesh.use_fake_user) <= 1:
        return []  # its own mesh, and no points object: nothing to look for
    mine = {mesh, binding_store.holder(obj)}
    return [o for o in bpy.data.objects
            if o != obj and o.type == "MESH" and object_settings(o).role == ROLE_SOURCE and in_scene(o)
            and ({mesh_io.mesh_of(o), binding_store.holder(o)} & mine)]


def in_edit_mode(obj: bpy.types.Object) -> bool:
    """Whether the mesh of ``obj`` (or of its cage or points object) is being edited."""
    s = object_settings(obj)
    return any(o is not None and o.type == "MESH" and mesh_io.mesh_of(o).is_editmode
               for o in (obj, s.cage, s.points))


def self_collision(obj: bpy.types.Object, scene: bpy.types.Scene) -> SelfCollision | None:
    """The object's self-contact (``SelfCollision``, its distance in metres), or ``None`` when Self
    Collision is off (a Surface body's ``solver.self_contact``, a cage body's ``solver.cage_self``).

    Raises:
        TetRigInputError: a distance that is not positive.
    """
    s = object_settings(obj)
    return SelfCollision(distance=s.self_distance * scene.unit_settings.scale_length) if s.use_self_collision else None
