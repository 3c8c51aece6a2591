"""Surface bodies in Blender: the mesh's own vertices are the particles (``tetrig_addon.surface``).

The same frame rules as cages (``simulation``): a body is rebuilt when its inputs change (the mesh,
the object's start-frame pose, the density, the pin and goal groups), its frames come from a
``timeline.FrameCache`` keyed by everything the motion depends on, so frame F is the same played,
jumped to, baked or reloaded, and it shows through the offset modifier's ``tetrig_offset``
attribute: the mesh's own coordinates (the rest shape) are never written. The crept rest data
(plasticity) and the torn edges are part of each frame's ``SurfaceState``.

What it reads from the scene is the cages' (``scene_inputs``): the object's world matrix, which
its goals and pins follow when it is animated, the collision objects, and, for a mesh posed by
modifiers before TetRig (an Armature), each frame's posed vertices, which are then the goals. The
rest shape stays the mesh's own: the posed input pulls through the goals and pins.

Torn edges are shown by ``tear_display``: the edges to split and, per face corner, how far the
corner's particle is from its vertex's own particle.

Units: the engine works in metres, world space; Blender lengths × the scene's unit scale.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import bpy
import numpy as np

from ..tetrig_addon import surface
from ..tetrig_addon.solver import SurfaceMaterial
from ..tetrig_addon.surface import SurfaceBody, SurfaceState, TearSettings
from ..tetrig_addon.timeline import FrameCache
from . import binding_store, compiled_solver, mesh_io, scene_inputs, stack
from .properties import object_settings, plastic_settings
from .simulation import (PIN_THRESHOLD, StaleBindingError, follows_animation, frame_dt, goal_key,
                         input_group_weights, read_input, sim_settings, vertex_goal_weights)


@dataclass
class SurfacePrepared:
    """What the per-frame path needs for one surface body, built once per model key."""

    key: tuple
    body: SurfaceBody
    rest_local: np.ndarray  # float64 [N, 3], the mesh's own vertices (object space)
    corner_vertices: np.ndarray  # int32 [corner_count], the vertex of every face corner
    world: np.ndarray  # float64 [4, 4], the start-frame world matrix the body rests in
    unit_scale: float  # metres per Blender unit
    follows: bool  # goals or pins follow the object's animation (or its posed input) frame by frame
    posed: bool  # the input is made by modifiers or shape keys before TetRig (``stack``)
    input_animated: bool


_prepared: dict[int, SurfacePrepared] = {}
_caches: dict[int, FrameCache] = {}


def free(obj: bpy.types.Object | None = None) -> None:
    """Forget the bodies and frames of one object, or of all (``simulation.free`` calls this)."""
    if obj is None:
        _prepared.clear()
        _caches.clear()
    else:
        _prepared.pop(obj.session_uid, None)
        _caches.pop(obj.session_uid, None)


def material(obj: bpy.types.Object) -> SurfaceMaterial:
    """The object's surface material in SI units (``SurfaceMaterial``), validated.

    Raises:
        TetRigInputError: a value out of range.
    """
    s = object_settings(obj)
    return SurfaceMaterial(stretch=s.stretch, shear=s.shear, bending=s.bending, pressure=s.pressure).validated()


def tear_settings(obj: bpy.types.Object) -> TearSettings | None:
    """The object's tearing (``TearSettings``), or ``None`` when it is off.

    Raises:
        TetRigInputError: a threshold that is not positive.
    """
    s = object_settings(obj)
    return TearSettings(threshold=s.tear_threshold).validated() if s.use_tearing else None


def corner_edges(mesh: bpy.types.Mesh) -> np.ndarray:
    """The edge of every face corner (``Mesh.loops``' ``edge_index``): int32 [corner_count]."""
    out = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("edge_index", out)
    return out


def build(obj: bpy.types.Object, world: np.ndarray, unit_scale: float) -> SurfaceBody:
    """The engine's body of ``obj``'s mesh as it is (its own vertices, ``world`` [4, 4] carrying
    them to world space), with its pin and goal groups.

    Raises:
        TetRigInputError: what ``surface.build_body`` refuses (no faces, loose vertices, a density
            that is not positive).
        StaleBindingError: the goal group named does not exist.
    """
    s = object_settings(obj)
    mesh = mesh_io.mesh_of(obj)
    rest_local = mesh_io.vertex_positions(mesh)
    pinned = None
    if s.pin_group:
        weights = input_group_weights(obj, s.pin_group)
        if weights is not None:
            pinned = weights >= PIN_THRESHOLD
    return surface.build_body((rest_local @ world[:3, :3].T + world[:3, 3]) * unit_scale,
                              mesh_io.polygon_corners(mesh), mesh_io.polygon_sizes(mesh), s.areal_density,
                              pinned=pinned, goal_weights=vertex_goal_weights(obj),
                              edges=mesh_io.edge_vertices(mesh), corner_edges=corner_edges(mesh), name=obj.name)


def _body_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray) -> tuple:
    """What the body (``prepare``) is built from: a new one when any of it changes."""
    s = object_settings(obj)
    return (s.bind_id, world.round(12).tobytes(), s.areal_density, s.pin_group, goal_key(obj),
            scene.unit_settings.scale_length, binding_store.rest_fingerprint(obj), follows_animation(obj),
            stack.posed(obj), stack.input_animated(obj), s.use_tearing)


