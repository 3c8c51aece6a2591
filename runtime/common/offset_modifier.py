"""The Geometry Nodes modifier that shows the simulation: position += ``tetrig_offset``.

The frame handler writes the simulated displacement into the ``tetrig_offset`` attribute; this
modifier adds it to the positions of its input (where it sits in the stack: ``stack``). The
mesh's own coordinates (the rest shape) are never written, so the user's shape keys and the
modifiers around it keep working, normals are recomputed by Blender, and a zero offset gives back
the input bit for bit.

A torn Surface body is shown split along its torn edges (``tear_display``): a Split Edges node
splits the edges flagged ``tetrig_torn`` after the input is stored (so ``stack.read_input`` sees
the input's own vertices first, and each split copy carries the index of the vertex it copies),
and the offset adds each copy's corners' ``tetrig_tear_offset``.
"""

from __future__ import annotations

from typing import Any, cast

import bpy

from .binding_store import OFFSET_ATTRIBUTE

# A torn Surface body's edges to split (EDGE, BOOLEAN) and, per face corner, how far the corner's
# particle is from its vertex's own (CORNER, FLOAT_VECTOR): written by ``runtime/surface/tear_display``.
TORN_ATTRIBUTE = "tetrig_torn"
TEAR_OFFSET_ATTRIBUTE = "tetrig_tear_offset"

MODIFIER_NAME = "TetRig"
NODE_GROUP_NAME = "TetRig Offset"
# The node group's layout version, stored on it: a group saved by an older TetRig is rebuilt in
# place (the modifiers using it keep it).
NODE_GROUP_VERSION = 3
VERSION_KEY = "tetrig_version"
# Internal attributes (a leading dot hides them in the UI) the node group stores on its output:
# its input positions and their indices, read by ``stack.read_input``.
INPUT_ATTRIBUTE = ".tetrig_input"
INDEX_ATTRIBUTE = ".tetrig_index"
# The node group's object input: the points object holding the offsets of an input whose
# vertices are not the mesh's own (``stack``); empty for the others.
POINTS_SOCKET = "Points"


def _build_node_group(group: bpy.types.GeometryNodeTree) -> None:
    """Fill ``group``: store the input positions and indices, split the torn edges, then
    position += tetrig_offset (the mesh's attribute) + the points object's tetrig_offset at the
    stored index (zero without a points object) + tetrig_tear_offset on the points (zero when
    nothing is torn)."""
    group.nodes.clear()
    group.interface.clear()
    # (the stubs list only 'DEFAULT' for socket_type; Blender takes any socket idname)
    group.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")  # type: ignore[arg-type]
    group.interface.new_socket(POINTS_SOCKET, in_out="INPUT", socket_type="NodeSocketObject")  # type: ignore[arg-type]
    group.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")  # type: ignore[arg-type]
    nodes, links = group.nodes, group.links
    # Any: the stubs type node inputs/outputs as optional per-node classes; this wiring is fixed.
    g_in: Any = nodes.new("NodeGroupInput")
    g_out: Any = nodes.new("NodeGroupOutput")
    store_pos: Any = nodes.new("GeometryNodeStoreNamedAttribute")
    store_pos.data_type, store_pos.domain = "FLOAT_VECTOR", "POINT"
    store_pos.inputs["Name"].default_value = INPUT_ATTRIBUTE
    store_index: Any = nodes.new("GeometryNodeStoreNamedAttribute")
    store_index.data_type, store_index.domain = "INT", "POINT"
    store_index.inputs["Name"].default_value = INDEX_ATTRIBUTE
    position: Any = nodes.new("GeometryNodeInputPosition")
    index: Any = nodes.new("GeometryNodeInputIndex")
    # The split comes after the input is stored: the input's own vertices keep their indices and
    # come first (Split Edges appends the copies), and each copy carries the stored position and
    # index of the vertex it copies, so ``stack.read_input`` reads the input as before. An absent
    # attribute reads false: nothing is split.
    torn: Any = nodes.new("GeometryNodeInputNamedAttribute")
    torn.data_type = "BOOLEAN"
    torn.inputs["Name"].default_value = TORN_ATTRIBUTE
    split: Any = nodes.new("GeometryNodeSplitEdges")
    own: Any = nodes.new("GeometryNodeInputNamedAttribute")
    own.data_type = "FLOAT_VECTOR"
    own.inputs["Name"].default_value = OFFSET_ATTRIBUTE
    points: Any = nodes.new("GeometryNodeObjectInfo")
    points.transform_space = "ORIGINAL"
    theirs: Any = nodes.new("GeometryNodeInputNamedAttribute")
    theirs.data_type = "FLOAT_VECTOR"
    theirs.inputs["Name"].default_value = OFFSET_ATTRIBUTE
    # The points object's offsets are sampled at the stored input index, not the vertex index:
    # the same before a split, and a split copy's is the vertex it copies.
    stored_index: Any = nodes.new("GeometryNodeInputNamedAttribute")
    stored_index.data_type = "INT"
    stored_index.inputs["Name"].default_value = INDEX_ATTRIBUTE
    sample: Any = nodes.new("GeometryNodeSampleIndex")
    sample.data_type, sample.domain = "FLOAT_VECTOR", "POINT"
    add: Any = nodes.new("ShaderNodeVectorMath")
    add.operation = "ADD"
    # A corner attribute read where Set Position evaluates its offset (the point domain) is the
    # mean of the point's corners (Blender's domain interpolation); after the split a point's
    # corners are one fan, which all hold that fan's offset. Absent, it reads zero, and adding
    # zero leaves the offset bit for bit.
    tear: Any = nodes.new("GeometryNodeInputNamedAttribute")
    tear.data_type = "FLOAT_VECTOR"
    tear.inputs["Name"].default_value = TEAR_OFFSET_ATTRIBUTE
    add_tear: Any = nodes.new("ShaderNodeVectorMath")
    add_tear.operation = "ADD"
    set_pos: Any = nodes.new("GeometryNodeSetPosition")
    for node, x, y in ((g_in, -1100, 0), (position, -1100, -150), (index, -1100, -250), (store_pos, -850, 0),
                       (store_index, -650, 0), (torn, -650, -150), (split, -450, 0), (own, -650, -300),
                       (points, -650, -450), (theirs, -650, -650), (stored_index, -650, -800),
                       (sample, -400, -450), (add, -200, -300), (tear, -400, -250), (add_tear, -50, -300),
                       (set_pos, 0, 0), (g_out, 250, 0)):
        node.location = (x, y)
    links.new(g_in.outputs[0], store_pos.inputs["Geometry"])
    links.new(position.outputs[0], store_pos.inputs["Value"])
    links.new(store_pos.outputs[0], store_index.inputs["Geometry"])
    links.new(index.outputs[0], store_index.inputs["Value"])
    links.new(store_index.outputs[0], split.inputs["Mesh"])
    links.new(torn.outputs["Attribute"], split.inputs["Selection"])
    links.new(split.outputs["Mesh"], set_pos.inputs["Geometry"])
    links.new(g_in.outputs[1], points.inputs["Object"])
    links.new(points.outputs["Geometry"], sample.inputs["Geometry"])
    links.new(theirs.outputs["Attribute"], sample.inputs["Value"])
    links.new(stored_index.outputs["Attribute"], sample.inputs["Index"])
    links.new(own.outputs["Attribute"], add.inputs[0])
    links.new(sample.outputs[0], add.inputs[1])
    links.new(add.outputs[0], add_tear.inputs[0])
    links.new(tear.outputs["Attribute"], add_tear.inputs[1])
    links.new(add_tear.outputs[0], set_pos.inputs["Offset"])
    links.new(set_pos.outputs["Geometry"], g_out.inputs[0])
    group[VERSION_KEY] = NODE_GROUP_VERSION


