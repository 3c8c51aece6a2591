import os, sys, bpy, math
# Setup for the README's tearing picture, run from the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- docs/tear.png 30 docs/screenshot_tear_setup.py
# A 0.5 m sheet of 10 x 10 quads (Surface body: 1 kg/m², stretch 1000 N/m, shear 100 N/m,
# bending 0.001 N·m, damping 2/s, Tearing at 30 % stretch, no gravity), its 3 x 3 corner vertices
# at two corners of one side pinned and hooked to two empties that move apart at 0.5 m/s each
# (Hook modifiers before TetRig: the pins follow them), shown at frame 25 with wireframe on: torn
# along the line between the pins. The add-on is imported from this checkout as "tetrig".
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports
register_from_checkout()
import numpy as np
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
scene = bpy.context.scene
PULL = 24
scene.frame_start, scene.frame_end = 1, 1 + PULL
scene.render.fps, scene.render.fps_base = 24, 1.0
scene.use_gravity = False
bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=0.5, location=(0.0, 0.0, 0.0))
sheet = bpy.context.active_object
sheet.name = "Sheet"
mat = bpy.data.materials.new("Sheet")
mat.diffuse_color = (0.25, 0.55, 0.85, 1.0)
sheet.data.materials.append(mat)
co = np.array([v.co[:] for v in sheet.data.vertices]) + 0.25
left = (co[:, 0] <= 0.1 + 1e-6) & (co[:, 1] <= 0.1 + 1e-6)
right = (co[:, 0] >= 0.4 - 1e-6) & (co[:, 1] <= 0.1 + 1e-6)
sheet.vertex_groups.new(name="Pin").add(np.flatnonzero(left | right).tolist(), 1.0, "REPLACE")
for name, grip, direction in (("Left", left, -1.0), ("Right", right, 1.0)):
    sheet.vertex_groups.new(name=name).add(np.flatnonzero(grip).tolist(), 1.0, "REPLACE")
    empty = bpy.data.objects.new(name + "Hook", None)
    empty.empty_display_size = 0.08
    scene.collection.objects.link(empty)
    empty.keyframe_insert("location", frame=1)
    empty.location.x = direction * 0.5 * PULL / 24
    empty.keyframe_insert("location", frame=1 + PULL)
    action = empty.animation_data.action
    curves = action.fcurves if hasattr(action, "fcurves") else []
    for curve in curves:
        for key in curve.keyframe_points:
            key.interpolation = "LINEAR"
    hook = sheet.modifiers.new(name, "HOOK")
    hook.object, hook.vertex_group = empty, name
bpy.context.view_layer.objects.active = sheet
sheet.select_set(True)
s = sheet.tetrig
s.body_type = "SURFACE"
s.pin_group, s.areal_density, s.stretch, s.shear, s.bending, s.damping = "Pin", 1.0, 1e3, 100.0, 1e-3, 2.0
s.use_tearing, s.tear_threshold = True, 0.3
print("setup:", bpy.ops.tetrig.setup_surface())
for f in range(1, 2 + PULL):
    scene.frame_set(f)
dg = bpy.context.evaluated_depsgraph_get()
shown = len(sheet.evaluated_get(dg).data.vertices)
print(f"tear: frame {1 + PULL}, {shown} vertices shown for the mesh's {len(sheet.data.vertices)}")
sheet.select_set(False)
from mathutils import Euler
for _window, _area, space in solid_viewports():
    space.overlay.show_wireframes = True
    space.overlay.wireframe_threshold = 1.0
    r3d = space.region_3d
    r3d.view_perspective = "PERSP"
    r3d.view_location = (0.0, -0.1, 0.0)
    r3d.view_distance = 2.0
    r3d.view_rotation = Euler((math.radians(0), 0.0, 0.0), "XYZ").to_quaternion()
open_tetrig_tab()
