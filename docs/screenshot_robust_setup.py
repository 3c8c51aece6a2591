import os, sys, bpy
# Setup for the pictures of issue 23 in the real Blender 4.3, run from the checkout; SHOT picks it:
#   SHOT=altd    a ball and its Alt+D copy (0.8 m higher), both on the ground at frame 40, seen from
#                the front (docs/alt_d.png)
#   SHOT=jiggle  a jiggle chain with a bone extruded at its tip, Jiggle ticked (docs/jiggle_added.png)
#   SHOT=build   the panel right after a click on Build Cage & Bind (docs/panel_built.png)
#   SHOT=bakerow the Bake panel of a baked ball: the bake row with Preview (docs/bake_row.png)
#   GUI=1 SHOT=altd ../shared/tools/real-blender/run.sh --factory-startup \
#     --python ../shared/tools/real-blender/screenshot.py -- docs/alt_d.png 30 docs/screenshot_robust_setup.py
# Everything a user would click runs from timers in Blender's own event loop (the depsgraph update
# handler after Alt+D, the frame handler), the TetRig tab is opened with xdotool.
sys.path.insert(0, os.path.join(os.getcwd(), "docs"))
from shot_helpers import open_tetrig_tab, register_from_checkout, solid_viewports  # noqa: E402

SHOT = os.environ.get("SHOT", "altd")
DELAY = float(sys.argv[sys.argv.index("--") + 2])
register_from_checkout()
for ob in list(bpy.data.objects):
    bpy.data.objects.remove(ob)
scene = bpy.context.scene
scene.frame_start, scene.frame_end = 1, 60


def view(obj_names: list[str], zoom_out: int = 0, axis: str = "") -> None:
    """The viewports framed on ``obj_names`` (``axis``: looking along it first, as Numpad 1 does
    for "FRONT"), ``zoom_out`` steps back."""
    for window, area, _space in solid_viewports():
        region = [r for r in area.regions if r.type == "WINDOW"][0]
        with bpy.context.temp_override(window=window, area=area, region=region):
            if axis:
                bpy.ops.view3d.view_axis(type=axis)
            bpy.ops.object.select_all(action="DESELECT")
            for name in obj_names:
                bpy.data.objects[name].select_set(True)
            bpy.ops.view3d.view_selected()
            for _ in range(zoom_out):
                bpy.ops.view3d.zoom(delta=-1)


def override():
    window = bpy.context.window_manager.windows[0]
    area = next(a for a in window.screen.areas if a.type == "VIEW_3D")
    region = next(r for r in area.regions if r.type == "WINDOW")
    return bpy.context.temp_override(window=window, screen=window.screen, area=area, region=region)


def click_tab(extra: str = "", at: float = 8.0) -> None:
    """``at`` seconds after start (the splash screen is up by then): the TetRig tab, then ``extra``."""
    open_tetrig_tab(after_s=at, extra=extra)


def focus_ball(extra: str = "") -> None:
    """The ball in view and active, the TetRig tab open, then ``extra`` (clicks)."""
    view(["Ball"], 2)
    bpy.context.view_layer.objects.active = ball
    ball.select_set(True)
    click_tab(extra)


def play(last: int):
    for f in range(1, last + 1):
        scene.frame_set(f)


if SHOT in {"altd", "build", "bakerow"}:
    bpy.ops.mesh.primitive_plane_add(size=10)
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.5, location=(0, 0, 1.2))
    ball = bpy.context.active_object
    ball.name = "Ball"
    bpy.ops.object.shade_smooth()
    ball.tetrig.use_ground = True
    ball.tetrig.resolution = 6
    if SHOT != "build":
        print("build:", bpy.ops.tetrig.build_cage())

if SHOT == "altd":
    def _alt_d():
        with override():
            bpy.ops.object.select_all(action="DESELECT")
            ball.select_set(True)
            bpy.context.view_layer.objects.active = ball
            print("alt+d:", bpy.ops.object.duplicate_move_linked(TRANSFORM_OT_translate={"value": (1.6, 0.0, 0.8)}))
        return None

    def _play():
        play(40)
        copy = bpy.data.objects["Ball.001"]
        graph = bpy.context.evaluated_depsgraph_get()
        for o in (ball, copy):
            shown = o.evaluated_get(graph).to_mesh()
            print("instance:", o.name, o.tetrig.cage.name, "lowest z",
                  round(min((o.matrix_world @ v.co).z for v in shown.vertices), 4))
            o.evaluated_get(graph).to_mesh_clear()
        view(["Ball", "Ball.001"], 2, axis="FRONT")  # from the front: the ground is a line under both
        bpy.context.view_layer.objects.active = copy
        copy.select_set(True)
        return None

    bpy.app.timers.register(_alt_d, first_interval=1.0)
    bpy.app.timers.register(_play, first_interval=2.5)
    click_tab(at=12.0)

elif SHOT == "build":
    # the tab opens first; then a click on Build Cage & Bind (take the picture 8 s or more after it)
    focus_ball("sleep 1.0; xdotool mousemove --window $W 1174 225; sleep 0.4; xdotool mousedown 1; sleep 0.15; "
               "xdotool mouseup 1; sleep 2.0; ")

elif SHOT == "bakerow":
    scene.frame_end = 24
    with override():
        print("bake:", bpy.ops.tetrig.bake())
    play(12)
    # a click on the Simulation header (right of its name) closes it: the Bake panel moves up
    focus_ball("xdotool mousemove --window $W 1160 352; sleep 0.4; xdotool mousedown 1; sleep 0.15; "
               "xdotool mouseup 1; sleep 0.7; ")

elif SHOT == "jiggle":
    sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
    from jiggle_blender import make_chain_rig  # noqa: E402
    rig = make_chain_rig()
    play(10)

    def _extrude():
        view(["Rig"], 1)
        bpy.context.view_layer.objects.active = rig
        rig.select_set(True)
        bpy.ops.object.mode_set(mode="EDIT")
        bones = rig.data.edit_bones
        tip = bones.new("Chain.05")
        tip.head, tip.tail = (0, 0, 1.3), (0, 0, 1.5)
        tip.parent, tip.use_connect = bones["Chain.04"], True
        bpy.ops.object.mode_set(mode="POSE")
        for pb in rig.pose.bones:
            pb.bone.select = pb.name == "Chain.05"
        rig.data.bones.active = rig.data.bones["Chain.05"]
        rig.pose.bones["Chain.05"].tetrig_jiggle.enabled = True
        for f in range(11, 16):
            scene.frame_set(f)
        return None

    bpy.app.timers.register(_extrude, first_interval=1.5)
    click_tab(at=8.0)
