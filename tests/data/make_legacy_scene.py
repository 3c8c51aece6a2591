"""Builds tests/data/legacy_e0025aa.blend and its expected frames with the add-on as it was at
commit e0025aa (before "One scene, one driver" rebuilt the Blender layer).

Run once, with e0025aa's add-on, in each venv (the .blend is written by the first, bpy 5.0.1)::

    .venv/bin/python tests/data/make_legacy_scene.py ADDON_DIR write
    .venv/bin/python tests/data/make_legacy_scene.py ADDON_DIR expect
    .venv313/bin/python tests/data/make_legacy_scene.py ADDON_DIR expect

ADDON_DIR holds the add-on as package ``tetrig`` (a folder with a ``tetrig`` symlink to a checkout
of e0025aa). The scene: a bound cage ball on the ground, baked over frames 1-12 and live after;
a second ball with a pinned top (not baked); a level Surface sheet pinned along one edge (it swings down); a jiggle
chain whose root is keyed to move sideways. ``expect`` opens the file, plays frames 1-24 in order
and stores what Blender shows at every frame (``tests/test_blender_legacy_file.py`` compares).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
BLEND = HERE / "legacy_e0025aa.blend"
FRAMES = range(1, 25)
BAKED = (1, 12)


def expected_path() -> Path:
    import bpy
    major, minor = bpy.app.version[:2]
    return HERE / f"legacy_e0025aa_bpy{major}{minor}.npz"


def shown(bpy) -> dict[str, np.ndarray]:
    """What Blender shows now: every soft body's evaluated vertices (object space) and the jiggle
    chain's bone matrices (armature space)."""
    dg = bpy.context.evaluated_depsgraph_get()
    out = {}
    for name in ("Ball", "Pinned", "Sheet"):
        ev = bpy.data.objects[name].evaluated_get(dg)
        mesh = ev.to_mesh()
        co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        ev.to_mesh_clear()
        out[name] = co.reshape(-1, 3)
    rig = bpy.data.objects["Rig"].evaluated_get(dg)
    out["Rig"] = np.array([np.array(pb.matrix) for pb in rig.pose.bones], dtype=np.float32)
    return out


def write(bpy) -> None:
    sys.path.insert(0, str(HERE.parent))
    from jiggle_blender import make_chain_rig

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 24
    scene.render.fps, scene.render.fps_base = 24, 1.0
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.5, location=(0.0, 0.0, 1.0))
    ball = bpy.context.active_object
    ball.name = "Ball"
    ball.tetrig.resolution, ball.tetrig.use_ground = 4, True
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=8, radius=0.4, location=(2.0, 0.0, 1.5))
    pinned = bpy.context.active_object
    pinned.name = "Pinned"
    top = pinned.vertex_groups.new(name="Top")
    top.add([v.index for v in pinned.data.vertices if v.co.z > 0.3], 1.0, "REPLACE")
    pinned.tetrig.resolution, pinned.tetrig.pin_group = 4, "Top"
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=6, y_subdivisions=6, size=1.0, location=(-2.0, 0.0, 1.5))
    sheet = bpy.context.active_object
    sheet.name = "Sheet"
    edge = sheet.vertex_groups.new(name="Edge")
    edge.add([v.index for v in sheet.data.vertices if v.co.y > 0.49], 1.0, "REPLACE")
    s = sheet.tetrig
    s.body_type, s.pin_group, s.stretch, s.shear, s.bending = "SURFACE", "Edge", 3e3, 3e2, 1e-3
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    rig = make_chain_rig("Rig", bones=4, length=0.15, frames=(1, 24))
    rig.location = (0.0, 3.0, 0.0)
    from tetrig.runtime import bake
    bake.BakeJob([ball], scene, *BAKED).run(bpy.context.evaluated_depsgraph_get())
    scene.frame_set(1)
    bpy.ops.wm.save_as_mainfile(filepath=str(BLEND), compress=True)
    print("wrote", BLEND, os.path.getsize(BLEND), "bytes")


def expect(bpy) -> None:
    bpy.ops.wm.open_mainfile(filepath=str(BLEND))
    scene = bpy.context.scene
    frames = {}
    for f in FRAMES:
        scene.frame_set(f)
        for name, values in shown(bpy).items():
            frames.setdefault(name, []).append(values)
    out = expected_path()
    np.savez_compressed(out, **{k: np.stack(v) for k, v in frames.items()})
    print("wrote", out)


if __name__ == "__main__":
    addon_dir, what = sys.argv[1], sys.argv[2]
    sys.path.insert(0, addon_dir)
    import bpy
    import tetrig

    tetrig.register()
    {"write": write, "expect": expect}[what](bpy)
