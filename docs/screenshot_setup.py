import os, sys, bpy
# Setup for the README picture, run from the checkout (see README "The N-panel"):
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- docs/panel.png 11 docs/screenshot_setup.py
# The add-on is imported from this checkout as package "tetrig"; xdotool opens the TetRig tab.
import tempfile
link_dir = tempfile.mkdtemp(prefix="tetrig-shot-")
os.symlink(os.getcwd(), os.path.join(link_dir, "tetrig"))
sys.path.insert(0, link_dir)
import tetrig
tetrig.register()
for ob in list(bpy.data.objects):
    if ob.type == "MESH":
        bpy.data.objects.remove(ob)
bpy.ops.mesh.primitive_plane_add(size=8)
bpy.ops.mesh.primitive_monkey_add(location=(0, 0, 1.2))
obj = bpy.context.active_object
bpy.ops.object.shade_smooth()
obj.tetrig.use_ground = True
print("build:", bpy.ops.tetrig.build_cage())
bpy.context.view_layer.objects.active = obj
obj.select_set(True)
bpy.context.scene.frame_end = 120
for f in range(1, 31):
    bpy.context.scene.frame_set(f)
for window in bpy.context.window_manager.windows:
    for area in window.screen.areas:
        if area.type == "VIEW_3D":
            space = area.spaces.active
            space.show_region_ui = True
            space.shading.type = "SOLID"
            for region in area.regions:
                if region.type == "UI":
                    try:
                        region.active_panel_category = "TetRig"
                    except Exception as exc:
                        print("category:", exc)
            win_region = [r for r in area.regions if r.type == "WINDOW"][0]
            with bpy.context.temp_override(window=window, area=area, region=win_region):
                bpy.ops.view3d.view_selected()

import subprocess
def _click_tab():
    # a detached process, so Blender's event loop runs while the pointer moves and clicks
    subprocess.Popen(["bash", "-c",
        "sleep 0.5; W=$(xdotool search --onlyvisible --class blender | head -1); echo win=$W; "
        "xdotool windowfocus --sync $W; xdotool mousemove --window $W 1088 501; sleep 0.5; "
        "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.5; "
        "xdotool mousemove --window $W 1300 230; sleep 0.5; xdotool mousemove --window $W 1307 248; sleep 0.5; "
        "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.5; "
        "xdotool mousemove --window $W 700 500; "
        "xdotool getmouselocation"])

bpy.app.timers.register(_click_tab, first_interval=5.0)