def node_group() -> bpy.types.GeometryNodeTree:
    """The shared node group, created on first use and rebuilt in place when an older TetRig made
    it."""
    group = bpy.data.node_groups.get(NODE_GROUP_NAME)
    if group is None or group.bl_idname != "GeometryNodeTree":
        group = bpy.data.node_groups.new(NODE_GROUP_NAME, "GeometryNodeTree")
    tree = cast(bpy.types.GeometryNodeTree, group)
    if tree.get(VERSION_KEY) != NODE_GROUP_VERSION:
        _build_node_group(tree)
    return tree


def ensure(obj: bpy.types.Object, position: int = 0,
           points: bpy.types.Object | None = None) -> bpy.types.Modifier:
    """Add the offset modifier to ``obj`` at ``position`` in the stack (or keep the existing one
    where it is), reading offsets from ``points`` when given."""
    mod = obj.modifiers.get(MODIFIER_NAME)
    if mod is None or mod.type != "NODES":
        mod = obj.modifiers.new(MODIFIER_NAME, "NODES")
        obj.modifiers.move(len(obj.modifiers) - 1, min(position, len(obj.modifiers) - 1))
    nodes_mod = cast(bpy.types.NodesModifier, mod)
    group = node_group()
    nodes_mod.node_group = group
    socket = group.interface.items_tree.get(POINTS_SOCKET)
    if socket is not None:
        _set_input(nodes_mod, cast(Any, socket).identifier, points)
    return nodes_mod


def _set_input(mod: bpy.types.NodesModifier, identifier: str, value: Any) -> None:
    """Set a node-group input of ``mod``: Blender 5.2 moved them from the modifier's ID
    properties (``mod[identifier]``, which now raises TypeError) to
    ``mod.properties.inputs.<identifier>.value``."""
    inputs = getattr(getattr(mod, "properties", None), "inputs", None)
    if inputs is not None and hasattr(inputs, identifier):
        getattr(inputs, identifier).value = value
    else:
        mod[identifier] = value


def remove(obj: bpy.types.Object) -> None:
    """Remove the offset modifier, and the node group once nothing uses it."""
    mod = obj.modifiers.get(MODIFIER_NAME)
    if mod is not None and mod.type == "NODES":
        obj.modifiers.remove(mod)
    group = bpy.data.node_groups.get(NODE_GROUP_NAME)
    if group is not None and group.users == 0:
        bpy.data.node_groups.remove(group)
