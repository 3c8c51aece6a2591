import os, sys, bpy
# Setup for the Global Iterations and Integrator picture (issue 24: a stiff bar swings instead of creeping), run
# from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/bending.png 16 docs/screenshot_bending_setup.py
# then crop it into docs/bending.png. A 1 × 0.1 × 0.1 m bar pinned at x = 0, Continuum, 5e6 Pa (a
# soft rubber), at the defaults (Global Iterations 3 and the BDF2 Integrator), at frame 8 (its first
# swing down, 0.3 s in).
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import box_bar, open_tetrig_tab, register_from_checkout, view_selected

register_from_checkout()
for ob in list(bpy.data.objects):
    if ob.type == "MESH": bpy.data.objects.remove(ob)
scene = bpy.context.scene
obj = box_bar("Bar", (0.5, 0.0, 1.0))
mesh = obj.data
group = obj.vertex_groups.new(name="Pin")
group.add([v.index for v in mesh.vertices if v.co.x < 1e-6], 1.0, "REPLACE")
s = obj.tetrig
s.pin_group = "Pin"
s.mode = "CONTINUUM"
s.youngs_modulus = 5e6
s.volume_stiffness = 5e6 / 1.2
print("build:", bpy.ops.tetrig.build_cage())
for f in range(1, 9): scene.frame_set(f)
view_selected("FRONT")
open_tetrig_tab()
