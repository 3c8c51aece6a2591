"""Cage soft bodies in the scene driver: what a frame reads, how it steps, what it shows and writes.

A frame of a cage body: its inputs (``scene_inputs.read``: the world matrix its goals follow, the
colliders, a posed mesh's pose) → the engine's step of the control points (``solver.step``, with
goals that follow the object's animation or its posed input) → the blended displacement of every
vertex, repaired by the quality pass when it is on, written to ``tetrig_offset`` (the offset
modifier adds it). The rest shape is never written. A baked frame is read from the cage instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ...tetrig_addon import solver
from ...tetrig_addon.body import Control
from ...tetrig_addon.cage import CageBody
from ...tetrig_addon.fingerprint import fingerprint
from ...tetrig_addon.solver.self_contact import SelfCollision
from ..common import bake_store, binding_store, compiled_solver, frames, mesh_io, scene_inputs, touching
from ..common.animation import frame_dt, rest_world_matrix
from ..common.properties import ROLE_SOURCE, is_surface, object_settings
from ..common.soft_body import (StaleBindingError, in_edit_mode, others_sharing, read_input, sim_settings,
                                soft_bodies)
from ..common.soft_kind import SoftBodyKind
from . import cage_object, instances, model, quality_pass
from .model import Prepared


@dataclass(frozen=True)
class Shown:
    """What a frame of a cage body shows, in its object space.

    Attributes:
        displacements: float64 [Q, 3], the control points from where they rest this frame.
        posed: float64 [Q, 3] or ``None``: where a posed mesh's control points rest this frame.
    """

    displacements: np.ndarray
    posed: np.ndarray | None = None


def pose_reader(prepared: Prepared) -> scene_inputs.PoseReader | None:
    """How a posed mesh's frame inputs read its posed control points (``None`` for the others)."""
    follow = prepared.follow
    if follow is None:
        return None
    count = prepared.indices.shape[0]

    def read(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph) -> np.ndarray:
        return follow.posed(read_input(obj, depsgraph, count))

    return read


def posed_world(prepared: Prepared, inputs: scene_inputs.FrameInputs) -> np.ndarray:
    """A posed mesh's control points at rest in a frame's pose: float64 [Q, 3] [m], world space."""
    assert inputs.posed is not None
    world = inputs.world
    return (inputs.posed @ world[:3, :3].T + world[:3, 3]) * prepared.unit_scale


