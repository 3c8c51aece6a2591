"""Surface bodies in the scene driver: the mesh's own vertices are the particles
(``tetrig_addon.surface``).

The same frame rules as cages: a body is built again when what it is built from changes (the mesh,
the object's start-frame pose, the density, the pin and goal groups), its frames come from a
frame cache keyed by everything the motion depends on, so frame F is the same played, jumped to,
baked or reloaded, and it shows through the offset modifier's ``tetrig_offset`` attribute: the
mesh's own coordinates (the rest shape) are never written. The crept rest data (plasticity) and
the torn edges are part of each frame's ``SurfaceState``.

What it reads from the scene is the cages' (``scene_inputs``): the object's world matrix, which
its goals and pins follow when it is animated, the collision objects, and, for a mesh posed by
modifiers before TetRig (an Armature), each frame's posed vertices, which are then the goals. The
rest shape stays the mesh's own: the posed input pulls through the goals and pins. With Soft Bodies on,
it touches the other soft bodies of its set as a cage soft body does (``common/touching``). Torn edges are
shown by ``tear_display``.

Units: the engine works in metres, world space; Blender lengths × the scene's unit scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...tetrig_addon import surface
from ...tetrig_addon.body import Control
from ...tetrig_addon.fingerprint import fingerprint
from ...tetrig_addon.solver import SurfaceMaterial
from ...tetrig_addon.surface import SurfaceBody, SurfaceSim, SurfaceState, TearSettings
from ..common import (bake_store, binding_store, compiled_solver, edits, frames, mesh_io, scene_inputs, stack,
                      touching)
from ..common.animation import frame_dt, rest_world_matrix
from ..common.properties import is_surface, object_settings, plastic_settings
from ..common.soft_kind import SoftBodyKind
from ..common.soft_body import (PIN_THRESHOLD, StaleBindingError, follows_animation, goal_key,
                                in_edit_mode, input_group_weights, others_sharing, read_input, self_collision,
                                sim_settings, soft_bodies, vertex_goal_weights)
from . import bake_frames, tear_display
from .bake_frames import SurfaceFrame


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


def body_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray, fresh: bool = False) -> tuple:
    """What the body (``prepare``) is built from: a new one when any of it changes. ``fresh``: digest
    the rest shape again (``edits.rest_fingerprint``)."""
    s = object_settings(obj)
    return (s.bind_id, world.round(12).tobytes(), s.areal_density, s.pin_group, goal_key(obj),
            scene.unit_settings.scale_length, edits.rest_fingerprint(obj, fresh), follows_animation(obj),
            stack.posed(obj), stack.input_animated(obj), s.use_tearing)


def _motion_settings(obj: bpy.types.Object, scene: bpy.types.Scene) -> tuple:
    """The settings the frames depend on besides the body: the step, material, plasticity and
    tearing settings, the frame duration and the start frame; then the self-contact, only when it is
    on (so the keys and bake fingerprints of bodies without it are those of before it existed)."""
    own = self_collision(obj, scene)
    return (sim_settings(obj, scene, cage=False), material(obj), plastic_settings(obj), tear_settings(obj),
            frame_dt(scene), scene.frame_start, *(() if own is None else (own,)))


def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray, fresh: bool = False) -> tuple:
    """Everything the motion of a surface body depends on, as saved in the .blend (the bake's
    fingerprint; ``cage.model.motion_key`` for cages): the frame cache's key without the slot's
    version, which counts this session's drops."""
    return ("SURFACE", *body_key(obj, scene, world, fresh), *_motion_settings(obj, scene))


def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray,
            cached: SurfacePrepared | None = None) -> SurfacePrepared:
    """The body of a surface object: ``cached`` while its key holds, else built anew.

    Args:
        world: float64 [4, 4], the object's start-frame world matrix (``animation.rest_world_matrix``).

    Raises:
        TetRigInputError: the mesh or the material is refused (``build``, ``SurfaceBody.check``:
            pressure on an open mesh).
        StaleBindingError: the goal group is gone, or modifiers before TetRig make new vertices.
    """
    s = object_settings(obj)
    first = next((o for o in others_sharing(obj) if is_surface(o)), None)
    if first is not None and first.name < obj.name:  # an Alt+D copy: the mesh is the particles
        raise StaleBindingError(
            f"{obj.name} shares its mesh with {first.name} (Alt+D), whose vertices are the particles: "
            f"only {first.name} simulates. Give {obj.name} its own mesh (Object > Relations > Make Single "
            "User > Object & Data), then press Set Up Again.")
    posed = stack.posed(obj)
    key = body_key(obj, scene, world)
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
    if not s.use_tearing:  # a state torn before tearing was turned off (or before a reload) goes
        tear_display.write(obj, None, None)
    return prepared