def _motion_settings(obj: bpy.types.Object, scene: bpy.types.Scene) -> tuple:
    """The settings the frames depend on besides the body: the step, material, plasticity and
    tearing settings, the frame duration and the start frame."""
    return (sim_settings(obj, scene, cage=False), material(obj), plastic_settings(obj), tear_settings(obj), frame_dt(scene),
            scene.frame_start)


def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray) -> tuple:
    """Everything the motion of a surface body depends on, as saved in the .blend (the bake's
    fingerprint; ``simulation.motion_key`` for cages): the frame cache's key without the
    scene-inputs version, which counts this session's drops."""
    return ("SURFACE", *_body_key(obj, scene, world), *_motion_settings(obj, scene))


def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray) -> SurfacePrepared:
    """Build (or reuse) the body of a surface object.

    Args:
        world: float64 [4, 4], the object's start-frame world matrix (``simulation.rest_world_matrix``).

    Raises:
        TetRigInputError: the mesh or the material is refused (``build``, ``SurfaceBody.check``:
            pressure on an open mesh).
        StaleBindingError: the goal group is gone, or modifiers before TetRig make new vertices.
    """
    s = object_settings(obj)
    posed = stack.posed(obj)
    key = _body_key(obj, scene, world)
    cached = _prepared.get(obj.session_uid)
    if cached is not None and cached.key == key:
        return cached
    if posed and not stack.own_vertices(obj):
        raise StaleBindingError(f"{obj.name}: modifiers before TetRig make new vertices (Mirror, Array); "
                                "a Surface body simulates the mesh's own vertices: apply them or move "
                                "TetRig above them.")
    unit_scale = scene.unit_settings.scale_length
    body = build(obj, world, unit_scale)
    mesh = mesh_io.mesh_of(obj)
    prepared = SurfacePrepared(key=key, body=body, rest_local=mesh_io.vertex_positions(mesh),
                               corner_vertices=mesh_io.polygon_corners(mesh), world=world,
                               unit_scale=unit_scale, follows=follows_animation(obj) or posed, posed=posed,
                               input_animated=posed and stack.input_animated(obj))
    _prepared[obj.session_uid] = prepared
    _caches.pop(obj.session_uid, None)
    if not s.use_tearing:  # a state torn before tearing was turned off (or before a reload) goes
        from . import tear_display
        tear_display.write(obj, None, None)
    return prepared


def _pose_reader(prepared: SurfacePrepared) -> scene_inputs.PoseReader | None:
    """How a posed body's frame inputs read its posed vertices (object space), ``None`` otherwise."""
    if not prepared.posed:
        return None
    count = prepared.rest_local.shape[0]
    return lambda obj, depsgraph: read_input(obj, depsgraph, count)


def frame_inputs(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int, depsgraph: bpy.types.Depsgraph,
                 prepared: SurfacePrepared, refresh: bool = True) -> scene_inputs.FrameInputs:
    """``scene_inputs.inputs_at`` for a prepared surface body (its posed vertices when posed)."""
    return scene_inputs.inputs_at(obj, scene, frame, depsgraph, prepared.follows, refresh=refresh,
                                  pose=_pose_reader(prepared), pose_animated=prepared.input_animated)


def goal_positions(prepared: SurfacePrepared, inputs: scene_inputs.FrameInputs) -> np.ndarray:
    """Where the vertices' goals are in a frame: the posed input (else the rest shape) carried by
    that frame's world matrix; float64 [N, 3] [m], world space."""
    local = prepared.rest_local if inputs.posed is None else inputs.posed
    world = inputs.world
    return (local @ world[:3, :3].T + world[:3, 3]) * prepared.unit_scale


def state_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int, depsgraph: bpy.types.Depsgraph,
             prepared: SurfacePrepared) -> SurfaceState:
    """The body's state at ``frame`` from its frame cache (stepping from the nearest earlier
    cached frame; the start frame's rest, or its posed input, at worst).

    Raises:
        TetRigInputError: invalid settings, pressure on an open mesh; StaleBindingError,
        scene_inputs.InputsUnavailable: as ``simulation.control_points_at``.
    """
    motion = _motion_settings(obj, scene)
    settings, mat, plastic, tear, dt, _ = motion
    prepared.body.check(mat)
    compiled_solver.wait_for_kernel()
    # reading the current frame's inputs first lets an edit since the last visit drop the cache
    frame_inputs(obj, scene, scene.frame_current, depsgraph, prepared)
    key = (prepared.key, *motion, scene_inputs.version(obj))
    cache = _caches.get(obj.session_uid)
    if cache is None or cache.key != key:
        start = prepared.body.rest_state()
        if prepared.posed:  # at rest in the start frame's pose
            posed = goal_positions(prepared, frame_inputs(obj, scene, scene.frame_start, depsgraph, prepared))
            start = replace(start, positions=posed)
        cache = FrameCache(scene.frame_start, start, key)
        _caches[obj.session_uid] = cache
    body = prepared.body

    def advance(state: SurfaceState, f: int) -> SurfaceState:
        end = frame_inputs(obj, scene, f + 1, depsgraph, prepared)
        goals = None
        if prepared.follows:
            begin = frame_inputs(obj, scene, f, depsgraph, prepared)
            goals = (goal_positions(prepared, begin), goal_positions(prepared, end))
        return body.advance(state, settings, mat, dt, goals=goals, colliders=end.colliders,
                            plastic=plastic, tear=tear)

    state = cache.state_at(frame, advance)
    assert isinstance(state, SurfaceState)
    if cache.first_bad_frame is not None:
        from . import simulation
        simulation.warn(obj, f"{obj.name}: the simulation became unstable at frame {cache.first_bad_frame} "
                             "and was frozen there; raise Steps per Second or lower the stiffness.")
    return state


