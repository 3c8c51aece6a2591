"""TetRig headless batch job: bind one object, simulate a frame range, save the result.

Usage, in the ``blender`` program (the .blend is opened by Blender before the script runs)::

    blender -b scene.blend --python scripts/batch.py -- --object NAME [--frames FIRST LAST]
        --output out.blend [--json out.json] [--rebuild]

and, with the same arguments, through the ``bpy`` module from PyPI (the .blend comes first)::

    python scripts/batch.py scene.blend -- --object NAME [--frames FIRST LAST]
        --output out.blend [--json out.json] [--rebuild]

Steps: load the add-on (the installed extension if Blender has it enabled, else this repository;
see ``_addon_loader.py``); find the object in the current scene; build its cage and binding unless
it is already bound (``--rebuild`` builds it again anyway); show every frame FIRST..LAST in turn
with ``scene.frame_set`` (the add-on's frame handler simulates), printing ``tetrig batch: frame
40/120`` every 10 frames; save the scene to ``--output`` (parent folders are created); write the
seed JSON (``bones_rest``, ``tets``, ``vertex_bones``, ``weights``) to ``--json`` if given; print
one summary line. ``--frames`` defaults to the scene's frame range. Relative paths are taken from
the current folder.

Exit status:

- 0: done.
- 2: bad input, reported as one line ``tetrig batch: error: ...`` on standard error: bad or
  missing arguments, a .blend that cannot be opened, no such object, an object TetRig refuses
  (not a mesh, a cage, a flat mesh ...), a stale binding (the mesh changed since it was bound:
  pass ``--rebuild``), an output file that cannot be written.
- 1: anything else: the add-on cannot be loaded (e.g. SciPy missing), or its frame handler raised
  an exception while the frames were shown (Blender prints it and carries on; the script notices
  and saves nothing), or an internal error. Then the traceback, if any, and one line
  ``tetrig batch: error: ...`` or ``tetrig batch: internal error: ...``.

Exit status in the ``blender`` program: Blender turns ``sys.exit(n)`` raised by a ``--python``
script into its own exit status (checked with Blender 4.3), so no extra option is needed. An
*uncaught* exception in a ``--python`` script, by contrast, gives status 0 unless Blender is
started with ``--python-exit-code N``; this script catches every exception itself and exits 1, so
that option is not needed either. ``sys.exit`` is called only on failure: on success the script
returns and Blender goes on with any later command-line arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, NoReturn

import bpy

if TYPE_CHECKING:  # mypy checks this file as the module tetrig.scripts.batch
    from . import _addon_loader
else:  # run as a script: scripts/ is not a package, so import the loader from beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _addon_loader

# The blender program knows its executable; the bpy module has none (binary_path is "").
IN_BLENDER_PROGRAM = bool(bpy.app.binary_path)
PREFIX = "tetrig batch"
PROGRESS_EVERY = 10  # frames between progress lines
# A .blend starts with "BLENDER", or is gzip- or Zstandard-compressed (Blender 3.0+).
BLEND_MAGIC, GZIP_MAGIC, ZSTD_MAGIC = b"BLENDER", b"\x1f\x8b", b"\x28\xb5\x2f\xfd"
# Blender's frame limits (MINAFRAME, MAXFRAME in DNA_scene_types.h).
MIN_FRAME, MAX_FRAME = -1048574, 1048574


class BatchError(Exception):
    """Bad input: reported as one line on standard error, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise BatchError(message)


def _parser(prog: str) -> _Parser:
    parser = _Parser(prog=prog, description="Bind a mesh to a TetRig cage, simulate a frame range "
                     "and save the result (see the docstring of scripts/batch.py).")
    parser.add_argument("--object", required=True, metavar="NAME",
                        help="the mesh object to simulate (in the current scene)")
    parser.add_argument("--frames", nargs=2, type=int, metavar=("FIRST", "LAST"),
                        help="frames to step through, inclusive (default: the scene's range)")
    parser.add_argument("--output", required=True, metavar="OUT.blend",
                        help="where to save the .blend after the last frame")
    parser.add_argument("--json", metavar="OUT.json", help="also write the seed JSON here")
    parser.add_argument("--rebuild", action="store_true",
                        help="build the cage again even if the object is already bound")
    return parser


@dataclass(frozen=True)
class Arguments:
    blend: str | None  # .blend to open (bpy module mode only); None: use the file already open
    object: str
    frames: tuple[int, int] | None
    output: str
    json: str | None
    rebuild: bool


