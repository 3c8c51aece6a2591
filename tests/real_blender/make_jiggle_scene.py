"""Build a render scene with jiggle bones inside the real Blender (4.3): a root bone keyed to move
sideways in frames 1–12 and a chain of 5 jiggle bones, each carrying a cube (bone parenting), so the
cubes lag and swing; Cycles 160×120, no bake. Also saves a copy after Bake to Action (live jiggle
off, the motion in the action's keys), which renders without the add-on.

    blender -b --factory-startup --python tests/real_blender/make_jiggle_scene.py -- OUT_DIR

Writes OUT_DIR/jiggle_scene.blend (rendering to OUT_DIR/jiggle_####.png) and
OUT_DIR/jiggle_action.blend (rendering to OUT_DIR/action_####.png).
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import _scene_setup  # noqa: E402
from jiggle_blender import make_chain_rig  # noqa: E402

scene, out_dir = _scene_setup.start()
rig = make_chain_rig("Rig", bones=5, length=0.3, frames=(1, 12), sideways=1.0)
rig.location = (-0.5, 0.0, 0.0)
for i in range(5):
    bpy.ops.mesh.primitive_cube_add(size=0.16)
    cube = bpy.context.active_object
    cube.parent, cube.parent_type, cube.parent_bone = rig, "BONE", f"Chain.{i:02d}"
    cube.matrix_parent_inverse.identity()
    cube.location = (0.0, 0.0, 0.0)  # at the bone's tail
scene.frame_set(1)
_scene_setup.finish(scene, out_dir, "jiggle_scene.blend", "jiggle_", camera_location=(0.0, -6.0, 1.0),
                    camera_tilt_deg=90, motion_blur=False)
bpy.context.view_layer.objects.active = rig
assert bpy.ops.tetrig.jiggle_bake_action() == {"FINISHED"}
scene.render.filepath = os.path.join(out_dir, "action_####")
scene.frame_set(1)
bpy.ops.wm.save_as_mainfile(filepath=os.path.join(out_dir, "jiggle_action.blend"))
