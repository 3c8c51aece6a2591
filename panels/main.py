"""The sidebar tab: the body type, then Cage (build settings, Show Cage, what was built) or Surface
(Set Up Surface Body, what it is made of), Simulation (presets and material, a Surface body's
stretch, shear, bending, pressure and density; Goal and Collisions (``collisions``) closed by
default), Plasticity
(closed), Tearing (Surface bodies, closed), Quality (cages: the surface repair pass, closed by
default), Bake (bake, free, status, Lock Interface), Output (reset, the exports menu, remove).
Less-used subpanels start closed so that Output and Remove fit a 1600×900 window."""

from __future__ import annotations

import textwrap
from typing import Any

import bpy
import numpy as np

from ..runtime.common.mesh_io import mesh_of
from ..runtime import bake
from ..runtime.app import render_guard
from ..runtime import scene as driver
from ..runtime.cage.model import binding_problem
from ..runtime.common.soft_body import in_edit_mode
from ..runtime.common import cost, stack
from ..runtime.common.animation import frame_dt
from ..tetrig_addon.solver import backend as solver_backend
from ..tetrig_addon.solver import substeps_for
from ..runtime.common.properties import BODY_SURFACE, object_settings, ROLE_CAGE, ROLE_SOURCE, scene_settings
from .menus import TETRIG_MT_export, TETRIG_MT_presets


def _target(context: bpy.types.Context) -> bpy.types.Object | None:
    """The mesh the panel edits: the active object, or the source of an active cage."""
    obj = context.active_object
    if obj is not None and object_settings(obj).role == ROLE_CAGE and object_settings(obj).source is not None:
        return object_settings(obj).source
    return obj if obj is not None and obj.type == "MESH" else None


# Average width of a label character [px at UI scale 1] and the room an icon and the panel's
# margins take, for wrapping text to the sidebar's width (Blender labels do not wrap themselves).
CHAR_WIDTH_PX = 6.5
LABEL_MARGIN_PX = 52.0
MIN_WRAP = 20


def wrapped_label(layout: bpy.types.UILayout, context: bpy.types.Context, text: str, icon: Any = "NONE") -> None:
    """``text`` as labels wrapped to the region's width, the icon on the first line."""
    region = context.region
    scale = context.preferences.system.ui_scale if context.preferences is not None else 1.0
    width = region.width / scale if region is not None else 300.0
    chars = max(MIN_WRAP, int((width - LABEL_MARGIN_PX) / CHAR_WIDTH_PX))
    col = layout.column(align=True)
    for i, line in enumerate(textwrap.wrap(text, chars) or [""]):
        col.label(text=line, icon=icon if i == 0 else ("BLANK1" if icon != "NONE" else "NONE"))


