import os, sys, bpy, subprocess
# Setup for the README pictures, run from the checkout; SHOT picks the picture:
#   SHOT=panel  the panel with the Material Presets menu open, a Suzanne dropped on a plane (docs/panel.png)
#   SHOT=cage   the bunny with Show Cage on (docs/cage.png)
#   SHOT=bake   the bunny while baking: progress bars in the status bar and the panel (docs/bake.png)
#   LATE_CLICK=x,y  one more click just before the shot (see below)
#   GUI=1 SHOT=panel ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- docs/panel.png 14 docs/screenshot_setup.py
# (delays: panel 14, cage 12, bake 16; the presets menu opens 1.2 s and the bake starts 1.4 s
# before the shot, after screenshot.py's Escape for the splash). The add-on is imported from this checkout as package
# "tetrig"; xdotool opens the TetRig tab (and the presets menu); EXTRA_CLICKS="x,y;x,y" clicks more.
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import register_from_checkout, solid_viewports
SHOT = os.environ.get("SHOT", "panel")
register_from_checkout()
for ob in list(bpy.data.objects):
    if ob.type == "MESH":
        bpy.data.objects.remove(ob)
scene = bpy.context.scene
if SHOT == "panel":
    bpy.ops.mesh.primitive_plane_add(size=8)
    bpy.ops.mesh.primitive_monkey_add(location=(0, 0, 1.2))
    obj = bpy.context.active_object
    bpy.ops.object.shade_smooth()
    obj.tetrig.use_ground = True
else:
    bpy.ops.wm.obj_import(filepath=os.path.join(os.getcwd(), "..", "shared", "meshes", "stanford-bunny.obj"))
    obj = bpy.context.selected_objects[0]
    bpy.ops.object.shade_smooth()
    obj.location.z = 0.12
    obj.tetrig.use_ground = True
bpy.context.view_layer.objects.active = obj
obj.select_set(True)
print("build:", bpy.ops.tetrig.build_cage())
# the bake runs only the last 1.4 s before the shot (screenshot.py's Escape would cancel it earlier),
# a few frames with the NumPy solver: over 24 frames they fill a visible part of the progress bar
scene.frame_end = 24 if SHOT == "bake" else 120
if SHOT == "cage":
    obj.tetrig.show_cage = True
    obj.select_set(False)
if SHOT == "panel":
    for f in range(1, 31):
        scene.frame_set(f)
for window, area, _space in solid_viewports():
    win_region = [r for r in area.regions if r.type == "WINDOW"][0]
    with bpy.context.temp_override(window=window, area=area, region=win_region):
        obj.select_set(True)
        bpy.ops.view3d.view_selected()
        if SHOT == "cage":
            obj.select_set(False)

clicks = os.environ.get("EXTRA_CLICKS", "")
extra = "".join(f"xdotool mousemove --window $W {c.split(',')[0]} {c.split(',')[1]}; sleep 0.5; "
                "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.7; "
                for c in clicks.split(";") if c)
rest = "xdotool mousemove --window $W 700 500; "
# screenshot.py's arguments: OUT DELAY SETUP; it presses Escape (the splash) 1.5 s before the shot
DELAY = float(sys.argv[sys.argv.index("--") + 2])


def _click_tab():
    # a detached process, so Blender's event loop runs while the pointer moves and clicks
    subprocess.Popen(["bash", "-c",
        "sleep 0.5; W=$(xdotool search --onlyvisible --class blender | head -1); echo win=$W; "
        "xdotool windowfocus --sync $W; xdotool mousemove --window $W 1088 501; sleep 0.5; "
        "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.5; "
        "xdotool mousemove --window $W 1300 230; sleep 0.5; xdotool mousemove --window $W 1307 248; sleep 0.5; "
        "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.7; " + extra + rest +
        "xdotool getmouselocation"])


def _bake():
    # the modal Bake, as a click on Bake starts it (the screenshot is taken while it runs)
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "VIEW_3D")
    region = next(r for r in area.regions if r.type == "WINDOW")
    with bpy.context.temp_override(window=window, screen=window.screen, area=area, region=region):
        print("bake:", bpy.ops.tetrig.bake("INVOKE_DEFAULT"))


# A click 1.2 s before the shot, after screenshot.py's Escape (which closes menus and dialogs):
# the Material Presets menu for SHOT=panel, or LATE_CLICK="x,y" (e.g. "1174,794", Remove Soft Body).
LATE_CLICK = os.environ.get("LATE_CLICK", "1165,355" if SHOT == "panel" else "")


def _late_click():
    x, y = LATE_CLICK.split(",")
    subprocess.Popen(["bash", "-c",
        "W=$(xdotool search --onlyvisible --class blender | head -1); "
        f"xdotool mousemove --window $W {x} {y}; sleep 0.2; xdotool mousedown 1; sleep 0.1; xdotool mouseup 1; "
        f"sleep 0.2; xdotool mousemove --window $W {int(x) + 25} {int(y) + 26}"])


bpy.app.timers.register(_click_tab, first_interval=5.0)
if LATE_CLICK:
    bpy.app.timers.register(_late_click, first_interval=DELAY - 1.2)
if SHOT == "bake":  # after screenshot.py's Escape, which would cancel it
    bpy.app.timers.register(_bake, first_interval=DELAY - 1.4)
