import os, sys, bpy, math
import numpy as np
# Setup for the README's jelly picture, run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- docs/jelly.png 30 docs/screenshot_jelly_setup.py
# The jelly demo's sphere (scripts/jelly_demo.py: UV sphere r = 0.5 m, 32 x 16, Surface body,
# pressure 1e5 Pa) dropped from 1 m onto the TetRig ground, shown at the frame it is flattest
# (mid-bounce); the sidebar shows the TetRig tab with the Surface material. The add-on is
# imported from this checkout as "tetrig".
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
sys.path.insert(0, os.path.join(os.getcwd(), "scripts"))
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports
register_from_checkout()
import jelly_demo as J
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 48
scene.render.fps, scene.render.fps_base = 24, 1.0
bpy.ops.mesh.primitive_uv_sphere_add(segments=J.SEGMENTS, ring_count=J.RINGS, radius=J.RADIUS,
                                     location=(0.0, 0.0, J.DROP + J.RADIUS))
obj = bpy.context.active_object
obj.name = "Jelly"
bpy.ops.object.shade_smooth()
mat = bpy.data.materials.new("Jelly")
mat.diffuse_color = (0.85, 0.2, 0.35, 1.0)
obj.data.materials.append(mat)
bpy.ops.mesh.primitive_plane_add(size=4.0, location=(0.0, 0.0, 0.0))
bpy.context.active_object.select_set(False)
bpy.context.view_layer.objects.active = obj
obj.select_set(True)
s = obj.tetrig
s.body_type = "SURFACE"
s.areal_density, s.stretch, s.shear, s.bending = J.AREAL_DENSITY, J.STRETCH, J.SHEAR, J.BENDING
s.pressure, s.damping = J.PRESSURE, J.DAMPING
s.use_ground = True
scene.frame_set(1)
print("setup:", bpy.ops.tetrig.setup_surface())
# the flattest frame of the first bounce: the smallest height of the shown mesh
heights = []
for f in range(1, 31):
    scene.frame_set(f)
    dg = bpy.context.evaluated_depsgraph_get()
    me = obj.evaluated_get(dg).to_mesh()
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    obj.evaluated_get(dg).to_mesh_clear()
    z = co.reshape(-1, 3)[:, 2]
    heights.append(z.max() - z.min())
flat = int(np.argmin(heights)) + 1
scene.frame_set(flat)
print(f"jelly: flattest at frame {flat}, height {min(heights):.3f} m of {2 * J.RADIUS:.3f} m")
obj.select_set(False)
from mathutils import Euler
for _window, _area, space in solid_viewports():
    space.overlay.show_floor = True
    r3d = space.region_3d
    r3d.view_perspective = "PERSP"
    r3d.view_location = (0.0, 0.0, 0.35)
    r3d.view_distance = 3.2
    r3d.view_rotation = Euler((math.radians(80), 0.0, math.radians(25)), "XYZ").to_quaternion()
open_tetrig_tab()