def _toggled(col: bpy.types.UILayout, s: Any, toggle: str, *names: str) -> None:
    """A checkbox and the settings it switches on, greyed out while it is off."""
    col.prop(s, toggle)
    sub = col.column()
    sub.active = bool(getattr(s, toggle))
    for name in names:
        sub.prop(s, name)


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
        active = context.active_object
        if obj is None and active is not None and active.type == "ARMATURE":
            layout.label(text="Armature: its jiggle bones are below", icon="BONE_DATA")
            return
        if obj is None:
            layout.label(text="Select a mesh object", icon="INFO")
            return
        s = object_settings(obj)
        layout.use_property_split = True
        layout.use_property_decorate = False
        layout.row().prop(s, "body_type", expand=True)
        note = size_note(obj, context.scene)
        if note and layout is not None:
            wrapped_label(layout, context, note, "INFO")
        if s.body_type == BODY_SURFACE:
            self.draw_surface(context, obj, s)
            return
        col = layout.column()
        col.row().prop(s, "cage_method", expand=True)
        col.prop(s, "resolution")
        col.prop(s, "max_control_points")
        editing = in_edit_mode(obj) if s.role == ROLE_SOURCE else False
        stale = binding_problem(obj) if s.role == ROLE_SOURCE and not editing else ""
        layout.operator("tetrig.build_cage", icon="FILE_REFRESH" if stale else "MESH_ICOSPHERE",
                        text="Rebind" if stale else ("Rebuild Cage & Bind" if s.role == ROLE_SOURCE else None))
        if s.role != ROLE_SOURCE:
            return
        box = layout.box()
        if s.surface_bound:
            wrapped_label(box, context, "Set up as a Surface body: Build Cage & Bind replaces it with a "
                                        "cage", "INFO")
            return
        cage = s.cage
        if cage is not None:
            kind = "Hull cage" if s.cage_note or s.cage_method == "HULL" else "Fit cage"
            # "points", not "control points": one line in the default sidebar (the toggle costs one)
            wrapped_label(box, context, f"{kind}: {len(mesh_of(cage).vertices)} points, "
                                        f"{len(mesh_of(cage).polygons)} tets", "OUTLINER_OB_LATTICE")
            # a labelled button of its own: an eye beside the line above cut its text short
            row = box.row()
            row.use_property_split = False
            row.prop(s, "show_cage", toggle=True, icon="HIDE_OFF" if s.show_cage else "HIDE_ON")
        outside = f", {s.outside_count} bound to their nearest tet" if s.outside_count else ""
        wrapped_label(box, context, f"{s.bound_vertex_count} vertices bound{outside}", "VERTEXSEL")
        if s.cage_note:  # a Fit that fell back to the hull says so; a Hull cage's note is its own
            note = f"Not a fit: {s.cage_note}" if s.cage_method == "FIT" else s.cage_note[:1].upper() + s.cage_note[1:]
            wrapped_label(box, context, f"{note}.", "INFO")
        if editing:
            wrapped_label(box, context, "Edit Mode: the mesh is shown as edited; the simulation waits "
                                        "until Edit Mode ends", "EDITMODE_HLT")
        elif stale:
            wrapped_label(box, context, stale, "ERROR")
        warning = driver.status(obj)
        if warning and warning != stale and not editing:
            wrapped_label(box, context, warning, "ERROR")


    def draw_surface(self, context: bpy.types.Context, obj: bpy.types.Object, s: Any) -> None:
        """The main panel of a Surface body: its button and what it is made of."""
        layout = self.layout
        bound = s.role == ROLE_SOURCE and s.surface_bound
        layout.operator("tetrig.setup_surface", icon="FILE_REFRESH" if bound else "MOD_CLOTH",
                        text="Set Up Again" if bound else None)
        if s.role != ROLE_SOURCE:
            return
        box = layout.box()
        if not bound:
            wrapped_label(box, context, "Bound to a cage: Set Up Surface Body replaces the cage", "INFO")
            return
        mesh = mesh_of(obj)
        wrapped_label(box, context, f"Surface: {len(mesh.vertices)} vertices, {len(mesh.edges)} edges, "
                                    f"{len(mesh.polygons)} faces", "MOD_CLOTH")
        editing = in_edit_mode(obj)
        warning = driver.status(obj)
        if editing:
            wrapped_label(box, context, "Edit Mode: the mesh is shown as edited; the simulation waits "
                                        "until Edit Mode ends", "EDITMODE_HLT")
        elif warning:
            wrapped_label(box, context, warning, "ERROR")


def frame_cost(context: bpy.types.Context, obj: bpy.types.Object) -> tuple[cost.FrameCost, str] | None:
    """The estimated cost of one of the soft body's frames and what its sweeps go through, or
    ``None`` (no cage yet, or no scene)."""
    s = object_settings(obj)
    scene = context.scene
    if scene is None:
        return None
    if s.surface_bound:
        mesh = mesh_of(obj)
        elements, what = len(mesh.edges) + len(mesh.polygons), "edges and faces"
    elif s.cage is not None and s.cage.type == "MESH":
        elements, what = len(mesh_of(s.cage).polygons), "tets"
    else:
        return None
    substeps = substeps_for(s.steps_per_second, frame_dt(scene))
    global_iterations = s.global_iterations if not s.surface_bound and s.mode != "PBD" else 0
    return cost.frame_cost(substeps, s.iterations, elements, global_iterations), what