def parse_arguments(argv: list[str], in_blender_program: bool) -> Arguments:
    """Parse ``sys.argv``: in the blender program the script's arguments follow ``--``; in module
    mode the .blend path comes first, before ``--``.

    Raises:
        BatchError: the arguments are wrong (one-line message).
    """
    if in_blender_program:
        options = argv[argv.index("--") + 1:] if "--" in argv else []
        prog, blend = "blender -b scene.blend --python scripts/batch.py --", None
    else:
        rest = argv[1:]
        before, options = (rest[:rest.index("--")], rest[rest.index("--") + 1:]) if "--" in rest \
            else (rest[:1], rest[1:])
        prog = "python scripts/batch.py scene.blend --"
        if len(before) != 1 or before[0].startswith("-"):
            if {"-h", "--help"} & set(rest):
                _parser(prog).parse_args(["--help"])
            raise BatchError("give the .blend file first: python scripts/batch.py scene.blend -- "
                             "--object NAME --output out.blend")
        blend = before[0]
    ns = _parser(prog).parse_args(options)
    frames = (ns.frames[0], ns.frames[1]) if ns.frames is not None else None
    if frames is not None:
        if frames[0] > frames[1]:
            raise BatchError(f"--frames: FIRST ({frames[0]}) is after LAST ({frames[1]})")
        if frames[0] < MIN_FRAME or frames[1] > MAX_FRAME:
            raise BatchError(f"--frames: Blender's frames run from {MIN_FRAME} to {MAX_FRAME}")
    return Arguments(blend=blend, object=ns.object, frames=frames,
                     output=os.path.abspath(ns.output),
                     json=os.path.abspath(ns.json) if ns.json else None, rebuild=ns.rebuild)


def _check_writable(path: str) -> None:
    """Create the parent folder of ``path`` and check it can hold a new file."""
    parent = os.path.dirname(path)
    if os.path.isdir(path):
        raise BatchError(f"cannot write {path}: it is a folder")
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise BatchError(f"cannot create the folder {parent}: {exc.strerror}") from exc
    if not os.access(parent, os.W_OK):
        raise BatchError(f"cannot write into {parent}: permission denied")


def open_blend(path: str) -> None:
    """Open a .blend file (bpy module mode).

    Raises:
        BatchError: no such file, or Blender cannot read it.
    """
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise BatchError(f"no such .blend file: {path}")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(len(BLEND_MAGIC))
    except OSError as exc:
        raise BatchError(f"cannot read {path}: {exc.strerror}") from exc
    if not magic.startswith((BLEND_MAGIC, GZIP_MAGIC, ZSTD_MAGIC)):
        raise BatchError(f"{path} is not a .blend file")
    try:
        bpy.ops.wm.open_mainfile(filepath=path)
    except RuntimeError as exc:
        text = str(exc).strip()
        reason = text.splitlines()[-1].removeprefix("Error: ") if text else "unreadable"
        raise BatchError(f"cannot open {path}: {reason}") from exc


def _file_label() -> str:
    return os.path.basename(bpy.data.filepath) if bpy.data.filepath else "the startup file"


def find_object(name: str, scene: bpy.types.Scene) -> bpy.types.Object:
    obj = scene.objects.get(name)
    if obj is not None:
        return obj
    if bpy.data.objects.get(name) is not None:
        raise BatchError(f"object {name!r} is not in the scene {scene.name!r} of {_file_label()}")
    raise BatchError(f"no object named {name!r} in {_file_label()}")


@dataclass(frozen=True)
class RigCounts:
    vertex_count: int
    control_point_count: int
    tet_count: int
    build_seconds: float | None  # None: the existing binding was kept


