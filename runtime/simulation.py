"""Per-object simulation state for the Blender layer: models, frame caches and write-back.

Everything here is keyed by ``ID.session_uid`` (an int), never by ``bpy`` references, which undo
and file loads invalidate. A model is rebuilt when its inputs change (a new binding, a moved
object, another density or pin group); a frame cache is rebuilt when anything that affects the
motion changes, so the state at frame F depends on the scene and F alone.

Units: the engine works in metres; Blender lengths are multiplied by the scene's unit scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np

from ..tetrig_addon import solver
from ..tetrig_addon.cage import blend, blend_matrix, control_point_goal_weights, pinned_control_points, posing
from ..tetrig_addon.timeline import FrameCache
from . import (bake_store, binding_store, cage_object, compiled_solver, mesh_io, points_object, quality_pass,
               scene_inputs, stack)
from ..tetrig_addon.solver.plasticity import PlasticSettings
from .properties import is_surface, object_settings, plastic_settings, ROLE_SOURCE

# A vertex is pinned when its weight in the pin group is at least this.
PIN_THRESHOLD = 0.5


class StaleBindingError(RuntimeError):
    """The binding no longer matches the mesh or its cage; the message says how to fix it."""


@dataclass
class Prepared:
    """What the per-frame path needs for one object, built once per model key."""

    key: tuple
    model: solver.Model
    indices: np.ndarray  # int32 [N, 4]
    weights: np.ndarray  # float64 [N, 4], summing to 1
    blend: Any  # scipy.sparse.csr_matrix [N, Q]: offsets = blend @ displacements
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


_prepared: dict[int, Prepared] = {}
_caches: dict[int, FrameCache] = {}
_warned: dict[int, str] = {}
# Soft bodies shown from a bake at a frame whose scene inputs differ from the baked ones.
_inputs_changed: set[int] = set()


def inputs_changed(obj: bpy.types.Object) -> bool:
    """Whether playback found a baked frame whose animation or colliders changed since baking."""
    return obj.session_uid in _inputs_changed


def forget_input_changes(obj: bpy.types.Object) -> None:
    """A new bake: what older frames showed no longer matters."""
    _inputs_changed.discard(obj.session_uid)


def free(obj: bpy.types.Object | None = None) -> None:
    """Forget cached models and frames of one object, or of all objects."""
    from . import surface_sim

    scene_inputs.free(obj)
    surface_sim.free(obj)
    if obj is None:  # a new file or an undo: session ids may name other objects now
        _prepared.clear()
        _caches.clear()
        _warned.clear()
        _inputs_changed.clear()
    else:
        for table in (_prepared, _caches, _warned):
            table.pop(obj.session_uid, None)


def warn(obj: bpy.types.Object, message: str) -> None:
    """Record a warning about ``obj`` for the panel (``status``), printed once."""
    if _warned.get(obj.session_uid) != message:
        _warned[obj.session_uid] = message
        print("TetRig:", message)


def note_inputs_changed(obj: bpy.types.Object) -> None:
    """Playback showed a baked frame whose scene inputs differ from the baked ones."""
    _inputs_changed.add(obj.session_uid)


def status(obj: bpy.types.Object) -> str:
    """The last warning about ``obj`` from the frame handler, or ''."""
    return _warned.get(obj.session_uid, "")


def sim_settings(obj: bpy.types.Object, scene: bpy.types.Scene, cage: bool = True) -> solver.SimSettings:
    """The object's simulation settings in SI units, read once per frame. The substeps per frame
    follow its Steps per Second and the scene's frame rate, so frame rates share one step.

    ``cage=False`` (a Surface body): the cages' material fields (mode, stiffness, volume) stay at
    their defaults, which a surface body does not read (``SurfaceBody.advance``), so they never
    change its frame cache or outdate its bake."""
    s = object_settings(obj)
    scale = scene.unit_settings.scale_length
    gravity = tuple(np.array(scene.gravity).tolist()) if scene.use_gravity else (0.0, 0.0, 0.0)
    material = (dict(mode=s.mode, youngs_modulus=s.youngs_modulus, stiffness=s.stiffness, use_volume=s.use_volume,
                     volume_stiffness=s.volume_stiffness) if cage else {})
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
    the animation carries it rigidly (see ``rest_world_matrix``)."""
    s = object_settings(obj)
    return (s.use_goal or bool(s.pin_group)) and transform_animated(obj)