def size_note(obj: bpy.types.Object, scene: bpy.types.Scene | None) -> str:
    """One line when the object is larger than ``LARGE_M`` or smaller than ``SMALL_M`` across: its
    size, and that the materials act at that size ('' otherwise). An OBJ imported 32 m tall jiggles
    like a 32 m jelly."""
    size = float(np.max(np.array(obj.dimensions))) * (scene.unit_settings.scale_length if scene is not None else 1.0)
    if SMALL_M <= size <= LARGE_M or size <= 0.0:
        return ""
    shown = f"{size:.0f} m" if size >= 10.0 else f"{size * 1000:.1f} mm" if size < 0.01 else f"{size:.2f} m"
    return (f"{obj.name} is {shown} across: stiffness and density act at that size, as on a real "
            f"object {shown} across; scale it to the size it stands for if it is not that big")


# Sizes [m] outside which the panel says how big the object is (``size_note``).
LARGE_M = 10.0
SMALL_M = 0.01


class TETRIG_PT_simulation(SoftBodySubpanel):
    bl_label = "Simulation"
    header_toggle = "simulate"

    def draw(self, context: bpy.types.Context) -> None:
        SoftBodySubpanel.draw(self, context)  # (not super(): the tests draw it on a stand-in)
        obj = _target(context)
        found = frame_cost(context, obj) if obj is not None else None
        if obj is not None and found is not None and found[0].slow and self.layout is not None:
            wrapped_label(self.layout, context, found[0].message(object_settings(obj).steps_per_second, found[1]),
                          "ERROR")

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        if s.surface_bound:
            self.draw_surface(obj, s, col)
            return
        row = col.row(align=True)  # Blender's preset row: the menu, add, remove the chosen one
        row.menu(TETRIG_MT_presets.__name__, text=TETRIG_MT_presets.bl_label, icon="PRESET")
        row.operator("tetrig.preset_add", text="", icon="ADD")
        row.operator("tetrig.preset_add", text="", icon="REMOVE").remove_active = True
        col.prop(s, "mode")
        if s.mode == "PBD":
            col.prop(s, "stiffness")
        else:
            col.prop(s, "youngs_modulus")
        if s.mode == "CONTINUUM":  # the continuum tets always keep volume
            col.prop(s, "volume_stiffness")
        else:
            _toggled(col, s, "use_volume", "volume_stiffness")
        col.prop(s, "damping")
        col.prop(s, "density")
        col.prop(s, "steps_per_second")
        col.prop(s, "iterations")
        if s.mode != "PBD":
            col.prop(s, "global_iterations")
            col.prop(s, "integrator")
        col.prop_search(s, "pin_group", obj, "vertex_groups")
        _solver_label(col)

    def draw_surface(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        """A Surface body's material (SurfaceMaterial) and steps."""
        sub = col.column(align=True)
        sub.prop(s, "stretch")
        sub.prop(s, "shear")
        sub.prop(s, "bending")
        col.prop(s, "pressure")
        col.prop(s, "areal_density")
        col.prop(s, "damping")
        col.prop(s, "steps_per_second")
        col.prop(s, "iterations")
        col.prop_search(s, "pin_group", obj, "vertex_groups")
        _solver_label(col)


def _solver_label(col: bpy.types.UILayout) -> None:
    """Which solver steps the bodies (the compiled kernel, or NumPy while it compiles)."""
    compiling = solver_backend.compiling() or solver_backend.global_step_compiling()
    col.label(text=f"Solver: {solver_backend.name()}" + (" (compiling…)" if compiling else ""), icon="SYSTEM")


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


class TETRIG_PT_plasticity(SoftBodySubpanel):
    bl_label = "Plasticity"
    bl_parent_id = "TETRIG_PT_simulation"
    bl_options = {"DEFAULT_CLOSED"}
    header_toggle = "use_plasticity"

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        col.prop(s, "plastic_yield")
        col.prop(s, "plastic_rate")
        col.prop(s, "plastic_max_strain")
        if not s.surface_bound and stack.posed(obj):  # model.optional_settings
            col.label(text="Not applied: posed by modifiers or shape keys", icon="INFO")


class TETRIG_PT_tearing(SoftBodySubpanel):
    bl_label = "Tearing"
    bl_parent_id = "TETRIG_PT_simulation"
    bl_options = {"DEFAULT_CLOSED"}
    header_toggle = "use_tearing"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:
        obj = _target(context)
        return obj is not None and object_settings(obj).role == ROLE_SOURCE and object_settings(obj).surface_bound

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        col.prop(s, "tear_threshold")


class TETRIG_PT_quality(SoftBodySubpanel):
    bl_label = "Quality"
    bl_options = {"DEFAULT_CLOSED"}
    header_toggle = "use_quality"

    @classmethod
    def poll(cls, context: bpy.types.Context) -> bool:  # the pass repairs a cage's blend
        obj = _target(context)
        return obj is not None and object_settings(obj).role == ROLE_SOURCE and not object_settings(obj).surface_bound

    def draw_settings(self, obj: bpy.types.Object, s: Any, col: bpy.types.UILayout) -> None:
        sub = col.column(align=True)
        sub.prop(s, "quality_max_stretch")
        sub.prop(s, "quality_max_compression")
        sub.prop(s, "quality_clamp_iterations")
        sub = col.column(align=True)
        sub.prop(s, "quality_smoothing")
        sub.prop(s, "quality_smoothing_iterations")
        if s.points is not None:  # the points object has no edges to clamp (quality_pass)
            col.label(text="Not applied: the input has new vertices (Mirror, Array)", icon="INFO")


class TETRIG_PT_bake(SoftBodySubpanel):
    bl_label = "Bake"

    def draw(self, context: bpy.types.Context) -> None:
        obj = _target(context)
        scene = context.scene
        if obj is None or scene is None:
            return
        layout = self.layout
        job = bake.running()
        if job is not None:  # a bake runs (the modal operator): its progress, and how to stop it
            layout.progress(factor=job.fraction, type="BAR",
                            text=f"{job.current_name or '...'}: frame {job.current_frame}/{job.frame_end}")
            layout.label(text="Cancel", icon="EVENT_ESC")
        state = bake.status(obj, scene)
        col = layout.column(align=True)
        if state is None:
            wrapped_label(col, context, "Not baked: simulated live", "INFO")
        elif state.outdated:
            wrapped_label(col, context, f"Bake outdated: playing the bake ({state.describe()}); "
                                        "bake again to see the changed settings", "ERROR")
        else:
            wrapped_label(col, context, f"Baked {state.describe()}", "CHECKMARK")
        row = layout.row(align=True)
        row.operator("tetrig.bake", text="Bake Again" if state is not None else "Bake", icon="REC")
        row.operator("tetrig.free_bake", icon="TRASH")
        preview = scene_settings(scene).bake_preview  # an eye: the row keeps room for "Bake Again"
        row.prop(scene_settings(scene), "bake_preview", text="", icon="HIDE_OFF" if preview else "HIDE_ON")
        row = layout.row(align=True)
        row.operator("tetrig.bake", text="Bake All").all_soft_bodies = True
        row.operator("tetrig.free_bake", text="Free All").all_soft_bodies = True
        # Render > Lock Interface, which TetRig turns on for safe renders (render_guard)
        text = "Lock Interface (set by TetRig)" if render_guard.lock_interface_turned_on(scene) else None
        layout.prop(scene.render, "use_lock_interface", text=text, toggle=False)


class TETRIG_PT_output(SoftBodySubpanel):
    bl_label = "Output"

    def draw(self, context: bpy.types.Context) -> None:
        col = self.layout.column(align=True)
        col.operator("tetrig.reset_to_rest", icon="FILE_REFRESH")
        obj = _target(context)
        if obj is not None and not object_settings(obj).surface_bound:  # the exports write a cage's data
            col.menu(TETRIG_MT_export.__name__, icon="EXPORT")
        col.separator()
        col.operator("tetrig.remove", icon="X")
