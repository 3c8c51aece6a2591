"""Helpers for the screenshot setups run in the real Blender (docs/screenshot_*_setup.py, executed
by ../shared/tools/real-blender/screenshot.py from the checkout)."""
import os
import subprocess
import sys
import tempfile

import bpy


def register_from_checkout():
    """Import this checkout as the add-on package ``tetrig`` and register it; returns the module."""
    link_dir = tempfile.mkdtemp(prefix="tetrig-shot-")
    os.symlink(os.getcwd(), os.path.join(link_dir, "tetrig"))
    sys.path.insert(0, link_dir)
    import tetrig
    tetrig.register()
    return tetrig


def solid_viewports():
    """The 3D viewports of every window, each set to Solid shading with the sidebar shown:
    yields (window, area, space)."""
    for window in bpy.context.window_manager.windows:
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                space = area.spaces.active
                space.show_region_ui = True
                space.shading.type = "SOLID"
                yield window, area, space


def open_tetrig_tab(after_s: float = 5.0, extra: str = "") -> None:
    """After ``after_s`` seconds, click the status bar (it closes the splash screen) and then the
    sidebar's TetRig tab, then run ``extra`` (more xdotool commands, the window in $W), from a
    detached process so Blender's event loop runs meanwhile (window coordinates of the 1600x900
    virtual screen)."""
    def _click():
        subprocess.Popen(["bash", "-c",
            "sleep 0.5; W=$(xdotool search --onlyvisible --class blender | head -1); "
            "xdotool windowfocus --sync $W; xdotool mousemove --window $W 1000 892; sleep 0.5; "
            "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.5; "
            "xdotool mousemove --window $W 1300 230; sleep 0.5; xdotool mousemove --window $W 1307 248; "
            "sleep 0.5; xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.7; " + extra +
            "xdotool mousemove --window $W 700 500"])
    bpy.app.timers.register(_click, first_interval=after_s)


def box_bar(name: str, offset=(0.0, 0.0, 0.0)):
    """A 1 × 0.1 × 0.1 m box (a unit cube's faces cut 10 times, scaled), moved by ``offset``, linked
    to the scene and made the only selected, active object; returns the object."""
    import bmesh

    mesh = bpy.data.meshes.new(name)
    bm = bmesh.new()
    bmesh.ops.create_cube(bm, size=1.0)
    bmesh.ops.subdivide_edges(bm, edges=bm.edges[:], cuts=10, use_grid_fill=True)
    bmesh.ops.remove_doubles(bm, verts=bm.verts[:], dist=1e-6)  # the cube's faces share their edges
    bmesh.ops.scale(bm, vec=(1.0, 0.1, 0.1), verts=bm.verts[:])
    bmesh.ops.translate(bm, vec=offset, verts=bm.verts[:])
    bm.to_mesh(mesh)
    bm.free()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    for o in bpy.context.scene.objects:
        o.select_set(o is obj)
    bpy.context.view_layer.objects.active = obj
    return obj


def view_selected(axis: str, shading: str = "SOLID") -> None:
    """Every 3D viewport (``solid_viewports``) looks along ``axis`` ('FRONT', 'TOP', ...) at the
    selected objects, with ``shading``."""
    for window, area, space in solid_viewports():
        space.shading.type = shading
        for region in area.regions:
            if region.type == "WINDOW":
                with bpy.context.temp_override(window=window, area=area, region=region):
                    bpy.ops.view3d.view_axis(type=axis)
                    bpy.ops.view3d.view_selected()
