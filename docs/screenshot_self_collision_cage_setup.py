import os, sys, bpy
# Setup for the Self Collision picture of a soft body (the engine tests' soft U, its lower arm and
# base pinned, its upper arm sagged onto the lower arm at frame 30), run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/u.png 90 docs/screenshot_self_collision_cage_setup.py
# then crop (x 320-1300, y 80-530) into docs/self_collision_cage.png. The Collisions subpanel (closed by default) is opened
# with a click, the sidebar scrolled to its last lines.
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
sys.path.insert(0, os.getcwd())
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports
from engine_scenes import soft_u_object

register_from_checkout()
for ob in list(bpy.data.objects):
    if ob.type == "MESH": bpy.data.objects.remove(ob)
scene = bpy.context.scene
obj, _ = soft_u_object(bpy, True)
for f in range(1, 31): scene.frame_set(f)
from mathutils import Quaternion
for _, _, space in solid_viewports():  # from the front (looking along +y), the fold in profile
    space.region_3d.view_rotation = Quaternion((0.7071068, 0.7071068, 0.0, 0.0))
    space.region_3d.view_perspective = "ORTHO"
    space.region_3d.view_location = (0.3, 0.05, 0.09)
    space.region_3d.view_distance = 0.9
scroll = "xdotool mousemove --window $W 1150 500; sleep 0.3; xdotool click --repeat 12 --delay 80 5; sleep 0.7; "
open_tetrig_tab(extra=scroll + "xdotool mousemove --window $W 1102 492; sleep 0.5; xdotool mousedown 1; "
                "sleep 0.15; xdotool mouseup 1; sleep 0.7; " + scroll)
