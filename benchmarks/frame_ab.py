"""The Blender layer's per-frame cost, two versions of the add-on in one process, frame by frame
alternating (not a test; never fails on speed).

Usage::

    .venv/bin/python benchmarks/frame_ab.py [--rev e0025aa] [--frames 48] [--out benchmarks/frame_ab.md]

The working tree's add-on is registered (its properties, operators and hook) and ``--rev``'s is
imported beside it under another package name, unregistered: both read the same ``Object.tetrig``
settings. Each version has its own scene holding the same two things, built the same way:

1. the Stanford bunny (Blender's OBJ importer, 34,834 vertices), the default Fit cage, the Ground on,
   dropped 0.3 m (``make bench``'s scene);
2. a 100-bone jiggle rig: 10 chains of 10 bones (0.1 m) whose root is keyed along a figure of eight.

The frame handlers are taken off, so each frame is timed as the frame handler runs it, version by
version: ``scene.frame_set(f)``, the version's per-frame update (the working tree's
``runtime.scene.update``; e0025aa's ``simulation.update_scene`` then ``jiggle_sim.update_scene``) and
the depsgraph's evaluation of what it wrote. Frames 2..``--frames`` are played in order, the two
versions alternating which goes first; the compiled kernels are loaded before the first frame. The
table gives each version's median per frame, the median of the per-frame ratios new/old (each pair
timed back to back, so a load that comes and goes hits both alike), and how alike the two
versions' last frames are (they must be the same).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np

REPO = Path(__file__).resolve().parents[1]
BUNNY = REPO.parent / "shared" / "meshes" / "stanford-bunny.obj"


def load(rev: str) -> tuple[ModuleType, ModuleType, str]:
    """(the working tree's add-on as ``tetrig``, ``rev``'s as ``tetrig_old``, rev's short hash)."""
    root = Path(tempfile.mkdtemp(prefix="tetrig-frame-ab-"))
    (root / "tetrig").symlink_to(REPO, target_is_directory=True)
    old = root / "tetrig_old"
    old.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev], capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    short = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", rev], capture_output=True, text=True,
                           check=True).stdout.strip()
    sys.path.insert(0, str(root))
    return importlib.import_module("tetrig"), importlib.import_module("tetrig_old"), short


def new_scene(bpy: Any, name: str) -> Any:
    scene = bpy.data.scenes.new(name)
    scene.frame_start, scene.frame_end = 1, 250
    scene.render.fps, scene.render.fps_base = 24, 1.0
    return scene


def bunny(bpy: Any, scene: Any) -> Any:
    """The bunny imported into the context scene, 0.3 m above z = 0, bound with the defaults, moved
    into ``scene``."""
    bpy.ops.wm.obj_import(filepath=str(BUNNY))
    obj = bpy.context.selected_objects[0]
    co = np.empty(len(obj.data.vertices) * 3)
    obj.data.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world)
    lowest = (co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3])[:, 2].min()
    obj.location.z += 0.3 - lowest
    bpy.context.view_layer.objects.active = obj
    obj.tetrig.use_ground = True
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    for o in (obj, obj.tetrig.cage):
        for collection in list(o.users_collection):
            collection.objects.unlink(o)
        scene.collection.objects.link(o)
    return obj


def rig(bpy: Any, scene: Any, new: ModuleType, chains: int = 10, bones: int = 10) -> Any:
    """``chains`` chains of ``bones`` jiggle bones (0.1 m) hanging off a root keyed along a figure
    of eight 0.3 m wide at 0.5 Hz, set up in ``scene`` (the working tree's setup: the same data
    e0025aa's reads)."""
    data = bpy.data.armatures.new("Rig")
    obj = bpy.data.objects.new("Rig", data)
    bpy.context.scene.collection.objects.link(obj)
    bpy.context.view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    root = data.edit_bones.new("Root")
    root.head, root.tail = (0, 0, 0), (0, 0, 0.1)
    for c in range(chains):
        parent = root
        for b in range(bones):
            bone = data.edit_bones.new(f"C{c}.{b}")
            bone.head = (0.1 * c, 0.0, 0.1 + 0.1 * b)
            bone.tail = (0.1 * c, 0.0, 0.2 + 0.1 * b)
            bone.parent = parent
            bone.use_connect = b > 0
            parent = bone
    bpy.ops.object.mode_set(mode="OBJECT")
    pose_root = obj.pose.bones["Root"]
    for frame in range(1, 251, 2):
        t = (frame - 1) / 24.0
        pose_root.location = (0.15 * np.sin(np.pi * t), 0.15 * np.sin(2 * np.pi * t) / 2, 0.0)
        pose_root.keyframe_insert("location", frame=frame)
    bpy.context.scene.collection.objects.unlink(obj)
    scene.collection.objects.link(obj)
    for pb in obj.pose.bones:
        if pb.name != "Root":
            pb.tetrig_jiggle.enabled = True  # the hook sets the constraint up (in the context scene)
    jiggle_rig = importlib.import_module(f"{new.__name__}.runtime.jiggle.rig")
    jiggle_rig.setup(obj, scene)
    return obj