def pose_reader(prepared: SurfacePrepared) -> scene_inputs.PoseReader | None:
    """How a posed body's frame inputs read its posed vertices (object space), ``None`` otherwise."""
    if not prepared.posed:
        return None
    count = prepared.rest_local.shape[0]
    return lambda obj, depsgraph: read_input(obj, depsgraph, count)


def goal_positions(prepared: SurfacePrepared, inputs: scene_inputs.FrameInputs) -> np.ndarray:
    """Where the vertices' goals are in a frame: the posed input (else the rest shape) carried by
    that frame's world matrix; float64 [N, 3] [m], world space."""
    local = prepared.rest_local if inputs.posed is None else inputs.posed
    world = inputs.world
    return (local @ world[:3, :3].T + world[:3, 3]) * prepared.unit_scale


class SurfaceKind(SoftBodyKind):
    """The Surface bodies' ``frames.BodyKind``."""

    name = "surface"
    pose_reader = staticmethod(pose_reader)

    @staticmethod
    def owns(obj: bpy.types.Object) -> bool:
        return obj.type == "MESH" and is_surface(obj)

    @staticmethod
    def objects(scene: bpy.types.Scene) -> list[bpy.types.Object]:
        return [o for o in soft_bodies(scene) if is_surface(o)]

    @staticmethod
    def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                slot: frames.Slot) -> SurfacePrepared:
        slot.prepared = prepare(obj, scene, rest_world_matrix(obj, depsgraph), slot.prepared)
        return slot.prepared

    @staticmethod
    def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: SurfacePrepared) -> tuple:
        motion = _motion_settings(obj, scene)
        prepared.body.check(motion[1])
        return (prepared.key, *motion)

    @staticmethod
    def body(prepared: SurfacePrepared, key: tuple) -> SurfaceSim:
        _, settings, mat, plastic, tear, _, _, *own = key
        # a body about to step waits for the compiled solver when that is worth it
        compiled_solver.wait_for_kernel()
        return SurfaceSim(prepared.body, settings, mat, plastic, tear, own[0] if own else None)

    @staticmethod
    def control(prepared: SurfacePrepared, key: tuple, begin: scene_inputs.FrameInputs,
                end: scene_inputs.FrameInputs) -> Control:
        settings, dt = key[1], key[5]
        goals = (goal_positions(prepared, begin), goal_positions(prepared, end)) if prepared.follows else None
        # a posed mesh starts at rest in the start frame's pose
        rest = goal_positions(prepared, end) if prepared.posed else None
        return Control(dt, settings.gravity, goals, end.colliders, rest)

    # What a frame shows, and writing it.

    @staticmethod
    def baked(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: SurfacePrepared, frame: int,
              inputs: scene_inputs.FrameInputs, slot: frames.Slot) -> SurfaceFrame | None:
        baked = bake_frames.baked_frame(obj, frame)
        if baked is None:
            return None
        if SoftBodyKind.inputs_digest_changed(scene, frame, inputs, prepared.follows, bake_store.source_bake(obj)):
            slot.inputs_changed = True
        return baked

    @staticmethod
    def shown(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: SurfacePrepared, state: SurfaceState,
              inputs: scene_inputs.FrameInputs) -> SurfaceFrame:
        """The simulated ``SurfaceFrame``: each vertex's own particle, and the tear when it tears."""
        world = prepared.world
        rest = prepared.rest_local
        if prepared.follows:
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

    @staticmethod
    def blend(a: SurfaceFrame, b: SurfaceFrame, t: float) -> SurfaceFrame:
        """What a subframe F + t shows: frames F (``a``) and F + 1 (``b``) interpolated linearly; the
        tear is frame F's, and its split corners move between the two only where F + 1 has the same
        torn edges."""
        displacements = (1.0 - t) * a.displacements + t * b.displacements
        corners = a.corner_offsets
        if (corners is not None and b.corner_offsets is not None and a.torn is not None and b.torn is not None
                and np.array_equal(a.torn, b.torn)):
            corners = (1.0 - t) * corners + t * b.corner_offsets
        return SurfaceFrame(displacements, a.torn, corners)

    @staticmethod
    def write(obj: bpy.types.Object, prepared: SurfacePrepared, shown: SurfaceFrame,
              depsgraph: bpy.types.Depsgraph) -> None:
        write_back(obj, shown)

    @staticmethod
    def show_rest(obj: bpy.types.Object) -> None:
        show_rest(obj)

    # The bake (``runtime/bake``): what it stores and how outdated it is. It lives on the object.

    def fingerprint(self, obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray,
                    fresh: bool = False) -> str:
        """The digest a bake made now would store (``motion_key``).

        Raises:
            TetRigInputError (a ValueError): a setting out of range.
        """
        own = motion_key(obj, scene, world, fresh)
        partners = touching.bake_key(obj, scene, own, fresh)
        # alone: the fingerprint of before sets existed (its bakes stay current)
        return fingerprint(own) if partners is None else fingerprint((own, partners))

    @staticmethod
    def saved_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray, fresh: bool = False) -> tuple:
        """What the motion depends on as saved in the .blend (``motion_key``): a partner's part of a
        set's bake fingerprints (``touching.bake_key``)."""
        return motion_key(obj, scene, world, fresh)

    @staticmethod
    def bake_rest(obj: bpy.types.Object) -> np.ndarray:
        """The mesh's own vertices, float64 [N, 3] object space (a Surface body's "control points")."""
        return mesh_io.vertex_positions(mesh_io.mesh_of(obj))

    @staticmethod
    def preview(obj: bpy.types.Object, displacements: np.ndarray) -> None:
        """Show vertex displacements float [N, 3] (object space) while a bake runs."""
        write_back(obj, SurfaceFrame(displacements))

    @staticmethod
    def bake_frame(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
                   depsgraph: bpy.types.Depsgraph) -> tuple[np.ndarray, scene_inputs.FrameInputs, bool, SurfaceFrame | None]:
        """(displacements float64 [N, 3] object space, the frame's inputs, whether the body follows
        them, the frame when it carries a tear) of a frame to bake."""
        shown, inputs, prepared = frame_at(obj, scene, frame, depsgraph)
        return shown.displacements, inputs, prepared.follows, shown if shown.torn is not None else None


