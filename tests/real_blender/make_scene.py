"""Build the render-test scene inside the real Blender (a .blend saved by bpy 5.0 does not open in
4.3): one unbaked and one baked soft body over a ground plane, a camera and a sun, Cycles at
160×120 with motion blur (so subframes are rendered), frames 1–12.

    blender -b --factory-startup --python tests/real_blender/make_scene.py -- OUT_DIR

Writes OUT_DIR/scene.blend, rendering to OUT_DIR/frame_####.png.
"""

import math
import os
import sys

import bpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import _addon_loader  # noqa: E402

out_dir = os.path.abspath(sys.argv[sys.argv.index("--") + 1])
os.makedirs(out_dir, exist_ok=True)
addon = _addon_loader.load_addon()
bpy.ops.wm.read_factory_settings(use_empty=True)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 12
scene.render.fps, scene.render.fps_base = 24, 1.0

bpy.ops.mesh.primitive_plane_add(size=8.0, location=(0.0, 0.0, 0.0))
bpy.context.active_object.name = "Floor"


def soft_body(name, add, x):
    add(location=(x, 0.0, 1.0))
    obj = bpy.context.active_object
    obj.name = name
    obj.tetrig.resolution = 5
    obj.tetrig.use_ground = True
    obj.tetrig.youngs_modulus = 2e4
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    return obj


live = soft_body("Live", lambda **kw: bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.6, **kw), -0.9)
baked = soft_body("Baked", bpy.ops.mesh.primitive_monkey_add, 0.9)
bpy.context.view_layer.objects.active = baked
assert bpy.ops.tetrig.bake() == {"FINISHED"}
scene.frame_set(1)

bpy.ops.object.camera_add(location=(0.0, -6.0, 1.4), rotation=(math.radians(84), 0.0, 0.0))
scene.camera = bpy.context.active_object
bpy.ops.object.light_add(type="SUN", location=(2.0, -2.0, 5.0), rotation=(math.radians(40), 0.0, math.radians(30)))
bpy.context.active_object.data.energy = 4.0

scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = 4
scene.cycles.use_denoising = False
scene.cycles.seed = 0
scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 160, 120, 100
scene.render.use_motion_blur = True
scene.render.image_settings.file_format = "PNG"
scene.render.filepath = os.path.join(out_dir, "frame_####")
bpy.ops.wm.save_as_mainfile(filepath=os.path.join(out_dir, "scene.blend"))
print("made", os.path.join(out_dir, "scene.blend"))