def ensure_bound(addon: ModuleType, obj: bpy.types.Object, scene: bpy.types.Scene,
                 rebuild: bool) -> RigCounts:
    """Build the cage and binding of ``obj`` unless it is already (validly) bound.

    Raises:
        BatchError: TetRig refuses the object, or its binding is stale and ``rebuild`` is off.
    """
    rig = _addon_loader.submodule(addon, "runtime.rig")
    export = _addon_loader.submodule(addon, "runtime.export")
    errors = _addon_loader.submodule(addon, "tetrig_addon.errors")
    settings = _addon_loader.settings(obj)
    if settings.role == "CAGE" and settings.source is not None:
        raise BatchError(f"{obj.name} is the TetRig cage of {settings.source.name}; "
                         f"pass --object {settings.source.name!r}")
    if obj.type == "MESH" and settings.role == "SOURCE" and not rebuild:
        # The same checks the frame handler makes before it simulates: a cage that is still a
        # tet mesh, binding attributes present, and the vertex count it was bound with.
        try:
            seed = export.seed_data(obj)
        except export.ExportError as exc:
            raise BatchError(f"{exc} (pass --rebuild to build the cage again)") from exc
        vertex_count = len(obj.data.vertices)
        if settings.bound_vertex_count != vertex_count:
            raise BatchError(f"{obj.name} has {vertex_count} vertices but was bound with "
                             f"{settings.bound_vertex_count} (pass --rebuild to build the cage again)")
        return RigCounts(vertex_count, len(seed.bones_rest), len(seed.tets), None)
    collection = obj.users_collection[0] if obj.users_collection else scene.collection
    try:
        report = rig.build(obj, collection)
    except errors.TetRigInputError as exc:
        raise BatchError(str(exc)) from exc
    return RigCounts(report.vertex_count, report.control_point_count, report.tet_count,
                     report.seconds)


def step_frames(scene: bpy.types.Scene, first: int, last: int) -> float:
    """``scene.frame_set`` on every frame first..last, with progress lines; returns the mean time
    of one ``frame_set`` [s] (simulation, write-back and depsgraph evaluation)."""
    total = 0.0
    for i, frame in enumerate(range(first, last + 1)):
        t0 = time.perf_counter()
        scene.frame_set(frame)
        total += time.perf_counter() - t0
        if (i + 1) % PROGRESS_EVERY == 0 or frame == last:
            print(f"{PREFIX}: frame {frame}/{last}", flush=True)
    return total / (last - first + 1)


def run(args: Arguments) -> str:
    """The batch job; returns the summary line.

    Raises:
        BatchError: bad input.
        _addon_loader.AddonLoadError: the add-on cannot be loaded.
    """
    _check_writable(args.output)
    if args.json:
        _check_writable(args.json)
    addon = _addon_loader.load_addon()
    if args.blend is not None:
        open_blend(args.blend)
    scene = bpy.context.scene
    assert scene is not None, "Blender always has a current scene"
    obj = find_object(args.object, scene)
    settings = _addon_loader.settings(obj)
    if obj.type == "MESH" and settings.role != "CAGE" and not settings.simulate:
        print(f"{PREFIX}: warning: {obj.name} has Simulate turned off; its frames show the rest "
              "shape", file=sys.stderr, flush=True)
    counts = ensure_bound(addon, obj, scene, args.rebuild)
    first, last = args.frames if args.frames is not None else (scene.frame_start, scene.frame_end)
    if first > last:
        raise BatchError(f"the scene's frame range {first}-{last} is empty; pass --frames")
    simulation = _addon_loader.submodule(addon, "runtime.simulation")
    # Frames the add-on already simulated (its load handler shows the file's current frame) would
    # make the timing meaningless: start from an empty cache. The result is the same either way.
    simulation.free(obj)
    with _addon_loader.handler_errors_raised():
        seconds_per_frame = step_frames(scene, first, last)
    problem = simulation.status(obj)
    if problem:
        print(f"{PREFIX}: warning: {problem}", file=sys.stderr, flush=True)

    try:
        bpy.ops.wm.save_as_mainfile(filepath=args.output, copy=False)
    except RuntimeError as exc:
        raise BatchError(f"cannot save {args.output}: {str(exc).strip()}") from exc
    if args.json:
        export = _addon_loader.submodule(addon, "runtime.export")
        try:
            export.write_seed_json(obj, args.json)
        except OSError as exc:
            raise BatchError(f"cannot write {args.json}: {exc.strerror}") from exc
        except export.ExportError as exc:
            raise BatchError(str(exc)) from exc

    build = ("kept the existing binding" if counts.build_seconds is None
             else f"build {counts.build_seconds:.3f} s")
    return (f"{PREFIX}: {obj.name}: {counts.vertex_count} vertices, {counts.control_point_count} "
            f"control points, {counts.tet_count} tets, {build}, frames {first}-{last} at "
            f"{seconds_per_frame * 1000:.1f} ms/frame; saved {args.output}"
            + (f", {args.json}" if args.json else ""))


def main(argv: list[str] | None = None) -> int:
    """Run the batch job; returns the exit status (see the module docstring)."""
    argv = sys.argv if argv is None else argv
    return _addon_loader.run_cli(PREFIX, lambda: run(parse_arguments(argv, IN_BLENDER_PROGRAM)),
                                 BatchError)


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    if status != 0:
        sys.exit(status)
