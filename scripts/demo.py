"""TetRig demo: drop a mesh onto the ground as a soft body and report what happened.

Usage (``make demo [MESH=path]`` runs this with ``.venv/bin/python``)::

    python scripts/demo.py [MESH] [--out DIR]

MESH is an .obj, .ply or .stl file (imported with Blender's own importers, several objects
joined into one); without it the demo uses Blender's Suzanne. Units are the file's, read as
metres: the mesh is not rescaled.

The demo builds a fresh scene: the mesh, centred over the origin with its lowest point 0.5 m
above a ground plane at z = 0 (the TetRig ground, ``use_ground``, at height 0, and a visible
plane), a camera and a sun framing it. It builds the cage and binding, simulates frames 1..120
(24 fps) by showing each frame in turn, and writes into DIR (default ``out/`` in the current
folder, created if missing):

- ``demo.blend``: the scene, saved at frame 1 (press Play, or render the animation);
- ``demo.json``: the seed JSON (``bones_rest``, ``tets``, ``vertex_bones``, ``weights``);
- ``summary.txt``: also printed: counts, build and per-frame times, the lowest vertex over the run,
  how far the mesh still moved between the last two frames, and whether every position was finite.

It runs in the ``bpy`` module and in the ``blender`` program alike
(``blender -b --factory-startup --python scripts/demo.py -- [MESH]``). The add-on is loaded as in
``batch.py`` (``_addon_loader.py``). Exit status: 0 done; 2 bad input (no such mesh file, a format
other than .obj/.ply/.stl, a file with no mesh, a mesh TetRig refuses), one line on standard error;
1 anything else (the add-on cannot be loaded, its frame handler failed, an internal error).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn, cast

import bpy
import numpy as np
from mathutils import Vector

if TYPE_CHECKING:  # mypy sees this file as the module tetrig.scripts.demo
    from . import _addon_loader
else:  # run as a script: scripts/ is not a package, so import the loader from beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _addon_loader

PREFIX = "tetrig demo"

FIRST_FRAME, LAST_FRAME = 1, 120
FPS = 24
DROP_HEIGHT = 0.5  # lowest vertex above the ground at rest [m]
GROUND_HEIGHT = 0.0  # [m]
GROUND_SIZE_FACTOR = 4.0  # ground plane side / largest horizontal extent of the mesh
CAMERA_DISTANCE_FACTOR = 2.5  # camera distance / bounding-box diagonal of the mesh and its drop
WORLD_COLOR = (0.45, 0.5, 0.58)  # a light grey-blue sky
PROGRESS_EVERY = 20
REST_SPEED = 0.01  # below this the largest vertex speed counts as "at rest" [m/s]  # frames between progress lines
IMPORTERS = {  # extension → operator name under bpy.ops.wm
    ".obj": "obj_import",
    ".ply": "ply_import",
    ".stl": "stl_import",
}


class DemoError(Exception):
    """Bad input: one line on standard error, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise DemoError(message)


def script_options(argv: list[str]) -> list[str]:
    """A script's own arguments: those after ``--`` in the blender program, else after the
    script's name (a ``--`` there is dropped)."""
    options = argv[argv.index("--") + 1:] if bpy.app.binary_path else argv[1:]
    if not bpy.app.binary_path and "--" in options:
        options.remove("--")
    return options


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    """Arguments after ``--`` in the blender program, else after the script name."""
    options = script_options(argv)
    parser = _Parser(prog="python scripts/demo.py",
                     description="Drop a mesh as a TetRig soft body and report the run.")
    parser.add_argument("mesh", nargs="?", help="an .obj, .ply or .stl file (default: Suzanne)")
    parser.add_argument("--out", default="out", help="output folder (default: out)")
    return parser.parse_args(options)


def _scene() -> bpy.types.Scene:
    scene = bpy.context.scene
    assert scene is not None, "Blender always has a current scene"
    return scene


