import os, sys, bpy
# Setup for the Collisions picture (a Collision modifier TetRig does not use is never ignored
# without a word), run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/collisions.png 16 docs/screenshot_collisions_setup.py
# then crop the sidebar (x 1035-1300, y 240-520) into docs/collisions_note.png. The Collisions
# subpanel (closed by default) is opened with a click and the sidebar scrolled to its last lines.
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports

register_from_checkout()
for ob in list(bpy.data.objects):
    if ob.type == "MESH": bpy.data.objects.remove(ob)
scene = bpy.context.scene
balls = []
for name, z in (("Lower", 0.6), ("Upper", 1.8)):
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.5, location=(0, 0, z))
    obj = bpy.context.active_object
    obj.name = name
    bpy.ops.object.shade_smooth()
    obj.tetrig.resolution = 4
    obj.tetrig.use_ground = True
    print("build:", bpy.ops.tetrig.build_cage())
    balls.append(obj)
lower, upper = balls
bpy.context.view_layer.objects.active = lower
bpy.ops.object.modifier_add(type="COLLISION")
for o in bpy.context.view_layer.objects: o.select_set(False)
bpy.context.view_layer.objects.active = upper; upper.select_set(True)
for f in range(1, 12): scene.frame_set(f)
list(solid_viewports())  # each 3D view: the sidebar shown, Solid shading
# open Collisions (its header at 1102,672), then scroll the sidebar down to its last lines
open_tetrig_tab(extra="xdotool mousemove --window $W 1102 672; sleep 0.5; xdotool mousedown 1; sleep 0.15; "
                      "xdotool mouseup 1; sleep 0.7; xdotool mousemove --window $W 1150 500; sleep 0.3; "
                      "xdotool click --repeat 12 --delay 80 5; sleep 0.7; ")