def _model_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray) -> tuple:
    s = object_settings(obj)
    cage = s.cage
    return (s.bind_id, world.round(12).tobytes(), s.density, s.pin_group, goal_key(obj),
            scene.unit_settings.scale_length, len(mesh_io.mesh_of(obj).vertices), follows_animation(obj),
            binding_store.rest_fingerprint(obj), stack.posed(obj), stack.input_animated(obj),
            cage.session_uid if cage is not None else None)  # last: motion_key leaves it out


def binding_problem(obj: bpy.types.Object) -> str:
    """``check_binding``'s message, or '' when the binding matches the mesh (for the panel)."""
    try:
        check_binding(obj)
    except StaleBindingError as exc:
        return str(exc)
    return ""


def check_binding(obj: bpy.types.Object) -> None:
    """Raise ``StaleBindingError`` when the mesh changed since it was bound: its vertex positions
    (an edit, an applied transform), vertex count or shape keys (``binding_store.rest_fingerprint``),
    or the vertex count of TetRig's input."""
    s = object_settings(obj)
    if s.rest_fingerprint and binding_store.rest_fingerprint(obj) != s.rest_fingerprint:
        raise StaleBindingError(f"{obj.name}: the mesh changed since binding; press Rebind (it keeps "
                                "the settings).")
    count = len(binding_store.holder(obj).vertices)
    if s.points is None and count != s.bound_vertex_count:
        raise StaleBindingError(f"{obj.name}: the mesh changed since binding ({s.bound_vertex_count} → "
                                f"{count} vertices); press Rebind (it keeps the settings).")


def transform_animated(obj: bpy.types.Object) -> bool:
    """Whether the world matrix of ``obj`` can change with the frame: an action, drivers or
    constraints on the object or any parent. A static object's current matrix is its rest pose."""
    node: bpy.types.Object | None = obj
    while node is not None:
        anim = node.animation_data
        if node.constraints or (anim is not None and (anim.action is not None or len(anim.drivers))):
            return True
        node = node.parent
    return False


def rest_world_matrix(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """The object's world matrix at the start frame, float64 [4, 4]: the pose the simulation rests in.

    The cage simulates in the start-frame pose, and the mesh shows the result in object space, so
    an animated transform carries the soft body along rigidly and never invalidates the frame
    cache (following the animation with inertia is the job of goals). The matrix is read from the
    depsgraph (right after a file load the original object's ``matrix_world`` is not computed yet).
    A static object's current matrix is its rest pose (moving it moves the rest pose); an animated
    one's is remembered in ``Object.tetrig.rest_matrix`` whenever the scene is at or before its
    start frame, so that later frames, reached in any order, use the same one.
    """
    current = np.array(obj.evaluated_get(depsgraph).matrix_world, dtype=np.float64)
    settings = object_settings(obj)
    scene = depsgraph.scene
    stored = np.array(settings.rest_matrix, dtype=np.float64).reshape(4, 4)
    at_start = scene is None or scene.frame_current <= scene.frame_start
    if at_start or not settings.has_rest_matrix or not transform_animated(obj):
        if not settings.has_rest_matrix or not np.array_equal(stored, current):
            settings.rest_matrix = current.ravel().tolist()
            settings.has_rest_matrix = True
        return current
    return stored


def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray) -> Prepared:
    """Build (or reuse) the simulation model of a bound object.

    Args:
        world: float64 [4, 4], the object's world matrix (see ``rest_world_matrix``).

    Raises:
        StaleBindingError: the cage is gone or edited, or the mesh changed since binding.
    """
    key = _model_key(obj, scene, world)
    cached = _prepared.get(obj.session_uid)
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
    prepared = Prepared(key=key, model=model, indices=indices, weights=weights,
                        blend=blend_matrix(indices, weights, rest_local.shape[0]),
                        world_to_local=np.linalg.inv(world[:3, :3]), unit_scale=unit_scale,
                        rest_local=rest_local, follows=follows_animation(obj) or posed, follow=follow,
                        input_animated=posed and stack.input_animated(obj), fixed=fixed)
    _prepared[obj.session_uid] = prepared
    _caches.pop(obj.session_uid, None)
    return prepared


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


def frame_dt(scene: bpy.types.Scene) -> float:
    """Duration of one frame [s]."""
    return scene.render.fps_base / scene.render.fps


