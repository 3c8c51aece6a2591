"""The sidebar tab: Cage (build settings), Simulation (settings), Bake (bake, free, status), Output
(export, reset, remove)."""

from __future__ import annotations

import textwrap
from typing import Any

import bpy

from ..runtime.mesh_io import mesh_of
from ..runtime import bake, simulation
from ..runtime.properties import object_settings, ROLE_CAGE, ROLE_SOURCE
from .presets import TETRIG_MT_presets


def _target(context: bpy.types.Context) -> bpy.types.Object | None:
    """The mesh the panel edits: the active object, or the source of an active cage."""
    obj = context.active_object
    if obj is not None and object_settings(obj).role == ROLE_CAGE and object_settings(obj).source is not None:
        return object_settings(obj).source
    return obj if obj is not None and obj.type == "MESH" else None


# Characters per line of a wrapped warning in the sidebar at its default width.
WARNING_WRAP = 36


class TetRigPanel(bpy.types.Panel):
    """Base of the TetRig panels (not registered itself)."""

    bl_space_type = "VIEW_3D"
    bl_region_type = "UI"
    bl_category = "TetRig"


class SoftBodySubpanel(TetRigPanel):
    """Base of the subpanels shown only for a bound soft body (not registered itself)."""

    bl_parent_id = "TETRIG_PT_main"

    # An Object.tetrig property drawn as the subpanel's header checkbox; it greys the body out.
    header_toggle = ""

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = _target(context)
        return obj is not None and object_settings(obj).role == ROLE_SOURCE

    def draw_header(self, context: bpy.types.Context) -> None:
        obj = _target(context)
        if obj is not None and self.header_toggle:
            self.layout.prop(object_settings(obj), self.header_toggle, text="")

    def draw(self, context: bpy.types.Context) -> None:
        """Lay out a property-split column of the target soft body for ``draw_settings``; the
        header toggle, if any, greys it out."""
        obj = _target(context)
        if obj is None:
            return
        s = object_settings(obj)
        layout = self.layout
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.active = bool(getattr(s, self.header_toggle)) if self.header_toggle else True
        self.draw_settings(obj, s, layout.column())

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        """The subpanel's content (subpanels that use the base ``draw`` override it)."""


class TETRIG_PT_main(TetRigPanel):
    bl_label = "TetRig Soft Body"

    def draw(self, context: bpy.types.Context) -> None:
        layout = self.layout
        obj = _target(context)
        if obj is None:
            layout.label(text="Select a mesh object", icon="INFO")
            return
        s = object_settings(obj)
        layout.use_property_split = True
        layout.use_property_decorate = False
        col = layout.column()
        col.prop(s, "resolution")
        col.prop(s, "max_control_points")
        layout.operator("tetrig.build_cage", icon="MESH_ICOSPHERE",
                        text="Rebuild Cage & Bind" if s.role == ROLE_SOURCE else None)
        if s.role == ROLE_SOURCE:
            layout.prop(s, "show_cage")
            box = layout.box()
            cage = s.cage
            if cage is not None:
                box.label(text=f"{len(mesh_of(cage).vertices)} control points, "
                               f"{len(mesh_of(cage).polygons)} tets", icon="OUTLINER_OB_LATTICE")
            box.label(text=f"{s.bound_vertex_count} vertices bound"
                           + (f", {s.outside_count} to nearest tet" if s.outside_count else ""),
                      icon="VERTEXSEL")
            warning = simulation.status(obj)
            if warning:  # the sidebar is narrow: wrap rather than cut off the message
                col = box.column(align=True)
                for i, line in enumerate(textwrap.wrap(warning, WARNING_WRAP)):
                    col.label(text=line, icon="ERROR" if i == 0 else "BLANK1")


class TETRIG_PT_simulation(SoftBodySubpanel):
    bl_label = "Simulation"
    header_toggle = "simulate"

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        col.menu(TETRIG_MT_presets.__name__, text=TETRIG_MT_presets.bl_label, icon="PRESET")
        col.prop(s, "mode")
        if s.mode == "PBD":
            col.prop(s, "stiffness")
        else:
            col.prop(s, "youngs_modulus")
        if s.mode == "CONTINUUM":  # the continuum tets always keep volume
            col.prop(s, "volume_stiffness")
        else:
            col.prop(s, "use_volume")
            sub = col.column()
            sub.active = s.use_volume
            sub.prop(s, "volume_stiffness")
        col.prop(s, "damping")
        col.prop(s, "substeps")
        col.prop(s, "max_speed")
        col.prop(s, "density")
        col.prop_search(s, "pin_group", obj, "vertex_groups")
        col.prop(s, "use_ground")
        sub = col.column()
        sub.active = s.use_ground
        sub.prop(s, "ground_height")
        sub.prop(s, "ground_friction")
        col.prop(s, "use_colliders")


class TETRIG_PT_goal(SoftBodySubpanel):
    bl_label = "Goal"
    bl_parent_id = "TETRIG_PT_simulation"
    bl_options = {"DEFAULT_CLOSED"}
    header_toggle = "use_goal"

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        col.prop_search(s, "goal_group", obj, "vertex_groups")
        sub = col.column(align=True)
        if s.goal_group:
            sub.prop(s, "goal_min")
            sub.prop(s, "goal_max")
        else:
            sub.prop(s, "goal_default")
        col.prop(s, "goal_stiffness")
        col.prop(s, "goal_damping")


class TETRIG_PT_bake(SoftBodySubpanel):
    bl_label = "Bake"

    def draw(self, context: bpy.types.Context) -> None:
        obj = _target(context)
        if obj is None:
            return
        layout = self.layout
        scene = context.scene
        if scene is None:
            return
        state = bake.status(obj, scene)
        col = layout.column(align=True)
        if state is None:
            col.label(text="Not baked: frames are simulated live", icon="INFO")
        elif state.outdated:
            col.label(text="Bake outdated", icon="ERROR")
            col.label(text=f"Playing the bake ({state.describe()})")
            col.label(text="Bake again to see the changed settings")
        else:
            col.label(text=f"Baked {state.describe()}", icon="CHECKMARK")
        row = layout.row(align=True)
        row.operator("tetrig.bake", text="Bake Again" if state is not None else "Bake", icon="REC")
        row.operator("tetrig.free_bake", icon="TRASH")
        row = layout.row(align=True)
        row.operator("tetrig.bake", text="Bake All").all_soft_bodies = True
        row.operator("tetrig.free_bake", text="Free All").all_soft_bodies = True


class TETRIG_PT_output(SoftBodySubpanel):
    bl_label = "Output"

    def draw(self, context: bpy.types.Context) -> None:
        col = self.layout.column(align=True)
        col.operator("tetrig.reset_to_rest", icon="FILE_REFRESH")
        col.operator("tetrig.export_json", icon="EXPORT")
        col.operator("tetrig.export_animation_json", icon="EXPORT")
        col.operator("tetrig.export_pc2", icon="EXPORT")
        col.operator("tetrig.remove", icon="X")