class CageKind(SoftBodyKind):
    """The cage soft bodies' ``frames.BodyKind``."""

    name = "cage"
    pose_reader = staticmethod(pose_reader)

    @staticmethod
    def owns(obj: bpy.types.Object) -> bool:
        return obj.type == "MESH" and object_settings(obj).role == ROLE_SOURCE and not is_surface(obj)

    @staticmethod
    def objects(scene: bpy.types.Scene) -> list[bpy.types.Object]:
        return [o for o in soft_bodies(scene) if not is_surface(o)]

    @staticmethod
    def objects_changed(scene: bpy.types.Scene) -> bool:
        """Objects were added or deleted: what a deleted soft body leaves goes, and Alt+D copies
        become instances (``instances``); returns whether a copy did (its frame is to be shown)."""
        instances.tidy()
        return instances.adopt_all(CageKind.objects(scene))

    @staticmethod
    def adopt(objects: list[bpy.types.Object]) -> bool:
        """Alt+D copies among the scene's soft bodies become instances (``instances.adopt``)."""
        return instances.adopt_all(objects)

    @staticmethod
    def prepare(obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                slot: frames.Slot) -> Prepared:
        slot.prepared = model.prepare(obj, scene, rest_world_matrix(obj, depsgraph), slot.prepared)
        return slot.prepared

    @staticmethod
    def motion_key(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared) -> tuple:
        # in model.motion_key's order (the bake's fingerprint): plasticity and self-collision only when on
        return (prepared.key, sim_settings(obj, scene), frame_dt(scene), scene.frame_start,
                *model.optional_settings(obj, scene, prepared.follow is not None))

    @staticmethod
    def body(prepared: Prepared, key: tuple) -> CageBody:
        # a body about to step waits for the compiled solver when that is worth it
        compiled_solver.wait_for_kernel(global_step=key[1].global_iterations > 0)
        plastic = next((k for k in key[4:] if isinstance(k, solver.PlasticSettings)), None)
        own = next((k for k in key[4:] if isinstance(k, SelfCollision)), None)
        # its shown mesh's triangles when it collides with itself (a set adds them for the others)
        return CageBody(prepared.model, key[1], plastic, prepared.triangles if own else None, own)

    @staticmethod
    def control(prepared: Prepared, key: tuple, begin: scene_inputs.FrameInputs,
                end: scene_inputs.FrameInputs) -> Control:
        settings, dt = key[1], key[2]
        goals, rest = None, None
        if prepared.follow is not None:  # a posed mesh: its goals and rest shape are each frame's pose
            goals = (posed_world(prepared, begin), posed_world(prepared, end))
            rest = goals[1]
        elif prepared.follows:
            goals = (model.goal_positions(prepared, begin.world), model.goal_positions(prepared, end.world))
        return Control(dt, settings.gravity, goals, end.colliders, rest)

    # What a frame shows, and writing it.

    @staticmethod
    def baked(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared, frame: int,
              inputs: scene_inputs.FrameInputs, slot: frames.Slot) -> Shown | None:
        """The baked frame, or ``None``; notes a current frame whose inputs changed since baking."""
        baked = bake_store.baked_displacements(obj, frame)
        if baked is None:
            return None
        if SoftBodyKind.inputs_digest_changed(scene, frame, inputs, prepared.follows, bake_store.source_bake(obj)):
            slot.inputs_changed = True
        return Shown(baked, inputs.posed)

    @staticmethod
    def shown(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Prepared, state: solver.State,
              inputs: scene_inputs.FrameInputs) -> Shown:
        """The simulated frame: the control points' displacements in object space."""
        positions = state.shown()
        if not prepared.follows:
            return Shown(model.local_displacements(prepared, positions))
        return Shown(model.local_displacements(prepared, positions, inputs.world, inputs.posed), inputs.posed)

    @staticmethod
    def blend(a: Shown, b: Shown, t: float) -> Shown:
        """What a subframe F + t shows: frames F (``a``) and F + 1 (``b``) interpolated linearly
        (the control points, and where a posed mesh's rest this frame)."""
        posed = None if a.posed is None or b.posed is None else (1.0 - t) * a.posed + t * b.posed
        return Shown((1.0 - t) * a.displacements + t * b.displacements, posed)

    @staticmethod
    def write(obj: bpy.types.Object, prepared: Prepared, shown: Shown, depsgraph: bpy.types.Depsgraph) -> None:
        write_back(obj, prepared, shown.displacements, shown.posed, shown_input(obj, prepared, depsgraph))

    @staticmethod
    def show_rest(obj: bpy.types.Object) -> None:
        show_rest(obj)

    # The bake (``runtime/bake``): what it stores and how outdated it is.

    def fingerprint(self, obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray,
                    fresh: bool = False) -> str:
        """The digest a bake made now would store (``model.motion_key``).

        Raises:
            TetRigInputError (a ValueError): a setting out of range.
        """
        own = model.motion_key(obj, scene, world, fresh)
        partners = touching.bake_key(obj, scene, own, fresh)
        # alone: the fingerprint of before sets existed (its bakes stay current)
        return fingerprint(own) if partners is None else fingerprint((own, partners))

    @staticmethod
    def saved_key(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray, fresh: bool = False) -> tuple:
        """What the motion depends on as saved in the .blend (``model.motion_key``): a partner's part of
        a set's bake fingerprints (``touching.bake_key``)."""
        return model.motion_key(obj, scene, world, fresh)

    @staticmethod
    def bake_rest(obj: bpy.types.Object) -> np.ndarray:
        """The control points at rest, float64 [Q, 3] object space: what a baked frame's
        displacements are added to.

        Raises:
            StaleBindingError: the cage mesh was edited.
        """
        cage_data = cage_object.read(object_settings(obj).cage)
        if cage_data is None:
            raise StaleBindingError(f"{obj.name}: its cage mesh was edited; press Build Cage again.")
        return cage_data[0]

    @staticmethod
    def preview(obj: bpy.types.Object, displacements: np.ndarray) -> None:
        """Show control-point displacements float [Q, 3] (object space) while a bake runs."""
        slot = frames.find(obj)
        if slot is not None and slot.prepared is not None:
            write_back(obj, slot.prepared, displacements)

    @classmethod
    def bake_frame(cls, obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
                   depsgraph: bpy.types.Depsgraph) -> tuple[np.ndarray, scene_inputs.FrameInputs, bool, None]:
        """(displacements float64 [Q, 3] object space, the frame's inputs, whether the body follows
        them, nothing more to store) of a frame to bake."""
        slot, state, inputs = state_at(obj, scene, frame, depsgraph)
        return cls.shown(obj, scene, slot.prepared, state, inputs).displacements, inputs, slot.prepared.follows, None


