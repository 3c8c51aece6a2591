import os, sys, bpy
# Setup for the thin-rod picture (a hull cage that had fallen in pieces), run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/rod.png 16 docs/screenshot_thin_rod_setup.py
# then crop it into docs/thin_rod.png. A 1 × 0.1 × 0.1 m box (faces cut 10 times) at the origin,
# Hull cage at Resolution 8: the lattice is one cell thick, its slivers cut the cage in two, and the
# build makes the cells finer until it is one body; the panel's note says so.
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import box_bar, open_tetrig_tab, register_from_checkout, view_selected

register_from_checkout()
for ob in list(bpy.data.objects):
    if ob.type == "MESH": bpy.data.objects.remove(ob)
scene = bpy.context.scene
obj = box_bar("Rod")
mesh = obj.data
s = obj.tetrig
s.cage_method = "HULL"
s.resolution = 8
print("build:", bpy.ops.tetrig.build_cage())
print("note:", s.cage_note)
s.show_cage = True
view_selected("TOP", "WIREFRAME")
open_tetrig_tab()
