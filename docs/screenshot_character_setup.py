import math, os, subprocess, sys, tempfile, bpy, mathutils
# Setup for the README's character picture (a skinned body walking, its belly jiggling), run from
# the checkout:
#   GUI=1 ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- /tmp/character.png 20 docs/screenshot_character_setup.py
# then crop into docs/character.png. The add-on is imported from this checkout as "tetrig"; the
# scene is the one tests/test_blender_characters.py measures (a 2 m body on a 3-bone rig, its back
# pinned, the belly free), walking 1.5 m in half a second; the shot is frame 9, mid-walk, with the posed
# shape (the Armature alone) drawn as a wire ghost.
link_dir = tempfile.mkdtemp(prefix="tetrig-shot-")
os.symlink(os.getcwd(), os.path.join(link_dir, "tetrig"))
sys.path.insert(0, link_dir)
import tetrig
tetrig.register()
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 48
rings, sides = 11, 24
verts = [(0.4 * math.cos(2 * math.pi * s / sides), 0.4 * math.sin(2 * math.pi * s / sides), 0.2 * r)
         for r in range(rings) for s in range(sides)]
faces = [(r * sides + s, r * sides + (s + 1) % sides, (r + 1) * sides + (s + 1) % sides, (r + 1) * sides + s)
         for r in range(rings - 1) for s in range(sides)]
faces += [tuple(reversed(range(sides))), tuple((rings - 1) * sides + s for s in range(sides))]
mesh = bpy.data.meshes.new("Body")
mesh.from_pydata(verts, [], faces)
body = bpy.data.objects.new("Body", mesh)
scene.collection.objects.link(body)
body.vertex_groups.new(name="Spine").add([i for i, v in enumerate(verts) if v[1] < -0.2], 1.0, "REPLACE")
for b, (lo, hi) in enumerate([(-1.0, 0.7), (0.7, 1.4), (1.4, 3.0)]):
    body.vertex_groups.new(name=f"Bone{b}").add([i for i, v in enumerate(verts) if lo <= v[2] < hi], 1.0, "REPLACE")
rig_data = bpy.data.armatures.new("Rig")
rig = bpy.data.objects.new("Rig", rig_data)
scene.collection.objects.link(rig)
bpy.context.view_layer.objects.active = rig
bpy.ops.object.mode_set(mode="EDIT")
parent = None
for b, (lo, hi) in enumerate([(0.0, 0.7), (0.7, 1.4), (1.4, 2.0)]):
    bone = rig_data.edit_bones.new(f"Bone{b}")
    bone.head, bone.tail = (0.0, 0.0, lo), (0.0, 0.0, hi)
    if parent is not None:
        bone.parent, bone.use_connect = parent, True
    parent = bone
bpy.ops.object.mode_set(mode="OBJECT")
rig.show_in_front = True
body.modifiers.new("Armature", "ARMATURE").object = rig
root, middle = rig.pose.bones["Bone0"], rig.pose.bones["Bone1"]
middle.rotation_mode = "XYZ"
for frame, x, swing in [(1, 0.0, 0.0), (7, 0.75, 0.25), (13, 1.5, 0.0)]:
    root.location = (x, 0.0, 0.0)
    root.keyframe_insert("location", frame=frame)
    middle.rotation_euler = (0.0, swing, 0.0)
    middle.keyframe_insert("rotation_euler", frame=frame)
s = body.tetrig
s.resolution, s.pin_group, s.use_ground = 12, "Spine", False
s.youngs_modulus, s.damping = 5e4, 3.0
# the posed shape alone, as a wire ghost: a copy of the mesh with only the Armature modifier
ghost = bpy.data.objects.new("Posed (no TetRig)", mesh.copy())
scene.collection.objects.link(ghost)
ghost.modifiers.new("Armature", "ARMATURE").object = rig
ghost.display_type = "WIRE"
bpy.context.view_layer.objects.active = body
body.select_set(True)
scene.frame_set(1)
print("build:", bpy.ops.tetrig.build_cage())
bpy.ops.object.shade_smooth()
for f in range(1, 10):
    scene.frame_set(f)
for window in bpy.context.window_manager.windows:
    for area in window.screen.areas:
        if area.type == "VIEW_3D":
            space = area.spaces.active
            space.show_region_ui = True
            space.shading.type = "SOLID"
            region = [r for r in area.regions if r.type == "WINDOW"][0]
            with bpy.context.temp_override(window=window, area=area, region=region):
                # in front of the belly (+y), a little to the walk's side and above: the walk (+x)
                # goes left to right and the belly trails the wire ghost of the posed shape
                view = area.spaces.active.region_3d
                eye = mathutils.Vector((0.35, 1.0, 0.45)).normalized()
                view.view_rotation = eye.to_track_quat("Z", "Y")
                view.view_location = (0.9, 0.0, 1.0)
                view.view_distance = 4.6
                view.view_perspective = "PERSP"
            ui = [r for r in area.regions if r.type == "UI"][0]
            try:
                ui.active_panel_category = "TetRig"
            except (AttributeError, TypeError):  # older Blender: the click below
                pass


def _click_tab():
    # the sidebar's TetRig tab (as docs/screenshot_setup.py), from a detached process so Blender's
    # event loop runs while the pointer moves and clicks
    subprocess.Popen(["bash", "-c",
        "sleep 0.5; W=$(xdotool search --onlyvisible --class blender | head -1); "
        "xdotool windowfocus --sync $W; xdotool mousemove --window $W 1000 892; sleep 0.5; "
        "xdotool mousedown 1; sleep 0.15; xdotool mouseup 1; sleep 0.5; "  # the status bar: closes the splash
        "xdotool mousemove --window $W 1300 230; sleep 0.5; "
        "xdotool mousemove --window $W 1307 248; sleep 0.5; xdotool mousedown 1; sleep 0.15; "
        "xdotool mouseup 1; sleep 0.7; xdotool mousemove --window $W 700 500"])


bpy.app.timers.register(_click_tab, first_interval=5.0)
