"""Build a render scene with a goal-animated soft body inside the real Blender (4.3): an ico sphere
keyframed across the view in frames 1–12, its top cap in a goal group of weight 1, so the rest of
it lags and swings; Cycles 160×120, no bake.

    blender -b --factory-startup --python tests/real_blender/make_goal_scene.py -- OUT_DIR

Writes OUT_DIR/goal_scene.blend, rendering to OUT_DIR/goal_####.png.
"""

import os
import sys

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _scene_setup  # noqa: E402

scene, out_dir = _scene_setup.start()
scene.use_gravity = False
bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.6, location=(-1.2, 0.0, 1.0))
obj = bpy.context.active_object
obj.name = "Goal"
group = obj.vertex_groups.new(name="Goal")
group.add([v.index for v in obj.data.vertices if v.co.z > 0.3], 1.0, "REPLACE")
obj.keyframe_insert("location", frame=1)
obj.location.x = 1.2
obj.keyframe_insert("location", frame=_scene_setup.FRAMES)
obj.tetrig.resolution = 5
obj.tetrig.use_goal = True
obj.tetrig.goal_group = "Goal"
scene.frame_set(1)
assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
_scene_setup.finish(scene, out_dir, "goal_scene.blend", "goal_", camera_location=(0.0, -6.0, 1.0),
                    camera_tilt_deg=90, motion_blur=False)
