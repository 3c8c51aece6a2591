"""Render the open file's animation the way F12/Ctrl+F12 does in the UI (``render.render`` invoked
in a window: a render *job* in its own thread), record which threads the frame handler and the
solver ran in, write ``ui_probe.json`` beside the .blend and quit.

    GUI=1 run.sh scene.blend --python scripts/load_addon.py --python tests/real_blender/ui_render.py
"""

import json
import os
import threading

import bpy

solver = __import__("tetrig.tetrig_addon.solver", fromlist=["step"])
record = {"frame_changes": [], "steps_in_main_thread": [], "completed": False, "lock_interface": None}
_step = solver.step
OUT = os.path.join(os.path.dirname(bpy.data.filepath), "ui_probe.json")
QUIT_AFTER_S = 300.0


def step(*args, **kwargs):
    record["steps_in_main_thread"].append(threading.current_thread() is threading.main_thread())
    return _step(*args, **kwargs)


solver.step = step


@bpy.app.handlers.persistent
def on_frame(scene, depsgraph):
    record["frame_changes"].append([scene.frame_current, round(scene.frame_subframe, 4), depsgraph.mode,
                                    threading.current_thread() is threading.main_thread()])


def write_and_quit():
    # after the job Blender sets the frame back; the viewport must show that frame's state
    scene = bpy.context.scene
    mesh = bpy.data.objects["Live"].data
    offsets = [c for v in mesh.attributes["tetrig_offset"].data for c in v.vector]
    record["after"] = {"frame": scene.frame_current, "max_abs_offset_live": max(map(abs, offsets))}
    with open(OUT, "w") as fh:
        json.dump(record, fh)
    bpy.ops.wm.quit_blender()


@bpy.app.handlers.persistent
def on_done(scene, *_args):
    record["completed"] = True
    bpy.app.timers.register(write_and_quit, first_interval=1.0)


def start():
    wm = bpy.context.window_manager
    window = wm.windows[0]
    area = max(window.screen.areas, key=lambda a: a.width * a.height)
    record["lock_interface"] = bpy.context.scene.render.use_lock_interface
    with bpy.context.temp_override(window=window, screen=window.screen, area=area):
        print("ui_render: invoke", bpy.ops.render.render("INVOKE_DEFAULT", animation=True), flush=True)
    return None


bpy.app.handlers.frame_change_post.append(on_frame)
bpy.app.handlers.render_complete.append(on_done)
bpy.app.handlers.render_cancel.append(on_done)
bpy.app.timers.register(start, first_interval=3.0)
bpy.app.timers.register(write_and_quit, first_interval=QUIT_AFTER_S)
