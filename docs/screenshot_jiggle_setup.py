import os, sys, bpy, subprocess, math
# Setup for the README's jiggle picture, run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/jiggle.png 17 docs/screenshot_jiggle_setup.py
# then crop into docs/jiggle.png. A "tail": a body bone keyed to swing sideways and stop, and a
# chain of 8 jiggle bones (Tail preset) hanging down, mid-swing at frame 17, one of them selected with its collision
# sphere drawn, a sphere collider (an empty with Jiggle Collider on) beside it. TAB_CLICK="x,y" clicks the
# sidebar's TetRig tab (window coordinates, e.g. "1307,248") after the splash screen is gone
# (TAB_CLICK_AT seconds, default 16: the screenshot helper closes the splash at its delay − 1.5 s); the add-on is imported from this checkout as "tetrig".
import tempfile
link_dir = tempfile.mkdtemp(prefix="tetrig-shot-")
os.symlink(os.getcwd(), os.path.join(link_dir, "tetrig"))
sys.path.insert(0, link_dir)
import tetrig
tetrig.register()
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 60
data = bpy.data.armatures.new("Tail")
rig = bpy.data.objects.new("Tail", data)
scene.collection.objects.link(rig)
bpy.context.view_layer.objects.active = rig
rig.select_set(True)
data.display_type = "BBONE"
bpy.ops.object.mode_set(mode="EDIT")
body = data.edit_bones.new("Body")
body.head, body.tail = (0, 0, 1.6), (0, 0, 2.0)
body.bbone_x = body.bbone_z = 0.06
parent = body
for i in range(8):
    b = data.edit_bones.new(f"Tail.{i:02d}")
    b.head, b.tail = (0, 0, 1.6 - 0.15 * i), (0, 0, 1.6 - 0.15 * (i + 1))
    b.bbone_x = b.bbone_z = 0.04 * (1 - i / 10)
    b.parent, b.use_connect = parent, i > 0
    parent = b
bpy.ops.object.mode_set(mode="POSE")
pb = rig.pose.bones["Body"]
for frame, x in ((1, 0.0), (12, -0.5), (20, -0.5), (34, 0.2), (44, 0.0)):
    pb.location = (x, 0, 0); pb.keyframe_insert("location", frame=frame)  # bone x: sideways in the front view
root = rig.pose.bones["Tail.00"]
data.bones.active = root.bone
bpy.ops.script.execute_preset(filepath=os.path.join(os.getcwd(), "presets", "tetrig", "jiggle", "Tail.py"),
                              menu_idname="TETRIG_MT_jiggle_presets")
root.tetrig_jiggle.collision_radius = 0.05
print("apply to chain:", bpy.ops.tetrig.jiggle_apply_chain())
tip = rig.pose.bones["Tail.07"]
data.bones.active = tip.bone
ball = bpy.data.objects.new("Ball", None)
ball.empty_display_type = "SPHERE"; ball.empty_display_size = 0.2; ball.location = (-1.05, 0.0, 0.75)
scene.collection.objects.link(ball)
ball.tetrig_jiggle.use_as_collider = True
for f in range(1, 18):
    scene.frame_set(f)
for b in rig.pose.bones:  # Blender 4.3 keeps selection on Bone
    (b.bone if "select" not in b.bl_rna.properties else b).select = b.name in {"Tail.07", "Tail.05"}
for window in bpy.context.window_manager.windows:
    for area in window.screen.areas:
        if area.type == "VIEW_3D":
            space = area.spaces.active; space.show_region_ui = True; space.shading.type = "SOLID"
            space.overlay.show_relationship_lines = False
            win_region = [r for r in area.regions if r.type == "WINDOW"][0]
            with bpy.context.temp_override(window=window, area=area, region=win_region):
                bpy.ops.view3d.view_axis(type="FRONT")
                bpy.ops.view3d.view_all()
                space.region_3d.view_distance *= 0.8
TAB = os.environ.get("TAB_CLICK", "")
def _click():
    if TAB:
        x, y = TAB.split(",")
        subprocess.Popen(["bash", "-c",
            f"sleep 0.5; W=$(xdotool search --onlyvisible --class blender | head -1); xdotool windowfocus --sync $W; "
            f"xdotool mousemove --window $W {x} {y}; sleep 0.4; xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; "
            "sleep 0.5; xdotool mousemove --window $W 500 500"])
bpy.app.timers.register(_click, first_interval=float(os.environ.get("TAB_CLICK_AT", "16")))
