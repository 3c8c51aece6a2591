import os, sys, bpy, mathutils
# Setup for the README's character picture (a skinned body walking, its belly jiggling), run from
# the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/character.png 25 docs/screenshot_character_setup.py
# then crop (x 0-1300, y 50-810) into docs/character.png. The scene is the one
# tests/test_blender_characters.py measures (tests/character_scene.py: a 2 m body on a 3-bone rig,
# its back pinned, the belly free) walking 1.5 m in half a second; the shot is frame 9, mid-walk,
# with the posed shape (the Armature alone) drawn as a wire ghost.
sys.path[:0] = [os.path.join(os.getcwd(), "docs"), os.path.join(os.getcwd(), "tests")]
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports
from character_scene import armature, body, soft_belly, walk
register_from_checkout()
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 48
obj, belly, spine = body(bpy)
rig = armature(bpy)
rig.show_in_front = True
obj.modifiers.new("Armature", "ARMATURE").object = rig
walk(rig)
soft_belly(obj)
# the posed shape alone, as a wire ghost: a copy of the mesh with only the Armature modifier
ghost = bpy.data.objects.new("Posed (no TetRig)", obj.data.copy())
scene.collection.objects.link(ghost)
ghost.modifiers.new("Armature", "ARMATURE").object = rig
ghost.display_type = "WIRE"
bpy.context.view_layer.objects.active = obj
obj.select_set(True)
scene.frame_set(1)
print("build:", bpy.ops.tetrig.build_cage())
bpy.ops.object.shade_smooth()
for f in range(1, 10):
    scene.frame_set(f)
for _window, _area, space in solid_viewports():
    # in front of the belly (+y), a little to the side and above: the belly trails the wire
    # ghost of the posed shape
    view = space.region_3d
    view.view_rotation = mathutils.Vector((0.35, 1.0, 0.45)).normalized().to_track_quat("Z", "Y")
    view.view_location = (0.9, 0.0, 1.0)
    view.view_distance = 4.6
    view.view_perspective = "PERSP"
open_tetrig_tab()
