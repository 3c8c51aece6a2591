"""TetRig jelly demo: the seed's jelly sphere (seed 004, §5) as a Surface body with pressure.

Usage (``make jelly`` runs this with ``.venv/bin/python``)::

    python scripts/jelly_demo.py [--pressure PA] [--out DIR]

A closed UV sphere (radius 0.5 m, 32 segments × 16 rings) becomes a Surface body: its own
vertices are the particles, with stretch springs on its edges, shear springs across its quads,
dihedral bending on its hinges and an ideal gas inside (p·V = p₀·V₀, ``--pressure``, default
1e5 Pa, about one atmosphere; 0 turns it off and the sphere flattens). It is dropped from 1 m
onto the TetRig ground at z = 0 and simulated for frames 1..120 at 24 fps. Written into DIR
(default ``out/``):

- ``jelly.blend``: the scene at frame 1 (open it in Blender 5.0 or newer and press Play);
- ``jelly_summary.txt``: also printed: the volume's range through the bounce against the rest
  volume, the lowest point, the time per frame.

It runs in the ``bpy`` module and in the ``blender`` program alike
(``blender -b --factory-startup --python scripts/jelly_demo.py -- [--pressure PA]``).
Exit status: 0 done; 2 bad input (one line on standard error); 1 anything else.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, cast

import bpy
import numpy as np

if TYPE_CHECKING:  # mypy sees this file as the module tetrig.scripts.jelly_demo
    from . import _addon_loader, demo
else:  # run as a script: scripts/ is not a package, so import from beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _addon_loader
    import demo

PREFIX = "tetrig jelly"
FIRST_FRAME, LAST_FRAME = 1, 120
FPS = 24
RADIUS = 0.5  # [m]
SEGMENTS, RINGS = 32, 16
DROP = 1.0  # lowest point above the ground at rest [m]
# The seed's jelly: a light, soft skin holding a gas. Surface units (README, "Surface bodies").
AREAL_DENSITY = 10.0  # [kg/m²]
STRETCH = 3e3  # [N/m]
SHEAR = 3e2  # [N/m]
BENDING = 0.01  # [N·m]
DAMPING = 0.5  # [1/s]
PRESSURE = 1e5  # [Pa]


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """Arguments after ``--`` in the blender program, else after the script name.

    Raises:
        demo.DemoError: an unknown argument or a negative pressure (exit status 2).
    """
    options = demo.script_options(argv)
    parser = demo._Parser(prog="python scripts/jelly_demo.py",
                     description="Drop the seed's jelly sphere as a TetRig Surface body with pressure.")
    parser.add_argument("--pressure", type=float, default=PRESSURE,
                        help=f"the gas's pressure at rest [Pa], 0 for none (default {PRESSURE:g})")
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    args = parser.parse_args(options)
    if not (np.isfinite(args.pressure) and args.pressure >= 0.0):
        raise demo.DemoError(f"--pressure must be zero or positive, not {args.pressure:g}")
    return args


def enclosed_volume(positions: np.ndarray, triangles: np.ndarray) -> float:
    """The volume [m³] a closed, consistently oriented triangle mesh encloses (divergence theorem:
    Σ a·(b × c)/6 over its triangles). positions float64 [V, 3] [m]; triangles int [T, 3]."""
    a, b, c = (positions[triangles[:, k]] for k in range(3))
    return float(abs(np.einsum("ij,ij->i", a, np.cross(b, c)).sum()) / 6.0)


def _triangles(mesh: bpy.types.Mesh) -> np.ndarray:
    """The mesh's faces as triangles of vertex indices: int [T, 3] (Blender's own triangulation)."""
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    return tris.reshape(-1, 3)


def _shown_vertices(obj: bpy.types.Object) -> np.ndarray:
    """The evaluated (shown) vertex positions in world space: float64 [V, 3] [m]."""
    ob_eval = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = ob_eval.to_mesh()
    try:
        return demo._world_vertices(ob_eval, mesh)
    finally:
        ob_eval.to_mesh_clear()


def run(args: argparse.Namespace) -> str:
    """The demo; returns the summary text."""
    out_dir = Path(args.out).resolve()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise demo.DemoError(f"cannot create {out_dir}: {exc.strerror}") from exc
    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon = _addon_loader.load_addon()
    rig = _addon_loader.submodule(addon, "runtime.surface.setup")
    errors = _addon_loader.submodule(addon, "tetrig_addon.errors")
    backend = _addon_loader.submodule(addon, "tetrig_addon.solver.backend")

    scene = bpy.context.scene
    assert scene is not None, "Blender always has a current scene"
    scene.frame_start, scene.frame_end = FIRST_FRAME, LAST_FRAME
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    bpy.ops.mesh.primitive_uv_sphere_add(segments=SEGMENTS, ring_count=RINGS, radius=RADIUS,
                                         location=(0.0, 0.0, demo.GROUND_HEIGHT + DROP + RADIUS))
    obj = cast(bpy.types.Object, bpy.context.active_object)
    obj.name = "Jelly"
    cast(bpy.types.Mesh, obj.data).shade_smooth()
    box = np.array([[-RADIUS, -RADIUS, demo.GROUND_HEIGHT + DROP],
                    [RADIUS, RADIUS, demo.GROUND_HEIGHT + DROP + 2 * RADIUS]])
    demo.stage(obj, box)

    settings = _addon_loader.settings(obj)
    settings.body_type = "SURFACE"
    settings.areal_density = AREAL_DENSITY
    settings.stretch, settings.shear, settings.bending = STRETCH, SHEAR, BENDING
    settings.pressure = args.pressure
    settings.damping = DAMPING
    settings.use_ground, settings.ground_height = True, demo.GROUND_HEIGHT
    scene.frame_set(FIRST_FRAME)
    try:
        report = rig.setup_surface(obj)
    except errors.TetRigInputError as exc:
        raise demo.DemoError(str(exc)) from exc
    print(f"{PREFIX}: {report.message(obj.name)}", flush=True)
    backend.warm_up()  # the solver compiles once per computer (kept in a cache): before the timing

    triangles = _triangles(cast(bpy.types.Mesh, obj.data))
    rest_volume = enclosed_volume(_shown_vertices(obj), triangles)
    volumes, lowest, total, finite = [], np.inf, 0.0, True
    with _addon_loader.handler_errors_raised():
        for frame in range(FIRST_FRAME, LAST_FRAME + 1):
            t0 = time.perf_counter()
            scene.frame_set(frame)
            total += time.perf_counter() - t0
            shown = _shown_vertices(obj)
            finite = finite and bool(np.isfinite(shown).all())
            volumes.append(enclosed_volume(shown, triangles) / rest_volume)
            lowest = min(lowest, float(shown[:, 2].min()))
            if frame % demo.PROGRESS_EVERY == 0:
                print(f"{PREFIX}: frame {frame}/{LAST_FRAME}", flush=True)
    ratio = np.array(volumes)
    landed = int(np.argmax(ratio < 1.0 - 1e-4)) + FIRST_FRAME if (ratio < 1.0 - 1e-4).any() else None

    scene.frame_set(FIRST_FRAME)
    blend, summary_path = out_dir / "jelly.blend", out_dir / "jelly_summary.txt"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=False)
    rows = [
        ("mesh", f"UV sphere, radius {RADIUS:g} m, {report.vertex_count} vertices, {report.face_count} faces, "
                 f"{'closed' if report.closed else 'open'}"),
        ("material", f"stretch {STRETCH:g} N/m, shear {SHEAR:g} N/m, bending {BENDING:g} N·m, "
                     f"{AREAL_DENSITY:g} kg/m², damping {DAMPING:g} /s"),
        ("pressure", f"{args.pressure:g} Pa" + (" (off)" if args.pressure == 0 else "")),
        ("drop", f"from {DROP:g} m onto the ground at z = {demo.GROUND_HEIGHT:g} m"),
        ("simulation", f"frames {FIRST_FRAME}-{LAST_FRAME} at {FPS} fps, {total / len(volumes) * 1000:.1f} "
                       f"ms/frame (mean)"),
        ("solver", backend.status()),
        ("volume / rest", f"{ratio.min():.4f} .. {ratio.max():.4f} (largest change "
                          f"{np.abs(ratio - 1.0).max() * 100:.2f} %)"),
        ("first squeezed", f"frame {landed}" if landed is not None else "never"),
        ("lowest point z", f"{lowest:+.4f} m"),
        ("all positions finite", "yes" if finite else "NO"),
        ("files", f"{blend}, {summary_path}"),
    ]
    return demo.write_summary("TetRig jelly demo", rows, summary_path)


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the exit status (see the module docstring)."""
    args = list(sys.argv if argv is None else argv)
    return _addon_loader.run_cli(PREFIX, lambda: run(parse_arguments(args)), demo.DemoError)


if __name__ == "__main__":
    status = main()
    if status != 0:
        sys.exit(status)