@dataclass(frozen=True)
class SurfaceFrame:
    """What a frame of a surface body shows, in its object space (what a bake stores).

    Attributes:
        displacements: float64 [N, 3], each vertex's own particle from where the vertex rests this
            frame (its posed input, else the mesh's own position).
        torn: bool [edge_count], the mesh's torn edges, or ``None`` when the body cannot tear.
        corner_offsets: float64 [corner_count, 3] or ``None``: each face corner's particle minus its
            vertex's own particle (zero where the vertex is not split).
    """

    displacements: np.ndarray
    torn: np.ndarray | None = None
    corner_offsets: np.ndarray | None = None


def frame_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int, depsgraph: bpy.types.Depsgraph,
             prepared: SurfacePrepared | None = None) -> SurfaceFrame:
    """The simulated ``SurfaceFrame`` of ``obj`` at ``frame`` (see ``state_at`` for the errors)."""
    if prepared is None:
        from .simulation import rest_world_matrix
        prepared = prepare(obj, scene, rest_world_matrix(obj, depsgraph))
    state = state_at(obj, scene, frame, depsgraph, prepared)
    world = prepared.world
    rest = prepared.rest_local
    if prepared.follows:  # state_at has just read this frame's inputs: take the record
        inputs = frame_inputs(obj, scene, frame, depsgraph, prepared, refresh=False)
        world = inputs.world
        rest = rest if inputs.posed is None else inputs.posed
    to_local = np.linalg.inv(world[:3, :3]).T
    shown = state.shown()
    own = shown[:prepared.rest_local.shape[0]]  # each vertex's own particle (SurfaceBody.vertex_positions)
    local = (own / prepared.unit_scale - world[:3, 3]) @ to_local
    if not object_settings(obj).use_tearing:
        return SurfaceFrame(local - rest)
    split = prepared.body.split_mesh(state)
    # a difference of two points: the matrix's linear part alone carries it
    offsets = (split.positions[split.corner_vertices] - shown[prepared.corner_vertices]) / prepared.unit_scale
    return SurfaceFrame(local - rest, state.torn.copy(), offsets @ to_local)


def write_back(obj: bpy.types.Object, shown: SurfaceFrame) -> None:
    """Show a frame: the displacements as ``tetrig_offset``, the tear through ``tear_display``.
    Nothing non-finite is written."""
    if not np.all(np.isfinite(shown.displacements)):
        return
    mesh = mesh_io.mesh_of(obj)
    mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", shown.displacements)
    if object_settings(obj).use_tearing:
        from . import tear_display
        torn = shown.torn if shown.torn is not None and shown.torn.any() else None
        tear_display.write(obj, torn, None if torn is None else shown.corner_offsets, update=False)
    mesh.update()  # once, for the offsets and the tear


def update_object(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int, depsgraph: bpy.types.Depsgraph) -> None:
    """Show the state of a surface body at ``frame``: its bake when it holds that frame (no
    simulation), else the simulated state."""
    from . import bake_store, simulation

    world = simulation.rest_world_matrix(obj, depsgraph)
    prepared = prepare(obj, scene, world)
    baked = bake_store.baked_surface_frame(obj, frame)
    if baked is not None:
        if frame == scene.frame_current:
            header = bake_store.source_bake(obj)
            inputs = frame_inputs(obj, scene, frame, depsgraph, prepared)
            if header is not None and header.inputs:
                at = (frame - header.frame_start) * scene_inputs.DIGEST_HEX
                if scene_inputs.motion_digest(inputs, prepared.follows) != header.inputs[at:at + scene_inputs.DIGEST_HEX]:
                    simulation.note_inputs_changed(obj)
        write_back(obj, baked)
        return
    write_back(obj, frame_at(obj, scene, frame, depsgraph, prepared))


def show_rest(obj: bpy.types.Object) -> None:
    """Zero the offsets and clear the tear of a surface body that cannot be simulated."""
    from . import tear_display

    mesh = mesh_io.mesh_of(obj)
    offset = mesh.attributes.get(binding_store.OFFSET_ATTRIBUTE)
    if offset is not None and offset.domain == "POINT":
        mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", np.zeros((len(mesh.vertices), 3)))
    tear_display.write(obj, None, None, update=False)
    mesh.update()
