import os, sys, bpy, subprocess
# Setup for the README's Goal picture, run from the checkout:
#   GUI=1 EXTRA_CLICKS="1104,620" ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/goal.png 12 docs/screenshot_goal_setup.py
# then crop the sidebar (x 1035-1300, y 80-810) into docs/panel_goal.png. EXTRA_CLICKS opens the
# Goal subpanel (closed by default); the add-on is imported from this checkout as "tetrig".
import tempfile
link_dir = tempfile.mkdtemp(prefix="tetrig-shot-")
os.symlink(os.getcwd(), os.path.join(link_dir, "tetrig"))
sys.path.insert(0, link_dir)
import tetrig
tetrig.register()
for ob in list(bpy.data.objects):
    if ob.type == "MESH": bpy.data.objects.remove(ob)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 48
bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.5, location=(0, 0, 1))
obj = bpy.context.active_object
bpy.ops.object.shade_smooth()
vg = obj.vertex_groups.new(name="Goal")
vg.add([v.index for v in obj.data.vertices if v.co.z > 0.3], 1.0, 'REPLACE')
obj.location.x = 0; obj.keyframe_insert("location", index=0, frame=1)
obj.location.x = 2; obj.keyframe_insert("location", index=0, frame=12)
obj.tetrig.resolution = 4; obj.tetrig.use_goal = True; obj.tetrig.goal_group = "Goal"
scene.frame_set(1)
print("build:", bpy.ops.tetrig.build_cage())
bpy.context.view_layer.objects.active = obj; obj.select_set(True)
for f in range(1, 15): scene.frame_set(f)
for window in bpy.context.window_manager.windows:
    for area in window.screen.areas:
        if area.type == "VIEW_3D":
            space = area.spaces.active; space.show_region_ui = True; space.shading.type = "SOLID"
            win_region = [r for r in area.regions if r.type == "WINDOW"][0]
            with bpy.context.temp_override(window=window, area=area, region=win_region):
                bpy.ops.view3d.view_selected()
CLICKS = os.environ.get("EXTRA_CLICKS", "")  # "x,y;x,y" in window coordinates
extra = "".join(f"xdotool mousemove --window $W {c.split(',')[0]} {c.split(',')[1]}; sleep 0.5; xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.7; "
                for c in CLICKS.split(";") if c)
def _click():
    subprocess.Popen(["bash", "-c",
        "sleep 0.5; W=$(xdotool search --onlyvisible --class blender | head -1); "
        "xdotool windowfocus --sync $W; xdotool mousemove --window $W 1088 501; sleep 0.5; "
        "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.5; "
        "xdotool mousemove --window $W 1300 230; sleep 0.5; xdotool mousemove --window $W 1307 248; sleep 0.5; "
        "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.7; " + extra +
        "xdotool mousemove --window $W 700 500; xdotool getmouselocation"])
bpy.app.timers.register(_click, first_interval=5.0)
