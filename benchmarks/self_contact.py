"""Self-contact (issue 21): a 1 m cloth of 40 × 40 quads that folds onto itself on a ball, TetRig's
Surface body with Self Collision against Blender Cloth with Self Collision on the same mesh, side by
side in one run (not a test; never fails on speed).

Usage (``make bench-self``, and part of ``make bench``)::

    .venv/bin/python benchmarks/self_contact.py [--frames 48] [--out benchmarks/self_contact.md]

The scene, the same on both sides: Blender's Grid (Add > Mesh > Grid, 40 × 40 subdivisions, 1 m, 1,681
vertices) held upright, its lower side 5 cm over a ball (ico sphere, 2 subdivisions, r = 0.2 m) that
rests on the ground at z = 0; 24 fps; dropped, the cloth lands edge-on on the ball and crumples onto
itself. Each side runs in its own process (the bpy module), one after the other, and times
``scene.frame_set(f)`` for every frame, played from the start (what a user waits for in playback),
wall clock and CPU (both use both cores). After each frame, not timed: the triangle–triangle
intersections of the cloth with itself as Blender shows it (``tests/intersections.py``, neighbours
excluded).

1. TetRig: the add-on registered from this checkout, its kernels loaded before the first frame; the
   ball a cage soft body (Fit cage, ground on), the cloth a Surface body (bending 1e-4 N·m, ground on,
   Self Collision on at its 1 cm Distance); and the same with Self Collision off.
2. Blender Cloth: the Cloth modifier at its defaults with Self Collision on (its distance set to
   1 cm as TetRig's), the ball with Collision physics, and a plane with Collision physics at z = 0
   for the ground.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
PART_MARK = "PART "


def cloth_and_ball(cloth_on_blender: bool) -> tuple[Any, Any]:
    """The scene (module docstring) in a fresh file: (ball, cloth)."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=2, radius=0.2, location=(0.0, 0.0, 0.2))
    ball = bpy.context.active_object
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=40, y_subdivisions=40, size=1.0, location=(0.0, 0.0, 0.95),
                                    rotation=(math.pi / 2, 0.0, 0.0))
    cloth = bpy.context.active_object
    if cloth_on_blender:
        bpy.ops.mesh.primitive_plane_add(size=4.0, location=(0.0, 0.0, 0.0))
        bpy.context.active_object.modifiers.new("Collision", "COLLISION")
        ball.modifiers.new("Collision", "COLLISION")
        modifier = cloth.modifiers.new("Cloth", "CLOTH")
        modifier.collision_settings.use_self_collision = True
        modifier.collision_settings.self_distance_min = 0.01
    return ball, cloth


def shown(obj: Any) -> tuple[np.ndarray, np.ndarray]:
    """The evaluated mesh of ``obj`` in world space: vertices float64 [V, 3], triangles int [T, 3]."""
    import bpy

    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    points = np.empty(len(mesh.vertices) * 3)
    mesh.vertices.foreach_get("co", points)
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int64)
    mesh.loop_triangles.foreach_get("vertices", tris)
    matrix = np.array(evaluated.matrix_world)
    points = points.reshape(-1, 3) @ matrix[:3, :3].T + matrix[:3, 3]
    evaluated.to_mesh_clear()
    return points, tris.reshape(-1, 3)


def play(cloth: Any, frames: int) -> dict:
    """Play frames 1..``frames``: each frame's wall and CPU time [s] and the cloth's intersections."""
    import bpy

    from intersections import count_intersections

    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, frames
    scene.frame_set(1)
    wall, cpu, counts = [], [], []
    for f in range(2, frames + 1):
        w, c = time.perf_counter(), time.process_time()
        scene.frame_set(f)
        bpy.context.evaluated_depsgraph_get()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
        counts.append(count_intersections(*shown(cloth)))
    lowest = float(shown(cloth)[0][:, 2].min())
    return {"wall": wall, "cpu": cpu, "intersections": counts, "lowest": lowest}


