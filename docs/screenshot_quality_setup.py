import os, sys, bpy, math
import numpy as np
# Setup for the README's quality-pass pictures, run from the checkout (QUALITY=off or on):
#   GUI=1 QUALITY=off ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- docs/quality_off.png 30 docs/screenshot_quality_setup.py
# (and the same with QUALITY=on into docs/quality_on.png). The Stanford bunny with the
# Jelly material falls onto the TetRig ground at 5 m/s (frame 14, the impact: its longest edge is
# 3.3x its rest length with the pass off); the view looks slightly up at its front rim. Each vertex is
# coloured by its edges as shown on that frame (a colour attribute, Solid shading's Attribute
# colour): red where an edge is past 1.35x its rest length, blue past 0.70x, white within 1.2x
# and 0.85x, shades between. The sidebar shows the TetRig tab (docs/shot_helpers.py clicks it);
# the add-on is imported from this checkout as "tetrig".
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports
register_from_checkout()
QUALITY = os.environ.get("QUALITY", "on") == "on"
IMPACT = 14  # 5 m/s: v^2 = 2 g h
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 24
scene.render.fps, scene.render.fps_base = 24, 1.0
bpy.ops.wm.obj_import(filepath=os.path.join(os.getcwd(), "..", "shared", "meshes", "stanford-bunny.obj"))
obj = bpy.context.selected_objects[0]
bpy.context.view_layer.objects.active = obj
bpy.context.view_layer.update()
co = np.empty(len(obj.data.vertices) * 3, np.float32)
obj.data.vertices.foreach_get("co", co)
rest = co.reshape(-1, 3).astype(np.float64)
lowest = (rest @ np.array(obj.matrix_world)[:3, :3].T)[:, 2].min()
obj.location.z = 25.0 / (2 * 9.81) - lowest
s = obj.tetrig
s.use_ground = True
s.youngs_modulus, s.volume_stiffness, s.density, s.damping = 1e4, 166667.0, 1050.0, 0.5  # Jelly
print("build:", bpy.ops.tetrig.build_cage())
s.use_quality = QUALITY
for f in range(1, IMPACT + 1):
    scene.frame_set(f)
# where the blend stretches the surface most on this frame (the same place in both pictures)
from tetrig.runtime.common import frames
from tetrig.runtime.cage import kind as cage_kind
from tetrig.tetrig_addon.quality import metrics as surface_metrics
edges = np.empty(len(obj.data.edges) * 2, np.int32)
obj.data.edges.foreach_get("vertices", edges)
edges = edges.reshape(-1, 2)
prepared = cage_kind.KIND.prepare(obj, scene, bpy.context.evaluated_depsgraph_get(), frames.slot(obj, "cage"))
raw = rest + prepared.blend @ cage_kind.displacements_at(obj, scene, IMPACT, bpy.context.evaluated_depsgraph_get())
ratios = surface_metrics.edge_length_ratios(rest, raw, edges)
worst = edges[np.argmax(ratios)]
m = np.array(obj.matrix_world)
# the view's centre: the middle of all edges past 1.35x, or the longest edge (FOCUS=worst);
# TILT, TURN (degrees) and DISTANCE (m) place the view
focus = raw[worst] if os.environ.get("FOCUS", "all") == "worst" else raw[edges[ratios > 1.35].ravel()]
target = np.median(focus, axis=0) @ m[:3, :3].T + m[:3, 3]
dg = bpy.context.evaluated_depsgraph_get()
shown_mesh = obj.evaluated_get(dg).to_mesh()
shown = np.empty(len(shown_mesh.vertices) * 3, np.float32)
shown_mesh.vertices.foreach_get("co", shown)
obj.evaluated_get(dg).to_mesh_clear()
shown_ratios = surface_metrics.edge_length_ratios(rest, shown.reshape(-1, 3).astype(np.float64), edges)
print(f"quality {'on' if QUALITY else 'off'}: frame {IMPACT}, longest edge {shown_ratios.max():.3f}x, "
      f"{(shown_ratios > 1.35).sum()} edges beyond 1.35x; worst raw edge {ratios.max():.3f}x at {target.round(4)}")
# the colour: 0 within (0.85, 1.2), 1 at the limits and beyond; red for stretch, blue for squash
incident_max = np.zeros(len(rest)); incident_min = np.full(len(rest), np.inf)
for k in (0, 1):
    np.maximum.at(incident_max, edges[:, k], shown_ratios)
    np.minimum.at(incident_min, edges[:, k], shown_ratios)
stretch = np.clip((incident_max - 1.2) / (1.35 - 1.2), 0.0, 1.0)
squash = np.clip((0.85 - incident_min) / (0.85 - 0.70), 0.0, 1.0)
colour = np.ones((len(rest), 4), np.float32)
colour[:, 1] -= np.maximum(stretch, squash)
colour[:, 2] -= stretch
colour[:, 0] -= squash
attribute = obj.data.color_attributes.new("tetrig_stretch", "FLOAT_COLOR", "POINT")
attribute.data.foreach_set("color", colour.ravel())
obj.data.color_attributes.active_color = attribute
obj.select_set(False)
from mathutils import Euler
tilt, turn = (math.radians(float(os.environ.get(k, v))) for k, v in (("TILT", "97"), ("TURN", "-20")))
for _window, _area, space in solid_viewports():
    space.overlay.show_wireframes = os.environ.get("WIRE", "0") == "1"
    space.shading.color_type = "VERTEX"
    space.overlay.wireframe_threshold = 1.0
    space.overlay.show_floor = True
    r3d = space.region_3d
    r3d.view_perspective = "PERSP"
    r3d.view_location = target.tolist()
    r3d.view_distance = float(os.environ.get("DISTANCE", "0.09"))
    r3d.view_rotation = Euler((tilt, 0.0, turn), "XYZ").to_quaternion()
open_tetrig_tab()