def _active_object() -> bpy.types.Object:
    """The object an ``object.*_add`` or importer operator just made active."""
    obj = bpy.context.active_object
    assert obj is not None, "the add operator left no active object"
    return obj


def _mesh(obj: bpy.types.Object) -> bpy.types.Mesh:
    """The mesh data of a mesh object."""
    return cast(bpy.types.Mesh, obj.data)


def _world_vertices(obj: bpy.types.Object, mesh: bpy.types.Mesh | None = None) -> np.ndarray:
    """Vertex positions of ``mesh`` (default: the object's own) in world space: float64 [N, 3]."""
    mesh = mesh if mesh is not None else _mesh(obj)
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def check_mesh_path(path: str | None) -> Path | None:
    """The mesh file as an absolute path (``None``: Suzanne).

    Raises:
        DemoError: an unsupported format or no such file.
    """
    if path is None:
        return None
    file = Path(path).expanduser().resolve()
    if file.suffix.lower() not in IMPORTERS:
        raise DemoError(f"cannot read {path!r}: use an .obj, .ply or .stl file")
    if not file.is_file():
        raise DemoError(f"no such mesh file: {file}")
    return file


def add_mesh(file: Path | None) -> tuple[bpy.types.Object, str]:
    """Add Suzanne, or import ``file`` (checked by ``check_mesh_path``); returns the (single) mesh
    object and a label for it.

    Raises:
        DemoError: the importer failed, or the file has no mesh.
    """
    if file is None:
        bpy.ops.mesh.primitive_monkey_add()
        obj = _active_object()
        _mesh(obj).shade_smooth()
        return obj, "Suzanne (built in)"
    importer = IMPORTERS[file.suffix.lower()]
    before = set(bpy.data.objects)
    try:
        getattr(bpy.ops.wm, importer)(filepath=str(file))
    except RuntimeError as exc:
        raise DemoError(f"cannot import {file}: {str(exc).strip().splitlines()[-1].removeprefix('Error: ')}") from exc
    meshes = [o for o in bpy.data.objects if o not in before and o.type == "MESH"
              and len(o.data.vertices) > 0]
    if not meshes:
        raise DemoError(f"{file} has no mesh with vertices")
    obj = meshes[0]
    if len(meshes) > 1:
        with bpy.context.temp_override(active_object=obj, selected_objects=meshes,
                                       selected_editable_objects=meshes):
            bpy.ops.object.join()
    obj.name = file.stem
    return obj, file.name


def place(obj: bpy.types.Object) -> np.ndarray:
    """Move ``obj`` so its bounding box is centred over the origin and its lowest vertex is
    ``DROP_HEIGHT`` above the ground; returns the world bounding box float64 [2, 3]."""
    bpy.context.view_layer.update()
    world = _world_vertices(obj)
    lo, hi = world.min(0), world.max(0)
    shift = np.array([-(lo[0] + hi[0]) / 2, -(lo[1] + hi[1]) / 2, GROUND_HEIGHT + DROP_HEIGHT - lo[2]])
    obj.location = Vector(np.array(obj.location) + shift)
    bpy.context.view_layer.update()
    return np.stack([lo + shift, hi + shift])


def _material(name: str, color: tuple[float, float, float]) -> bpy.types.Material:
    mat = bpy.data.materials.new(name)
    # The stubs type the colour as bpy_prop_array; Blender takes any sequence of four floats.
    mat.diffuse_color = (*color, 1.0)  # type: ignore[assignment]
    if bpy.app.version < (5, 0, 0):  # Blender 5.0 materials always use nodes (use_nodes is deprecated)
        mat.use_nodes = True
    bsdf = mat.node_tree.nodes.get("Principled BSDF") if mat.node_tree else None
    if bsdf is not None:
        bsdf.inputs["Base Color"].default_value = (*color, 1.0)
    return mat


