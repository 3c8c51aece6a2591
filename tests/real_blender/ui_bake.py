"""Drive the modal Bake in a real window: start it, press Esc (xdotool) mid-bake, check that
nothing was stored; start it again and let it finish. Writes ``ui_bake.json`` beside the .blend,
takes ``ui_bake.png`` (a screenshot while baking) and quits.

    GUI=1 run.sh scene.blend --python scripts/load_addon.py --python tests/real_blender/ui_bake.py
"""

import json
import os
import subprocess
import time

import bpy

OBJECT = "Live"
FRAMES = 160
HERE = os.path.dirname(bpy.data.filepath)
record = {"events": []}
bake_store = __import__("tetrig.runtime.common.bake_store", fromlist=["source_bake"])


def _override():
    window = bpy.context.window_manager.windows[0]
    area = max(window.screen.areas, key=lambda a: a.width * a.height)
    return bpy.context.temp_override(window=window, screen=window.screen, area=area)


def _state():
    info = bake_store.source_bake(bpy.data.objects[OBJECT])
    return None if info is None else [info.frame_start, info.frame_end]


def start(label):
    def run():
        obj = bpy.data.objects[OBJECT]
        bpy.context.view_layer.objects.active = obj
        with _override():
            result = bpy.ops.tetrig.bake("INVOKE_DEFAULT")
        record["events"].append([label, "invoke", sorted(result), _state()])
        return None
    return run


def press_escape():
    subprocess.Popen(["bash", "-c", "xdotool mousemove 700 400; xdotool key Escape"])
    return None


def screenshot():
    subprocess.run(["import", "-window", "root", os.path.join(HERE, "ui_bake.png")], check=False)
    return None


def check(label):
    def run():
        window = bpy.context.window_manager.windows[0]
        modal = [op.bl_idname for op in getattr(window, "modal_operators", [])]
        record["events"].append([label, "state", _state(), "modal", modal])
        return None
    return run


def finish():
    with open(os.path.join(HERE, "ui_bake.json"), "w") as fh:
        json.dump(record, fh)
    bpy.ops.wm.quit_blender()


def wait_for_second():
    """Poll until the second bake is stored and its modal handler is gone (or time is up)."""
    window = bpy.context.window_manager.windows[0]
    running = [op.bl_idname for op in getattr(window, "modal_operators", [])]
    if (_state() is not None and not running) or time.monotonic() > DEADLINE:
        check("after second")()
        finish()
        return None
    return 0.5


scene = bpy.context.scene
scene.frame_end = FRAMES  # long enough to press Esc mid-bake
bake_store.clear(bpy.data.objects[OBJECT].tetrig.cage)
DEADLINE = time.monotonic() + 120.0
bpy.app.timers.register(start("first"), first_interval=4.0)
bpy.app.timers.register(screenshot, first_interval=4.8)
bpy.app.timers.register(check("before escape"), first_interval=5.0)
bpy.app.timers.register(press_escape, first_interval=5.5)
bpy.app.timers.register(check("after escape"), first_interval=7.0)
bpy.app.timers.register(start("second"), first_interval=7.5)
bpy.app.timers.register(wait_for_second, first_interval=8.0)
