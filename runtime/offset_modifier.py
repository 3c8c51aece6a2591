"""The Geometry Nodes modifier that shows the simulation: position += ``tetrig_offset``.

The frame handler writes the simulated displacement into the ``tetrig_offset`` attribute; this
modifier, first in the stack, adds it to the positions. The mesh's own coordinates (the rest shape)
are never written, so the user's shape keys (evaluated before modifiers) and later modifiers keep
working, normals are recomputed by Blender, and a zero offset gives back the rest shape bit for bit.
"""

from __future__ import annotations

from typing import Any, cast

import bpy

from .binding_store import OFFSET_ATTRIBUTE

MODIFIER_NAME = "TetRig"
NODE_GROUP_NAME = "TetRig Offset"


def _build_node_group() -> bpy.types.GeometryNodeTree:
    group = cast(bpy.types.GeometryNodeTree, bpy.data.node_groups.new(NODE_GROUP_NAME, "GeometryNodeTree"))
    # (the stubs list only 'DEFAULT' for socket_type; Blender takes any socket idname)
    for side in ("INPUT", "OUTPUT"):
        group.interface.new_socket("Geometry", in_out=side,
                                   socket_type="NodeSocketGeometry")  # type: ignore[arg-type]
    nodes, links = group.nodes, group.links
    g_in = nodes.new("NodeGroupInput")
    g_out = nodes.new("NodeGroupOutput")
    # Any: the stubs type node inputs/outputs as optional per-node classes; this wiring is fixed.
    attr: Any = nodes.new("GeometryNodeInputNamedAttribute")
    attr.data_type = "FLOAT_VECTOR"
    attr.inputs["Name"].default_value = OFFSET_ATTRIBUTE
    set_pos = nodes.new("GeometryNodeSetPosition")
    g_in.location, attr.location, set_pos.location, g_out.location = (-400, 0), (-400, -150), (-150, 0), (100, 0)
    links.new(g_in.outputs[0], set_pos.inputs["Geometry"])
    links.new(attr.outputs["Attribute"], set_pos.inputs["Offset"])
    links.new(set_pos.outputs["Geometry"], g_out.inputs[0])
    return group


def node_group() -> bpy.types.GeometryNodeTree:
    """The shared node group, created on first use."""
    group = bpy.data.node_groups.get(NODE_GROUP_NAME)
    if group is None or group.bl_idname != "GeometryNodeTree":
        return _build_node_group()
    return cast(bpy.types.GeometryNodeTree, group)


def ensure(obj: bpy.types.Object) -> bpy.types.Modifier:
    """Add the offset modifier to ``obj`` as the first modifier (or return the existing one)."""
    mod = obj.modifiers.get(MODIFIER_NAME)
    if mod is None or mod.type != "NODES":
        mod = obj.modifiers.new(MODIFIER_NAME, "NODES")
        obj.modifiers.move(len(obj.modifiers) - 1, 0)
    nodes_mod = cast(bpy.types.NodesModifier, mod)
    nodes_mod.node_group = node_group()
    return nodes_mod


def remove(obj: bpy.types.Object) -> None:
    """Remove the offset modifier, and the node group once nothing uses it."""
    mod = obj.modifiers.get(MODIFIER_NAME)
    if mod is not None and mod.type == "NODES":
        obj.modifiers.remove(mod)
    group = bpy.data.node_groups.get(NODE_GROUP_NAME)
    if group is not None and group.users == 0:
        bpy.data.node_groups.remove(group)