KIND = CageKind()


def state_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
             depsgraph: bpy.types.Depsgraph) -> tuple[frames.Slot, solver.State, scene_inputs.FrameInputs]:
    """(slot, state at ``frame``, that frame's inputs) of a cage soft body, stepped in its set of
    touching bodies when it has one (``common/touching.state_at``), else alone (``frames.state_at``).

    Raises:
        StaleBindingError, ValueError, scene_inputs.InputsUnavailable: a broken body (or member), or
        frames to sample during a render.
    """
    found = touching.state_at(obj, scene, frame, depsgraph)
    return found if found is not None else frames.state_at(KIND, obj, scene, frame, depsgraph)


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


def write_back(obj: bpy.types.Object, prepared: Prepared, displacements: np.ndarray,
               posed: np.ndarray | None = None, input_positions: np.ndarray | None = None) -> None:
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
    if not np.all(np.isfinite(displacements)):
        return
    offsets = quality_pass.vertex_offsets(obj, prepared, displacements, input_positions)
    holder = binding_store.shown_holder(obj)  # its own offsets object when its mesh is shared (Alt+D)
    mesh_io.write_attribute(holder, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", offsets)
    holder.update()
    if holder != mesh_io.mesh_of(obj):  # a points or offsets object's offsets change the source's result
        obj.update_tag()
    cage = object_settings(obj).cage
    if cage is not None:
        shown = displacements if posed is None else displacements + posed - prepared.rest_local
        mesh_io.write_attribute(mesh_io.mesh_of(cage), binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", shown)
        mesh_io.mesh_of(cage).update()


def show_rest(obj: bpy.types.Object) -> None:
    """Zero the offsets of a soft body that cannot be simulated, so it shows its input (its rest
    shape, posed) rather than a stale frame. Leaves a mesh in Edit Mode alone."""
    s = object_settings(obj)
    if in_edit_mode(obj):
        return
    holders = {binding_store.shown_holder(obj)}
    if not others_sharing(obj):  # a mesh another soft body shows (Alt+D) is never zeroed for it
        holders |= {mesh_io.mesh_of(obj), binding_store.holder(obj)}
    for holder in holders:
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


def displacements_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
                     depsgraph: bpy.types.Depsgraph) -> np.ndarray:
    """The simulated control-point displacements at ``frame`` in object space, from where they rest
    in that frame (a posed mesh's pose, else the cage's rest): float64 [Q, 3] (bakes, exports).

    Raises:
        StaleBindingError, ValueError, scene_inputs.InputsUnavailable: a broken body, or frames to
        sample during a render.
    """
    slot, state, inputs = state_at(obj, scene, frame, depsgraph)
    return KIND.shown(obj, scene, slot.prepared, state, inputs).displacements