def stage(obj: bpy.types.Object, box: np.ndarray) -> None:
    """A ground plane, a camera and a sun framing the drop (for the look only: no physics)."""
    scene = _scene()
    extent = float(max(box[1, 0] - box[0, 0], box[1, 1] - box[0, 1], box[1, 2] - box[0, 2]))
    bpy.ops.mesh.primitive_plane_add(size=GROUND_SIZE_FACTOR * extent + 2 * DROP_HEIGHT,
                                     location=(0.0, 0.0, GROUND_HEIGHT))
    ground = bpy.context.active_object
    ground.name = "Ground"
    ground.data.materials.append(_material("Ground", (0.6, 0.6, 0.6)))
    if not obj.data.materials:
        obj.data.materials.append(_material("Soft Body", (0.8, 0.25, 0.1)))

    # Aim at the middle of the drop: from the rest pose down to the ground.
    target = Vector((0.0, 0.0, (GROUND_HEIGHT + box[1, 2]) / 2))
    diagonal = float(np.linalg.norm(box[1] - box[0])) + DROP_HEIGHT
    direction = Vector((1.0, -1.4, 0.6)).normalized()
    bpy.ops.object.camera_add(location=target + direction * (CAMERA_DISTANCE_FACTOR * diagonal))
    camera = bpy.context.active_object
    camera.rotation_euler = (target - camera.location).to_track_quat("-Z", "Y").to_euler()
    camera.data.clip_end = max(camera.data.clip_end, 10 * CAMERA_DISTANCE_FACTOR * diagonal)
    scene.camera = camera
    bpy.ops.object.light_add(type="SUN", rotation=(0.6, 0.2, 0.8))
    bpy.context.active_object.data.energy = 3.0
    if scene.world is None:
        scene.world = bpy.data.worlds.new("World")
    scene.world.color = WORLD_COLOR  # the background when the world uses no nodes
    if scene.world.node_tree is not None:
        background = scene.world.node_tree.nodes.get("Background")
        if background is not None:
            background.inputs["Color"].default_value = (*WORLD_COLOR, 1.0)
    bpy.context.view_layer.objects.active = obj


@dataclass(frozen=True)
class RunStats:
    seconds_per_frame: float  # mean time of one frame_set [s]
    lowest_z: float  # lowest vertex z over all frames [m]
    last_step: float  # largest vertex displacement between the last two frames [m]
    all_finite: bool


def simulate(obj: bpy.types.Object) -> RunStats:
    """Show frames FIRST..LAST in turn and measure the evaluated (displayed) vertex positions."""
    scene = _scene()
    total, lowest, finite = 0.0, np.inf, True
    previous: np.ndarray | None = None
    last_step = np.nan
    for frame in range(FIRST_FRAME, LAST_FRAME + 1):
        t0 = time.perf_counter()
        scene.frame_set(frame)
        total += time.perf_counter() - t0
        ob_eval = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
        mesh = ob_eval.to_mesh()
        try:
            positions = _world_vertices(ob_eval, mesh)
        finally:
            ob_eval.to_mesh_clear()
        finite = finite and bool(np.all(np.isfinite(positions)))
        lowest = min(lowest, float(np.nanmin(positions[:, 2])))
        if previous is not None:
            last_step = float(np.max(np.linalg.norm(positions - previous, axis=1)))
        previous = positions
        if frame % PROGRESS_EVERY == 0:
            print(f"{PREFIX}: frame {frame}/{LAST_FRAME}", flush=True)
    return RunStats(total / (LAST_FRAME - FIRST_FRAME + 1), lowest, last_step, finite)


