"""The Collisions subpanel of Simulation (closed by default): the ground, the collision objects
and the speed limit; and its Soft Bodies subpanel (cage and Surface bodies): whether the body touches
the other TetRig soft bodies of its scene (``runtime/common/touching``), how far apart they rest, which
Collision Collection limits them, and which bodies it is simulated with; and a Surface body's Self
Collision subpanel (its Distance). A Collision modifier TetRig does not use is named with what
happens instead (``scene_inputs.unused_collisions``)."""

from __future__ import annotations

from typing import Any

import bpy

from ..runtime.common import scene_inputs, touching
from ..tetrig_addon.solver.cage_self import NEIGHBOUR_DISTANCES
from ..runtime.common.properties import ROLE_SOURCE, object_settings
from .main import SoftBodySubpanel, _target, _toggled, wrapped_label


class TETRIG_PT_collisions(SoftBodySubpanel):
    bl_label = "Collisions"
    bl_parent_id = "TETRIG_PT_simulation"
    bl_options = {"DEFAULT_CLOSED"}

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        _toggled(col, s, "use_ground", "ground_height", "ground_friction", "ground_static_friction")
        col.prop(s, "use_colliders")
        col.prop(s, "max_speed")
        scene = bpy.context.scene
        for line in scene_inputs.unused_collisions(scene, obj) if scene is not None else ():
            wrapped_label(col, bpy.context, line, "INFO")


class TETRIG_PT_soft_body_collisions(SoftBodySubpanel):
    bl_label = "Soft Bodies"
    bl_parent_id = "TETRIG_PT_collisions"
    header_toggle = "use_soft_bodies"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:  # cage and Surface bodies touch each other (issue 21)
        obj = _target(context)
        return obj is not None and object_settings(obj).role == ROLE_SOURCE

    def draw(self, context: bpy.types.Context) -> None:
        """Distance and Collision Collection, then which bodies this one is simulated with."""
        SoftBodySubpanel.draw(self, context)
        obj = _target(context)
        if obj is None or self.layout is None or context.scene is None or not object_settings(obj).use_soft_bodies:
            return
        names = [o.name for o in touching.partners(obj, touching.candidates(context.scene)) if o != obj]
        if names:
            text = "Simulated together with " + ", ".join(names[:3]) + (
                f" and {len(names) - 3} more" if len(names) > 3 else "")
        elif touching.group_key(obj) is None:
            text = "Not in its Collision Collection: it touches no soft body"
        else:
            text = "No other soft body with Soft Bodies on and this Collision Collection: it steps alone"
        wrapped_label(self.layout, context, text, "INFO")
        inside = touching.placed_inside(obj)
        if inside:
            wrapped_label(self.layout, context, f"Placed inside {', '.join(inside[:3])} at the start frame: the "
                          "surfaces push apart from where they are shallow (at most 0.5 m/s), and stay overlapping "
                          "where one is deep inside the other. Move them apart for a clean start", "ERROR")

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        col.prop(s, "soft_body_distance")
        col.prop(s, "soft_body_collection")


class TETRIG_PT_self_collision(SoftBodySubpanel):
    """Self Collision (as Blender Cloth's Self Collisions): the body's parts collide with each other,
    this Distance apart (a Surface body's ``tetrig_addon.solver.self_contact``, a soft body's shown
    surface ``tetrig_addon.solver.cage_self``)."""

    bl_label = "Self Collision"
    bl_parent_id = "TETRIG_PT_collisions"
    header_toggle = "use_self_collision"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = _target(context)
        return obj is not None and object_settings(obj).role == ROLE_SOURCE

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        col.prop(s, "self_distance")
        if not s.surface_bound:  # a soft body's neighbours (``cage_self.NEIGHBOUR_DISTANCES``)
            wrapped_label(col, bpy.context, f"Parts nearer than {NEIGHBOUR_DISTANCES:g}× this at rest never collide",
                          "INFO")