def _pose_reader(prepared: Prepared) -> scene_inputs.PoseReader | None:
    """How a posed mesh's frame inputs read its posed control points (``None`` for the others)."""
    follow = prepared.follow
    if follow is None:
        return None
    count = prepared.indices.shape[0]

    def read(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
        return follow.posed(read_input(obj, depsgraph, count))

    return read


def read_input(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, count: int) -> np.ndarray:
    """``stack.read_input``: TetRig's input in the evaluated mesh now, float64 [count, 3] object space.

    Raises:
        StaleBindingError: the input no longer matches the binding (``stack.InputError``'s message).
    """
    try:
        return stack.read_input(obj, depsgraph, count)
    except stack.InputError as exc:
        raise StaleBindingError(str(exc)) from exc


def frame_inputs(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int, depsgraph: bpy.types.Depsgraph,
                 prepared: Prepared, refresh: bool = True) -> scene_inputs.FrameInputs:
    """``scene_inputs.inputs_at`` for a prepared soft body (with its pose when it is posed)."""
    return scene_inputs.inputs_at(obj, scene, frame, depsgraph, prepared.follows, refresh=refresh,
                                  pose=_pose_reader(prepared), pose_animated=prepared.input_animated)


def control_points_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
                      depsgraph: bpy.types.Depsgraph, prepared: Prepared | None = None) -> np.ndarray:
    """Simulated control points at ``frame``: float64 [Q, 3] [m], world space × unit scale.

    A posed mesh (``stack``) rests, each frame, in that frame's pose: the control points' goals
    and the cage's rest shape are where the input puts them (``tetrig_addon.posing``), in world
    space, so gravity and colliders act on the posed body and it lags and overshoots as it moves.

    Raises:
        StaleBindingError: see ``prepare``, or a posed input that no longer matches the binding;
        scene_inputs.InputsUnavailable: see there.

    ``prepared``: this frame's ``prepare`` result when the caller has it (each call of ``prepare``
    digests the whole mesh for its key: milliseconds on a scan).
    """
    if prepared is None:
        prepared = prepare(obj, scene, rest_world_matrix(obj, depsgraph))
    settings = sim_settings(obj, scene)
    plastic = cage_plasticity(obj, prepared)
    dt = frame_dt(scene)
    compiled_solver.wait_for_kernel()
    # reading the current frame's inputs first lets an edit since the last visit drop the cache
    frame_inputs(obj, scene, scene.frame_current, depsgraph, prepared)
    # in motion_key's order (the bake's fingerprint): plasticity only when on
    key = (prepared.key, settings, dt, scene.frame_start, *((plastic,) if plastic else ()),
           scene_inputs.version(obj))
    cache = _caches.get(obj.session_uid)
    if cache is None or cache.key != key:
        start = solver.rest_state(prepared.model)
        if prepared.follow is not None:  # at rest in the start frame's pose
            posed = posed_world(prepared, frame_inputs(obj, scene, scene.frame_start, depsgraph, prepared))
            start = solver.State(posed, np.zeros_like(posed), start.rotations)
        cache = FrameCache(scene.frame_start, start, key)
        _caches[obj.session_uid] = cache

    def advance(state: solver.State, f: int) -> solver.State:
        end = frame_inputs(obj, scene, f + 1, depsgraph, prepared)
        model, goals = prepared.model, None
        if prepared.follow is not None:
            begin = frame_inputs(obj, scene, f, depsgraph, prepared)
            goals = (posed_world(prepared, begin), posed_world(prepared, end))
            model = solver.with_rest(model, goals[1])
        elif prepared.follows:
            begin = frame_inputs(obj, scene, f, depsgraph, prepared)
            goals = (goal_positions(prepared, begin.world), goal_positions(prepared, end.world))
        # the crept rest data (plasticity) ride on the state from frame to frame (State.moved)
        return solver.step(model, state, settings, dt, goals=goals, colliders=end.colliders, plastic=plastic)

    state = cache.state_at(frame, advance)
    if cache.first_bad_frame is not None and obj.session_uid not in _warned:
        _warned[obj.session_uid] = (
            f"{obj.name}: the simulation became unstable at frame {cache.first_bad_frame} and was "
            "frozen there; raise Steps per Second or lower the stiffness.")
        print("TetRig:", _warned[obj.session_uid])
    return state.shown()


def cage_plasticity(obj: bpy.types.Object, prepared: Prepared) -> PlasticSettings | None:
    """The cage's plasticity (``properties.plastic_settings``), or ``None`` when it is off or the
    mesh is posed: a posed cage's rest shape is the pose of each frame (``solver.with_rest``),
    which crept rest data would replace."""
    return None if prepared.follow is not None else plastic_settings(obj)


