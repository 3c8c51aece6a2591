"""Build a render scene with a goal-animated soft body inside the real Blender (4.3): an ico sphere
keyframed across the view in frames 1–12, its top cap in a goal group of weight 1, so the rest of
it lags and swings; Cycles 160×120, no bake.

    blender -b --factory-startup --python tests/real_blender/make_goal_scene.py -- OUT_DIR

Writes OUT_DIR/goal_scene.blend, rendering to OUT_DIR/goal_####.png.
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
scene.use_gravity = False

bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.6, location=(-1.2, 0.0, 1.0))
obj = bpy.context.active_object
obj.name = "Goal"
group = obj.vertex_groups.new(name="Goal")
group.add([v.index for v in obj.data.vertices if v.co.z > 0.3], 1.0, "REPLACE")
obj.keyframe_insert("location", frame=1)
obj.location.x = 1.2
obj.keyframe_insert("location", frame=12)
obj.tetrig.resolution = 5
obj.tetrig.use_goal = True
obj.tetrig.goal_group = "Goal"
scene.frame_set(1)
assert bpy.ops.tetrig.build_cage() == {"FINISHED"}

bpy.ops.object.camera_add(location=(0.0, -6.0, 1.0), rotation=(math.radians(90), 0.0, 0.0))
scene.camera = bpy.context.active_object
bpy.ops.object.light_add(type="SUN", location=(2.0, -2.0, 5.0), rotation=(math.radians(40), 0.0, math.radians(30)))
bpy.context.active_object.data.energy = 4.0
scene.render.engine = "CYCLES"
scene.cycles.device = "CPU"
scene.cycles.samples = 4
scene.cycles.use_denoising = False
scene.cycles.seed = 0
scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 160, 120, 100
scene.render.image_settings.file_format = "PNG"
scene.render.filepath = os.path.join(out_dir, "goal_####")
bpy.ops.wm.save_as_mainfile(filepath=os.path.join(out_dir, "goal_scene.blend"))
print("made", os.path.join(out_dir, "goal_scene.blend"))
