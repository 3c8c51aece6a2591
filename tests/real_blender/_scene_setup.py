"""What the real-Blender test scenes share: the add-on loaded from this checkout into a factory
scene of frames 1-12 at 24 fps, and a camera, a sun and a small, deterministic Cycles render.
Imported by make_scene.py and make_goal_scene.py, which run inside the real Blender 4.3.
"""

import math
import os
import sys

import bpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import _addon_loader  # noqa: E402

FRAMES = 12


def start() -> tuple:
    """Load the add-on and open an empty scene; returns (scene, output folder from the command
    line's ``-- OUT_DIR``)."""
    out_dir = os.path.abspath(sys.argv[sys.argv.index("--") + 1])
    os.makedirs(out_dir, exist_ok=True)
    _addon_loader.load_addon()
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, FRAMES
    scene.render.fps, scene.render.fps_base = 24, 1.0
    return scene, out_dir


def finish(scene, out_dir: str, blend_name: str, frame_prefix: str, camera_location: tuple,
           camera_tilt_deg: float, motion_blur: bool) -> None:
    """Camera, sun, Cycles 160x120 at 4 samples (seed 0, no denoising), PNG frames to
    OUT_DIR/<frame_prefix>####; save OUT_DIR/<blend_name>."""
    bpy.ops.object.camera_add(location=camera_location, rotation=(math.radians(camera_tilt_deg), 0.0, 0.0))
    scene.camera = bpy.context.active_object
    bpy.ops.object.light_add(type="SUN", location=(2.0, -2.0, 5.0),
                             rotation=(math.radians(40), 0.0, math.radians(30)))
    bpy.context.active_object.data.energy = 4.0
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = 4
    scene.cycles.use_denoising = False
    scene.cycles.seed = 0
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 160, 120, 100
    scene.render.use_motion_blur = motion_blur
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = os.path.join(out_dir, frame_prefix + "####")
    bpy.ops.wm.save_as_mainfile(filepath=os.path.join(out_dir, blend_name))
    print("made", os.path.join(out_dir, blend_name))