def part_tetrig(frames: int) -> dict:
    """TetRig with Self Collision on, then off (module docstring)."""
    import bpy

    sys.path.insert(0, str(REPO / "scripts"))
    import _addon_loader

    package = _addon_loader.load_addon()
    name = package.__name__
    backend = importlib.import_module(f"{name}.tetrig_addon.solver.backend")
    backend.warm_up()
    backend.wait_for_global_step()
    for module in ("tetrig_addon.solver.self_rows", "tetrig_addon.solver.pairs"):
        importlib.import_module(f"{name}.{module}")._SEARCH.module()
    out = {}
    for on in (True, False):
        ball, cloth = cloth_and_ball(False)
        _addon_loader.load_addon()
        for obj in (ball, cloth):
            bpy.context.view_layer.objects.active = obj
            obj.select_set(True)
        ball.tetrig.use_ground = True
        bpy.context.view_layer.objects.active = ball
        assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
        cloth.tetrig.body_type = "SURFACE"
        cloth.tetrig.use_ground = True
        cloth.tetrig.bending = 1e-4
        cloth.tetrig.use_self_collision = on
        bpy.context.view_layer.objects.active = cloth
        assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
        out["on" if on else "off"] = play(cloth, frames)
    out["blender"] = bpy.app.version_string
    return out


def part_cloth(frames: int) -> dict:
    """Blender Cloth with Self Collision (module docstring)."""
    import bpy

    _, cloth = cloth_and_ball(True)
    return {"on": play(cloth, frames), "blender": bpy.app.version_string}


def run_part(part: str, frames: int) -> dict:
    """One part in a fresh process; its JSON back."""
    proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--part", part, "--frames", str(frames)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith(PART_MARK):
            return json.loads(line[len(PART_MARK):])
    print(proc.stdout[-4000:], flush=True)
    raise RuntimeError(f"benchmark part {part} failed (exit status {proc.returncode})")


def row(name: str, run: dict, against: float | None = None) -> str:
    wall, cpu = 1000 * np.array(run["wall"]), 1000 * np.array(run["cpu"])
    ratio = f"{against / wall.mean():.1f}x" if against else ""
    return (f"| {name} | {wall.mean():.0f} / {np.median(wall):.0f} | {cpu.mean():.0f} | {max(run['intersections'])} | "
            f"{sum(1 for c in run['intersections'] if c)} | {run['lowest']:.3f} | {ratio} |")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=48)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "self_contact.md"))
    parser.add_argument("--part", choices=("tetrig", "cloth"))
    args = parser.parse_args(argv)
    sys.path[:0] = [str(REPO), str(REPO / "tests")]  # the intersection test (``tests/intersections.py``)
    if args.part:
        result = part_tetrig(args.frames) if args.part == "tetrig" else part_cloth(args.frames)
        print(PART_MARK + json.dumps(result), flush=True)
        return 0
    load = os.getloadavg()
    tetrig, cloth = run_part("tetrig", args.frames), run_part("cloth", args.frames)
    cloth_wall = 1000 * float(np.mean(cloth["on"]["wall"]))
    lines = [
        "# Self-contact: TetRig's Self Collision against Blender Cloth's (issue 21)", "",
        f"`benchmarks/self_contact.py --frames {args.frames}`, {time.strftime('%Y-%m-%d %H:%M')}, "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
        f"{load[0]:.1f} at the start; Blender {tetrig['blender']} (bpy module). The scene and what is "
        "timed: the module docstring. Frames 2 to the last, played in order.", "",
        "| Case | ms a frame, wall (mean / median) | CPU ms | most intersections in a frame | frames with any "
        "| lowest cloth point at the end [m] | faster than Cloth |",
        "|---|---|---|---|---|---|---|",
        row("Blender Cloth, Self Collision on", cloth["on"]),
        row("TetRig, Self Collision on", tetrig["on"], cloth_wall),
        row("TetRig, Self Collision off", tetrig["off"], cloth_wall), "",
    ]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
