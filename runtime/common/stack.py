"""TetRig's place in the modifier stack, and what it reads there.

The TetRig modifier simulates the mesh as the modifiers before it make it (its *input*): it goes
after the modifiers that pose or shape the body (Armature, Lattice, Mirror, Hook, ...) and before
those that refine the surface (Subdivision Surface, Solidify, Bevel, ...), which then act on the
simulated result. Shape keys come before every modifier, so they are part of the input too.

- A mesh with nothing before TetRig (no enabled modifier, no shape keys) is its own input: its
  vertices are the rest shape, as always.
- A *posed* input (modifiers before TetRig, or shape keys) is read from the evaluated mesh every
  frame: the TetRig node group stores its input positions and indices in the internal attributes
  ``.tetrig_input`` and ``.tetrig_index``, which the modifiers after it carry along (Subdivision
  keeps the input's vertices first, with their attributes copied: checked every frame through the
  indices). Each frame's input is the rest shape and the goal of that frame.
- An input whose vertices are not the mesh's own (Mirror, Array, Weld before TetRig) is bound on a
  hidden points object holding one vertex per input vertex (its binding and offsets); the node
  group reads the offsets from it by index.
"""

from __future__ import annotations

from typing import Iterator
from contextlib import contextmanager

import bpy
import numpy as np

from . import mesh_io, scene_inputs
from .animation import transform_animated
from .offset_modifier import INDEX_ATTRIBUTE, INPUT_ATTRIBUTE, MODIFIER_NAME

# Modifiers that act on the simulated result: TetRig goes before the first of them.
REFINING_TYPES = frozenset({
    "SUBSURF", "MULTIRES", "SOLIDIFY", "BEVEL", "TRIANGULATE", "WIREFRAME", "REMESH", "DECIMATE",
    "EDGE_SPLIT", "WEIGHTED_NORMAL", "NORMAL_EDIT", "SKIN", "DATA_TRANSFER", "NODES", "PARTICLE_SYSTEM",
    "PARTICLE_INSTANCE", "EXPLODE", "BOOLEAN", "SCREW", "BUILD", "MASK", "OCEAN", "FLUID", "CLOTH",
    "COLLISION", "DYNAMIC_PAINT", "SOFT_BODY", "SURFACE", "UV_PROJECT", "UV_WARP",
})
# Modifiers that move vertices and nothing else: an input made by them alone has the mesh's own
# vertices, in the mesh's order.
DEFORM_TYPES = frozenset({
    "ARMATURE", "CAST", "CURVE", "DISPLACE", "HOOK", "LAPLACIANDEFORM", "LATTICE", "MESH_DEFORM",
    "SHRINKWRAP", "SIMPLE_DEFORM", "SMOOTH", "CORRECTIVE_SMOOTH", "LAPLACIANSMOOTH", "SURFACE_DEFORM",
    "WARP", "WAVE", "MESH_CACHE", "MESH_SEQUENCE_CACHE", "VERTEX_WEIGHT_EDIT", "VERTEX_WEIGHT_MIX",
    "VERTEX_WEIGHT_PROXIMITY", "GREASE_PENCIL_LATTICE",
})


class InputError(RuntimeError):
    """TetRig's input cannot be read from the evaluated mesh; the message says why and what to do."""


def tetrig_index(obj: bpy.types.Object) -> int | None:
    """Position of the TetRig modifier in the stack, or ``None``."""
    for i, mod in enumerate(obj.modifiers):
        if mod.name == MODIFIER_NAME and mod.type == "NODES":
            return i
    return None


def insert_index(obj: bpy.types.Object) -> int:
    """Where Build Cage puts the TetRig modifier: before the first refining modifier (other than
    TetRig itself), or last."""
    others = [m for m in obj.modifiers if not (m.name == MODIFIER_NAME and m.type == "NODES")]
    for i, mod in enumerate(others):
        if mod.type in REFINING_TYPES:
            return i
    return len(others)


def modifiers_before(obj: bpy.types.Object) -> list[bpy.types.Modifier]:
    """The modifiers before TetRig that are on in the viewport (they make its input); before the
    first Build Cage, the ones before where it will go."""
    end = tetrig_index(obj)
    if end is None:  # not added yet: the ones before where Build Cage will put it
        end = insert_index(obj)
    return [m for m in list(obj.modifiers)[:end] if m.show_viewport]


def has_shape_keys(obj: bpy.types.Object) -> bool:
    """Whether the mesh has shape keys beyond the basis (they shape TetRig's input)."""
    keys = mesh_io.mesh_of(obj).shape_keys
    return keys is not None and len(keys.key_blocks) > 1


def posed(obj: bpy.types.Object) -> bool:
    """Whether TetRig's input is made by modifiers or shape keys (read from the evaluated mesh
    every frame) rather than being the mesh's own vertices."""
    return bool(modifiers_before(obj)) or has_shape_keys(obj)


def own_vertices(obj: bpy.types.Object) -> bool:
    """Whether the input's vertices are the mesh's own, in its order (only deforming modifiers
    before TetRig); otherwise a points object holds the binding."""
    return all(m.type in DEFORM_TYPES for m in modifiers_before(obj))


def _animated(data: bpy.types.ID | None) -> bool:
    anim = getattr(data, "animation_data", None)
    return anim is not None and (anim.action is not None or len(anim.drivers) > 0)