def run(args: argparse.Namespace) -> str:
    """The demo; returns the summary text."""
    mesh_file = check_mesh_path(args.mesh)
    out_dir = Path(args.out).resolve()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DemoError(f"cannot create {out_dir}: {exc.strerror}") from exc
    bpy.ops.wm.read_factory_settings(use_empty=True)
    addon = _addon_loader.load_addon()
    rig = _addon_loader.submodule(addon, "runtime.cage.build")
    export = _addon_loader.submodule(addon, "runtime.cage.export")
    errors = _addon_loader.submodule(addon, "tetrig_addon.errors")

    scene = _scene()
    scene.frame_start, scene.frame_end = FIRST_FRAME, LAST_FRAME
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    obj, label = add_mesh(mesh_file)
    box = place(obj)
    stage(obj, box)
    settings = _addon_loader.settings(obj)
    settings.use_ground, settings.ground_height = True, GROUND_HEIGHT
    scene.frame_set(FIRST_FRAME)
    try:
        report = rig.build(obj, scene.collection)
    except errors.TetRigInputError as exc:
        raise DemoError(f"{label}: {exc}") from exc
    print(f"{PREFIX}: {report.message(obj.name)}", flush=True)
    # the solver compiles once per computer (about a minute, kept in a cache): before the timing
    backend = _addon_loader.submodule(addon, "tetrig_addon.solver.backend")
    backend.warm_up()
    with _addon_loader.handler_errors_raised():
        stats = simulate(obj)
    warning = _addon_loader.submodule(addon, "runtime.scene").status(obj)

    scene.frame_set(FIRST_FRAME)
    blend, json_path, summary_path = out_dir / "demo.blend", out_dir / "demo.json", out_dir / "summary.txt"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend), copy=False)
    export.write_seed_json(obj, json_path)

    dt = 1.0 / FPS
    size = box[1] - box[0]
    rows = [
        ("mesh", f"{label}, {size[0]:.3g} × {size[1]:.3g} × {size[2]:.3g} m"),
        ("vertices", f"{report.vertex_count}"),
        ("control points", f"{report.control_point_count}"),
        ("tets", f"{report.tet_count}"),
        ("outside every tet", f"{report.outside_count} (bound to their nearest tet)"),
        ("cage build + bind", f"{report.seconds * 1000:.0f} ms"),
        ("simulation", f"frames {FIRST_FRAME}-{LAST_FRAME} at {FPS} fps, "
                       f"{stats.seconds_per_frame * 1000:.1f} ms/frame (mean)"),
        ("solver", backend.status() + (f", loaded in {backend.load_seconds():.1f} s (compiled on the "
                                        "first run, then read from its cache)"
                                        if backend.load_seconds() is not None else "")),
        ("lowest vertex z", f"{stats.lowest_z:+.4f} m (ground at {GROUND_HEIGHT:g} m, "
                            f"rest at {GROUND_HEIGHT + DROP_HEIGHT:g} m)"),
        (f"moved {LAST_FRAME - 1}→{LAST_FRAME}",
         f"{stats.last_step:.2e} m max (≈ {stats.last_step / dt:.2e} m/s: "
         f"{'at rest' if stats.last_step / dt < REST_SPEED else 'still moving'})"),
        ("all positions finite", "yes" if stats.all_finite else "NO"),
    ]
    if warning:
        rows.append(("warning", warning))
    rows.append(("files", f"{blend}, {json_path}, {summary_path}"))
    return write_summary("TetRig demo", rows, summary_path)


def write_summary(title: str, rows: list[tuple[str, str]], path: Path) -> str:
    """The summary: ``title``, then one aligned "name  value" line per row; written to ``path``
    (UTF-8) and returned."""
    width = max(len(k) for k, _ in rows)
    text = title + "\n" + "".join(f"  {k:<{width}}  {v}\n" for k, v in rows)
    path.write_text(text, encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the exit status (see the module docstring)."""
    args = list(sys.argv if argv is None else argv)
    return _addon_loader.run_cli(PREFIX, lambda: run(parse_arguments(args)), DemoError)


if __name__ == "__main__":
    status = main()
    if status != 0:
        sys.exit(status)