def timed_frame(bpy: Any, scene: Any, frame: int, update: Callable[[Any, Any], None]) -> float:
    """Seconds for one frame as the frame handler runs it: the frame change, the update, and the
    depsgraph's evaluation of what it wrote."""
    depsgraph = scene.view_layers[0].depsgraph
    t0 = time.perf_counter()
    scene.frame_set(frame)
    update(scene, depsgraph)
    depsgraph.update()
    for obj in scene.objects:
        if obj.type in {"MESH", "ARMATURE"}:
            obj.evaluated_get(depsgraph)
    return time.perf_counter() - t0


def max_difference(a: Any, b: Any) -> float:
    """The largest difference between what two scenes built alike show: their meshes' evaluated
    vertices [m] and their armatures' evaluated bone matrices."""
    worst = 0.0
    for obj_a, obj_b in zip(sorted(a.objects, key=lambda o: o.type), sorted(b.objects, key=lambda o: o.type)):
        if obj_a.type == "MESH" and obj_a.tetrig.role == "SOURCE":
            shown = []
            for obj, scene in ((obj_a, a), (obj_b, b)):
                ev = obj.evaluated_get(scene.view_layers[0].depsgraph)
                co = np.empty(len(ev.data.vertices) * 3)
                ev.data.vertices.foreach_get("co", co)
                shown.append(co)
            worst = max(worst, float(np.abs(shown[0] - shown[1]).max()))
        elif obj_a.type == "ARMATURE":
            poses = [np.array([np.array(pb.matrix) for pb in obj.evaluated_get(scene.view_layers[0].depsgraph).pose.bones])
                     for obj, scene in ((obj_a, a), (obj_b, b))]
            worst = max(worst, float(np.abs(poses[0] - poses[1]).max()))
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="e0025aa", help="the older version (default e0025aa)")
    parser.add_argument("--frames", type=int, default=48, help="the last frame played (from 2)")
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "frame_ab.md"))
    args = parser.parse_args()
    import bpy

    new, old, short = load(args.rev)
    new.register()
    handlers = importlib.import_module(f"{new.__name__}.runtime.app.handlers")
    bpy.app.handlers.frame_change_post.remove(handlers.on_frame_change_post)
    driver = importlib.import_module(f"{new.__name__}.runtime.scene")
    old_simulation = importlib.import_module(f"{old.__name__}.runtime.simulation")
    old_jiggle = importlib.import_module(f"{old.__name__}.runtime.jiggle_sim")
    for version in (new, old):  # the compiled kernels, loaded before the first frame
        for module in ("tetrig_addon.solver.backend", "tetrig_addon.jiggle.backend"):
            backend = importlib.import_module(f"{version.__name__}.{module}")
            if hasattr(backend, "configure") and version is old:
                backend.configure(os.path.join(tempfile.gettempdir(), "tetrig-frame-ab-cache"))
            backend.warm_up()

    def old_update(scene: Any, depsgraph: Any) -> None:
        old_simulation.update_scene(scene, depsgraph)
        old_jiggle.update_scene(scene, depsgraph)

    rows = []
    for case in ("bunny", "rig"):
        scenes = {label: new_scene(bpy, f"{case}-{label}") for label in ("new", "old")}
        for label, scene in scenes.items():
            bunny(bpy, scene) if case == "bunny" else rig(bpy, scene, new)
            scene.frame_set(1)
        updates = {"new": driver.update, "old": old_update}
        for label, scene in scenes.items():
            updates[label](scene, scene.view_layers[0].depsgraph)
        times: dict[str, list[float]] = {"new": [], "old": []}
        for frame in range(2, args.frames + 1):
            order = ("new", "old") if frame % 2 else ("old", "new")
            for label in order:
                times[label].append(timed_frame(bpy, scenes[label], frame, updates[label]))
        medians = {label: statistics.median(t) * 1000 for label, t in times.items()}
        # each frame's pair was timed back to back: the median of their ratios cancels the load's drift
        paired = statistics.median(n / o for n, o in zip(times["new"], times["old"]))
        difference = max_difference(scenes["new"], scenes["old"])
        rows.append((case, medians["new"], medians["old"], paired, difference))
        print(f"{case}: new {medians['new']:.2f} ms, {short} {medians['old']:.2f} ms, paired ratio {paired:.3f}; "
              f"the two show the same to {difference:.1e}", flush=True)
    lines = [f"# Per-frame cost in Blender: the working tree against {short}, one process, alternating",
             "", f"`benchmarks/frame_ab.py --rev {args.rev} --frames {args.frames}`; medians of frames 2-{args.frames}; "
             "the ratio is the median of the frames' new/old ratios (each pair timed back to back); "
             "the last column: the largest difference [m, or bone-matrix entry] between what the two versions "
             "show at the last frame.",
             "", f"| scene | working tree (ms/frame) | {short} (ms/frame) | ratio | shown alike to |",
             "|---|---|---|---|---|"]
    names = {"bunny": "bunny (34,834 vertices, default Fit cage, Ground)", "rig": "100-bone jiggle rig"}
    lines += [f"| {names[c]} | {n:.2f} | {o:.2f} | {r:.3f} | {d:.1e} |" for c, n, o, r, d in rows]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("wrote", args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