def posed_world(prepared: Prepared, inputs: scene_inputs.FrameInputs) -> np.ndarray:
    """A posed mesh's control points at rest in a frame's pose: float64 [Q, 3] [m], world space."""
    assert inputs.posed is not None
    world = inputs.world
    return (inputs.posed @ world[:3, :3].T + world[:3, 3]) * prepared.unit_scale


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


def displacements_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
                     depsgraph: bpy.types.Depsgraph, prepared: Prepared | None = None) -> np.ndarray:
    """The simulated control-point displacements at ``frame`` in object space, from where they rest
    in that frame (a posed mesh's pose, else the cage's rest): float64 [Q, 3]. ``prepared``: as
    in ``control_points_at``."""
    if prepared is None:
        prepared = prepare(obj, scene, rest_world_matrix(obj, depsgraph))
    positions = control_points_at(obj, scene, frame, depsgraph, prepared)
    if not prepared.follows:
        return local_displacements(prepared, positions)
    # control_points_at has just read this frame's inputs: take the record, do not read again
    inputs = frame_inputs(obj, scene, frame, depsgraph, prepared, refresh=False)
    return local_displacements(prepared, positions, inputs.world, inputs.posed)


def write_back(obj: bpy.types.Object, displacements: np.ndarray, posed: np.ndarray | None = None,
               input_positions: np.ndarray | None = None) -> None:
    """Write the blended displacement of every vertex (and of the cage's points) to the meshes.

    vertex offset = Σₖ wₖ · d[iₖ] (the seed's vertex-shader blend applied to displacements, so a
    zero displacement writes exact zeros), repaired by the quality pass when it is on
    (``quality_pass.vertex_offsets``), to the mesh holding the binding (``binding_store``).
    Nothing non-finite is written.

    Args:
        displacements: float [Q, 3], object space, from where the control points rest.
        posed: float [Q, 3], object space: where a posed mesh's control points rest this frame (the
            cage is drawn there); ``None`` for the cage's own rest.
        input_positions: float [N, 3], object space: a posed mesh's input this frame
            (``stack.read_input``), the rest the quality pass keeps its edge lengths from; ``None``:
            the mesh's rest shape.
    """
    prepared = _prepared[obj.session_uid]
    if not np.all(np.isfinite(displacements)):
        return
    offsets = quality_pass.vertex_offsets(obj, prepared, displacements, input_positions)
    holder = binding_store.holder(obj)
    mesh_io.write_attribute(holder, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", offsets)
    holder.update()
    if holder != mesh_io.mesh_of(obj):  # the points object's offsets change the source's result
        obj.update_tag()
    cage = object_settings(obj).cage
    if cage is not None:
        shown = displacements if posed is None else displacements + posed - prepared.rest_local
        mesh_io.write_attribute(mesh_io.mesh_of(cage), binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", shown)
        mesh_io.mesh_of(cage).update()


def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray) -> tuple:
    """Everything the motion of ``obj`` depends on, as saved in the .blend: the inputs of the frame
    cache's key (``_model_key``, settings, frame duration, start frame) without the ones that only
    name this session's data (the cage's session id). A bake stores its fingerprint to tell when
    it is outdated, also after the file is reopened. Keep it in step with ``_model_key``.

    Args:
        world: float64 [4, 4], the object's world matrix (see ``rest_world_matrix``).
    """
    if is_surface(obj):
        from . import surface_sim
        return surface_sim.motion_key(obj, scene, world)
    s = object_settings(obj)
    plastic = None if stack.posed(obj) else plastic_settings(obj)
    # plasticity only when on: the bakes made before it existed stay current
    return (s.bind_id, world.round(12).tobytes(), s.density, s.pin_group, goal_key(obj),
            scene.unit_settings.scale_length, len(mesh_io.mesh_of(obj).vertices), follows_animation(obj),
            binding_store.rest_fingerprint(obj), stack.posed(obj), stack.input_animated(obj),
            sim_settings(obj, scene), frame_dt(scene), scene.frame_start) + ((plastic,) if plastic else ())


def update_object(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
                  depsgraph: bpy.types.Depsgraph) -> None:
    """Show the state of ``obj`` at ``frame``: its bake when the cage holds one for that frame
    (no simulation), else the simulated state (rest at or before the start frame)."""
    prepared = prepare(obj, scene, rest_world_matrix(obj, depsgraph))
    baked = bake_store.baked_displacements(obj, frame)
    if baked is not None:
        inputs = None
        if prepared.follow is not None or frame == scene.frame_current:
            inputs = frame_inputs(obj, scene, frame, depsgraph, prepared)
        header = bake_store.source_bake(obj)
        if inputs is not None and header is not None and header.inputs and frame == scene.frame_current:
            at = (frame - header.frame_start) * scene_inputs.DIGEST_HEX
            now = scene_inputs.motion_digest(inputs, prepared.follows)
            if now != header.inputs[at:at + scene_inputs.DIGEST_HEX]:
                _inputs_changed.add(obj.session_uid)
        write_back(obj, baked, None if inputs is None else inputs.posed, shown_input(obj, prepared, depsgraph))
        return
    displacements = displacements_at(obj, scene, frame, depsgraph, prepared)
    posed = None
    if prepared.follow is not None:
        posed = frame_inputs(obj, scene, frame, depsgraph, prepared, refresh=False).posed
    write_back(obj, displacements, posed, shown_input(obj, prepared, depsgraph))


def shown_input(obj: bpy.types.Object, prepared: Prepared, depsgraph: bpy.types.Depsgraph) -> np.ndarray | None:
    """A posed mesh's input in the depsgraph now, float64 [N, 3] object space, when the quality pass
    needs it (the rest its edges keep their lengths from); ``None`` otherwise (not posed, or the
    pass is off: reading the input costs a copy of every vertex).

    Raises:
        StaleBindingError: the input no longer matches the binding (``stack.read_input``).
    """
    if prepared.follow is None or not object_settings(obj).use_quality:
        return None
    return read_input(obj, depsgraph, prepared.indices.shape[0])


def soft_bodies(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """The scene's TetRig source objects that are set to simulate."""
    return [o for o in scene.objects
            if o.type == "MESH" and object_settings(o).role == ROLE_SOURCE and object_settings(o).simulate]


def update_scene(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """Update every soft body of the scene to its current frame; a broken one warns once and
    shows its rest shape, and leaves the others alone. A mesh in Edit Mode is left as it is (its
    vertices are the edit's, not the saved ones, until Edit Mode ends)."""
    frame = scene.frame_current
    for obj in soft_bodies(scene):
        if in_edit_mode(obj):
            continue
        try:
            if is_surface(obj):
                from . import surface_sim
                surface_sim.update_object(obj, scene, frame, depsgraph)
            else:
                update_object(obj, scene, frame, depsgraph)
        except (StaleBindingError, scene_inputs.InputsUnavailable, ValueError) as exc:
            _prepared.pop(obj.session_uid, None)
            show_rest(obj)
            if _warned.get(obj.session_uid) != str(exc):
                _warned[obj.session_uid] = str(exc)
                print("TetRig:", exc)


def in_edit_mode(obj: bpy.types.Object) -> bool:
    """Whether the mesh of ``obj`` (or of its cage or points object) is being edited."""
    s = object_settings(obj)
    return any(o is not None and o.type == "MESH" and mesh_io.mesh_of(o).is_editmode
               for o in (obj, s.cage, s.points))


def show_rest(obj: bpy.types.Object) -> None:
    """Zero the offsets of a soft body that cannot be simulated, so it shows its input (its rest
    shape, posed) rather than a stale frame. Leaves a mesh in Edit Mode alone."""
    s = object_settings(obj)
    if in_edit_mode(obj):
        return
    if is_surface(obj):
        from . import surface_sim
        surface_sim.show_rest(obj)
        return
    for holder in {mesh_io.mesh_of(obj), binding_store.holder(obj)}:
        offset = holder.attributes.get(binding_store.OFFSET_ATTRIBUTE)
        if offset is not None and offset.domain == "POINT":
            mesh_io.write_attribute(holder, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR",
                                    np.zeros((len(holder.vertices), 3)))
            holder.update()
    cage = s.cage
    if cage is not None and cage.type == "MESH" and object_settings(cage).source == obj:
        mesh = mesh_io.mesh_of(cage)
        offset = mesh.attributes.get(binding_store.OFFSET_ATTRIBUTE)
        if offset is not None and offset.domain == "POINT":
            mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR",
                                    np.zeros((len(mesh.vertices), 3)))
            mesh.update()