KIND = SurfaceKind()


def write_back(obj: bpy.types.Object, shown: SurfaceFrame) -> None:
    """Show a frame: the displacements as ``tetrig_offset``, the tear through ``tear_display``.
    Nothing non-finite is written."""
    if not np.all(np.isfinite(shown.displacements)):
        return
    mesh = mesh_io.mesh_of(obj)
    mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", shown.displacements)
    if object_settings(obj).use_tearing:
        torn = shown.torn if shown.torn is not None and shown.torn.any() else None
        tear_display.write(obj, torn, None if torn is None else shown.corner_offsets, update=False)
    mesh.update()  # once, for the offsets and the tear


def show_rest(obj: bpy.types.Object) -> None:
    """Zero the offsets and clear the tear of a surface body that cannot be simulated (not those of
    a mesh another soft body shows: an Alt+D copy)."""
    if in_edit_mode(obj) or others_sharing(obj):
        return
    mesh = mesh_io.mesh_of(obj)
    offset = mesh.attributes.get(binding_store.OFFSET_ATTRIBUTE)
    if offset is not None and offset.domain == "POINT":
        mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", np.zeros((len(mesh.vertices), 3)))
    tear_display.write(obj, None, None, update=False)
    mesh.update()


def frame_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
             depsgraph: bpy.types.Depsgraph) -> tuple[SurfaceFrame, scene_inputs.FrameInputs, SurfacePrepared]:
    """The simulated ``SurfaceFrame`` of ``obj`` at ``frame``, that frame's inputs and the body
    (bakes), stepped in its set of touching bodies when it has one (``touching.state_at``), else
    alone (``frames.state_at``).

    Raises:
        TetRigInputError, StaleBindingError, scene_inputs.InputsUnavailable: as live playback (of a
        member of its set too).
    """
    slot, state, inputs = state_at(obj, scene, frame, depsgraph)
    return KIND.shown(obj, scene, slot.prepared, state, inputs), inputs, slot.prepared


def state_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
             depsgraph: bpy.types.Depsgraph) -> tuple[frames.Slot, SurfaceState, scene_inputs.FrameInputs]:
    """(slot, state at ``frame``, that frame's inputs) of a Surface body, stepped in its set of
    touching bodies when it has one (``touching.state_at``), else alone (``frames.state_at``), as
    ``cage/kind.state_at`` for cages.

    Raises:
        as ``frame_at``.
    """
    found = touching.state_at(obj, scene, frame, depsgraph)
    return found if found is not None else frames.state_at(KIND, obj, scene, frame, depsgraph)