def input_animated(obj: bpy.types.Object) -> bool:
    """Whether TetRig's input can change from frame to frame (then every frame is read, and a jump
    ahead plays the frames before it): the object, its shape keys or the armature, lattice, hook
    or other object a modifier before TetRig uses is animated, driven or constrained."""
    if _animated(obj) or _animated(mesh_io.mesh_of(obj).shape_keys):
        return True
    for mod in modifiers_before(obj):
        for prop in mod.bl_rna.properties:
            if prop.type != "POINTER":
                continue
            other = getattr(mod, prop.identifier, None)
            if not isinstance(other, bpy.types.Object) or other == obj:
                continue
            pose = other.pose
            if (transform_animated(other) or _animated(other) or _animated(other.data)
                    or (pose is not None and any(len(b.constraints) for b in pose.bones))):
                return True
    return False


@contextmanager
def input_only(obj: bpy.types.Object) -> Iterator[None]:
    """Within the block, the object evaluates to TetRig's input: TetRig and every modifier after
    it are off in the viewport (for Build Cage; never in a frame handler)."""
    end = tetrig_index(obj)
    later = [] if end is None else [m for m in list(obj.modifiers)[end:] if m.show_viewport]
    if end is None:  # not added yet: its input is what the modifiers before its place make
        later = [m for m in list(obj.modifiers)[insert_index(obj):] if m.show_viewport]
    for m in later:
        m.show_viewport = False
    try:
        yield
    finally:
        for m in later:
            m.show_viewport = True


# A temporary attribute on the mesh while Build Cage evaluates the input: the vertex each input
# vertex comes from (Mirror's copies carry their original's index).
SOURCE_ATTRIBUTE = "tetrig_source_index"


def evaluate_input(obj: bpy.types.Object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """TetRig's input as it is now: (positions float64 [n, 3] object space, triangles int32
    [t, 3], source int32 [n]: the mesh vertex each input vertex comes from).

    A mesh that is its own input is read directly (exactly its vertices); a posed one is evaluated
    with TetRig and the modifiers after it turned off for a moment.
    """
    mesh = mesh_io.mesh_of(obj)
    if not posed(obj):
        count = len(mesh.vertices)
        return mesh_io.vertex_positions(mesh), mesh_io.triangles(mesh), np.arange(count, dtype=np.int32)
    mesh_io.write_attribute(mesh, SOURCE_ATTRIBUTE, "INT", np.arange(len(mesh.vertices)))
    try:
        with input_only(obj):
            depsgraph = bpy.context.evaluated_depsgraph_get()
            evaluated = obj.evaluated_get(depsgraph)
            data = evaluated.to_mesh()
            if data is None:
                raise InputError(f"{obj.name}: its modifiers give no mesh to simulate.")
            try:
                source = mesh_io.read_attribute(data, SOURCE_ATTRIBUTE, np.int32)
                if source is None:  # a modifier dropped the attribute: no vertex maps back
                    source = np.full(len(data.vertices), -1, dtype=np.int32)
                return mesh_io.vertex_positions(data), mesh_io.triangles(data), source
            finally:
                evaluated.to_mesh_clear()
    finally:
        mesh_io.remove_attribute(mesh, SOURCE_ATTRIBUTE)


def read_input(obj: bpy.types.Object, depsgraph: bpy.types.Depsgraph, count: int) -> np.ndarray:
    """TetRig's input positions in the evaluated mesh now: float64 [count, 3], object space.

    Raises:
        InputError: the evaluated mesh does not carry TetRig's input (the modifier is off, or a
            modifier after it dropped or reordered the vertices), or the input's vertex count is
            no longer ``count``.
    """
    mesh = obj.evaluated_get(depsgraph).data
    if not isinstance(mesh, bpy.types.Mesh):
        raise InputError(f"{obj.name}: its evaluated geometry is not a mesh.")
    positions = mesh_io.read_attribute(mesh, INPUT_ATTRIBUTE, np.float32, 3)
    index = mesh_io.read_attribute(mesh, INDEX_ATTRIBUTE, np.int32)
    if positions is None or index is None:
        raise InputError(f"{obj.name}: the TetRig modifier is off or was removed; turn it on or press "
                         "Build Cage again.")
    if index.shape[0] < count or not np.array_equal(index[:count], np.arange(count)):
        raise InputError(f"{obj.name}: the mesh changed since binding (the modifiers before TetRig now "
                         f"make {int(index.max(initial=-1)) + 1} vertices, not {count}); press Rebind.")
    if count < index.shape[0] and index[count] == count:
        raise InputError(f"{obj.name}: the mesh changed since binding (the modifiers before TetRig now "
                         f"make more than {count} vertices); press Rebind.")
    return positions[:count].astype(np.float64)


def inputs_over(obj: bpy.types.Object, frames: list[int], count: int) -> np.ndarray:
    """TetRig's input at each of ``frames``: float64 [F, count, 3], object space (the scene is set
    to each frame and back; for exports).

    Raises:
        InputError: see ``read_input``; scene_inputs.InputsUnavailable: a render runs.
    """
    scene = bpy.context.scene
    if scene is None:
        raise InputError("no scene")
    return np.stack(scene_inputs.at_frames(scene, frames, lambda depsgraph: read_input(obj, depsgraph, count)))
