"""Build the render-test scene inside the real Blender (a .blend saved by bpy 5.0 does not open in
4.3): one unbaked and one baked soft body over a ground plane, a camera and a sun, Cycles at
160×120 with motion blur (so subframes are rendered), frames 1–12.

    blender -b --factory-startup --python tests/real_blender/make_scene.py -- OUT_DIR

Writes OUT_DIR/scene.blend, rendering to OUT_DIR/frame_####.png.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _scene_setup  # noqa: E402

scene, out_dir = _scene_setup.start()

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

_scene_setup.finish(scene, out_dir, "scene.blend", "frame_", camera_location=(0.0, -6.0, 1.4),
                    camera_tilt_deg=84, motion_blur=True)
