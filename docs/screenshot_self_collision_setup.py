import os, sys, bpy
# Setup for the Self Collision picture (a 1 m cloth of 40 x 40 quads dropped edge-on onto a soft
# ball, folded on it without passing through itself at frame 24), run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/self.png 90 docs/screenshot_self_collision_setup.py
# then crop (x 320-1320, y 60-810) into docs/self_collision.png. The Collisions subpanel (closed
# by default) is opened with a click (its header at 1101,513 after the first scroll), the sidebar
# scrolled to its last lines.
import math
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports

register_from_checkout()
for ob in list(bpy.data.objects):
    if ob.type == "MESH": bpy.data.objects.remove(ob)
scene = bpy.context.scene
bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.2, location=(0.0, 0.0, 0.2))
ball = bpy.context.active_object
ball.name = "Ball"
bpy.ops.object.shade_smooth()
ball.tetrig.use_ground = True
print("build:", bpy.ops.tetrig.build_cage())
bpy.ops.mesh.primitive_grid_add(x_subdivisions=40, y_subdivisions=40, size=1.0, location=(0.0, 0.0, 0.95),
                                rotation=(math.pi / 2, 0.0, 0.0))
cloth = bpy.context.active_object
cloth.name = "Cloth"
cloth.tetrig.body_type = "SURFACE"
cloth.tetrig.use_ground = True
cloth.tetrig.bending = 1e-4
cloth.tetrig.use_self_collision = True
print("setup:", bpy.ops.tetrig.setup_surface())
for o in bpy.context.view_layer.objects: o.select_set(False)
bpy.context.view_layer.objects.active = cloth; cloth.select_set(True)
for f in range(1, 25): scene.frame_set(f)
for _, _, space in solid_viewports():
    space.region_3d.view_location = (0.0, 0.0, 0.3)
    space.region_3d.view_distance = 2.2
scroll = "xdotool mousemove --window $W 1150 500; sleep 0.3; xdotool click --repeat 12 --delay 80 5; sleep 0.7; "
open_tetrig_tab(extra=scroll + "xdotool mousemove --window $W 1101 513; sleep 0.5; xdotool mousedown 1; "
                "sleep 0.15; xdotool mouseup 1; sleep 0.7; " + scroll)
