import os, sys, bpy
# Setup for the Soft Bodies picture (two soft balls, the upper one dropped onto the lower, resting
# on it at frame 30), run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/touching.png 40 docs/screenshot_touching_setup.py
# then crop (x 320-1320, y 60-810) into docs/touching.png. The Collisions subpanel (closed by
# default) is opened with a click, the sidebar scrolled to its last lines.
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports

register_from_checkout()
for ob in list(bpy.data.objects):
    if ob.type == "MESH": bpy.data.objects.remove(ob)
scene = bpy.context.scene
balls = []
for name, x, z in (("Lower", 0.0, 0.5), ("Upper", 0.15, 1.8)):
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.5, location=(x, 0, z))
    obj = bpy.context.active_object
    obj.name = name
    bpy.ops.object.shade_smooth()
    obj.tetrig.use_ground = True
    print("build:", bpy.ops.tetrig.build_cage())
    balls.append(obj)
lower, upper = balls
for o in bpy.context.view_layer.objects: o.select_set(False)
bpy.context.view_layer.objects.active = upper; upper.select_set(True)
for f in range(1, 31): scene.frame_set(f)
for _, _, space in solid_viewports():  # each 3D view: the sidebar shown, Solid shading, the balls near
    space.region_3d.view_location = (0.1, 0.0, 1.0)
    space.region_3d.view_distance = 4.5
# scroll the sidebar down, open Collisions (its header then at 1101,492), scroll down again
scroll = "xdotool mousemove --window $W 1150 500; sleep 0.3; xdotool click --repeat 12 --delay 80 5; sleep 0.7; "
open_tetrig_tab(extra=scroll + "xdotool mousemove --window $W 1101 492; sleep 0.5; xdotool mousedown 1; "
                "sleep 0.15; xdotool mouseup 1; sleep 0.7; " + scroll)
