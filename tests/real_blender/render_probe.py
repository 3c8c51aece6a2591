"""Watch a ``blender -b scene.blend --python scripts/load_addon.py --python <this> -a`` render:
record every frame-change call (frame, subframe, depsgraph mode, thread) and every solver step's
thread, and write them to ``probe.json`` beside the .blend when the render completes."""

import json
import os
import threading

import bpy

addon = __import__("tetrig")  # registered by scripts/load_addon.py
solver = __import__("tetrig.tetrig_addon.solver", fromlist=["step"])
record = {"frame_changes": [], "steps_in_main_thread": [], "completed": False}
_step = solver.step


def step(*args, **kwargs):
    record["steps_in_main_thread"].append(threading.current_thread() is threading.main_thread())
    return _step(*args, **kwargs)


solver.step = step


@bpy.app.handlers.persistent
def on_frame(scene, depsgraph):
    record["frame_changes"].append([scene.frame_current, round(scene.frame_subframe, 4), depsgraph.mode,
                                    threading.current_thread() is threading.main_thread()])


@bpy.app.handlers.persistent
def on_complete(scene, *_args):
    record["completed"] = True
    with open(os.path.join(os.path.dirname(bpy.data.filepath), "probe.json"), "w") as fh:
        json.dump(record, fh)


bpy.app.handlers.frame_change_post.append(on_frame)
bpy.app.handlers.render_complete.append(on_complete)
