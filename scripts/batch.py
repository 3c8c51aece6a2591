"""TetRig headless batch job: bind and bake soft bodies and jiggle rigs in one or many .blend files.

Usage, in the ``blender`` program (the .blend is opened by Blender before the script runs)::

    blender -b scene.blend --python scripts/batch.py -- (--object NAME ... | --all)
        [--frames FIRST LAST] [--output out.blend | --output-dir DIR] [--json out.json] [--rebuild]

    blender -b --python scripts/batch.py -- a.blend b.blend ... (--object NAME ... | --all)
        [--frames FIRST LAST] [--output-dir DIR] [--jobs N] [--rebuild]

and, with the same options, through the ``bpy`` module from PyPI (the .blend files come first)::

    python scripts/batch.py scene.blend [more.blend ...] -- (--object NAME ... | --all) ...

One file (the single-file job, in this process): load the add-on (the installed extension if
Blender has it enabled, else this repository; see ``_addon_loader.py``); find the objects in the
current scene (``--object`` may be repeated; ``--all`` takes every soft body of the scene that has
Simulate on and every armature with jiggle bones); build the cage and binding of each mesh unless
it is already bound (``--rebuild`` builds it again anyway), or set it up as a Surface body when its
Body Type is Surface (its own vertices are the particles: no cage; its bake, tear included, is
stored on the object), set up each armature's jiggle bones; bake frames FIRST..LAST (default: the scene's range) into the .blend (see
``runtime/bake.py``), printing ``tetrig batch: frame 40/120`` every 10 frames (``tetrig batch:
NAME frame 40/120`` with several objects); show the last frame; save the scene to ``--output``, or into
``--output-dir``, or next to the input as ``<name>.baked.blend`` (parent folders are created);
write the seed JSON (``bones_rest``, ``tets``, ``vertex_bones``, ``weights``) of the one object to
``--json`` if given; print one summary line per object. Relative paths are taken from the current
folder.

Several files: each file runs as the single-file job in a child process of its own (the same
program: ``python scripts/batch.py`` or ``blender -b``), ``--jobs N`` at a time (default 1). A
failing file does not stop the others. The children's output is relayed line by line, prefixed
with ``[file.blend]``; at the end one line per file says where its result went or why it failed,
and one line counts them. ``--output`` and ``--json`` name one file, so they need a single input.

Exit status (of a multi-file run: the worst of its files, 1 before 2):

- 0: done.
- 2: bad input, reported as one line ``tetrig batch: error: ...`` on standard error: bad or
  missing arguments, a .blend that cannot be opened, no such object, an object TetRig refuses
  (not a mesh, a cage, a flat mesh, Simulate off ...), a stale binding (the mesh changed since it
  was bound: pass ``--rebuild``), an output file that cannot be written.
- 1: anything else: the add-on cannot be loaded (e.g. SciPy missing), or its frame handler raised
  an exception while a frame was shown (Blender prints it and carries on; the script notices
  and saves nothing), a child process that could not start or crashed, or an internal error.
  Then the traceback, if any, and one line ``tetrig batch: error: ...`` or
  ``tetrig batch: internal error: ...``.

Exit status in the ``blender`` program: Blender turns ``sys.exit(n)`` raised by a ``--python``
script into its own exit status (checked with Blender 4.3), so no extra option is needed. An
*uncaught* exception in a ``--python`` script, by contrast, gives status 0 unless Blender is
started with ``--python-exit-code N``; this script catches every exception itself and exits 1, so
that option is not needed either. ``sys.exit`` is called only on failure: on success the script
returns and Blender goes on with any later command-line arguments.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

import bpy

if TYPE_CHECKING:  # mypy checks this file as the module tetrig.scripts.batch
    from . import _addon_loader
    from ._batch_args import (BAKED_SUFFIX, PREFIX, Arguments, BatchError, baked_path, check_blend,
                              check_writable, parse_arguments)
else:  # run as a script: scripts/ is not a package, so import the loader from beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _addon_loader
    from _batch_args import (BAKED_SUFFIX, PREFIX, Arguments, BatchError, baked_path, check_blend, check_writable,
                             parse_arguments)

# The blender program knows its executable; the bpy module has none (binary_path is "").
IN_BLENDER_PROGRAM = bool(bpy.app.binary_path)
SCRIPT = os.path.abspath(__file__)
PROGRESS_EVERY = 10  # frames between progress lines
def open_blend(path: str) -> None:
    """Open a .blend file.

    Raises:
        BatchError: no such file, or Blender cannot read it.
    """
    path = os.path.abspath(path)
    problem = check_blend(path)
    if problem:
        raise BatchError(problem)
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


def scene_soft_bodies(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """``--all``: the scene's soft bodies that have Simulate on (the others are skipped with a
    warning: they show their rest shape, there is nothing to bake)."""
    rigs = [o for o in scene.objects if o.type == "ARMATURE" and o.pose is not None
            and any(getattr(pb, "tetrig_jiggle").enabled for pb in o.pose.bones)
            and getattr(o, "tetrig_jiggle").enabled]
    found = [o for o in scene.objects if o.type == "MESH" and _addon_loader.settings(o).role == "SOURCE"]
    for obj in found:
        if not _addon_loader.settings(obj).simulate:
            print(f"{PREFIX}: warning: skipping {obj.name}: Simulate is turned off", file=sys.stderr,
                  flush=True)
    found = [o for o in found if _addon_loader.settings(o).simulate] + rigs
    if not found:
        raise BatchError(f"the scene {scene.name!r} of {_file_label()} has no soft body or jiggle rig to "
                         "bake (bind a mesh with --object NAME, or turn Simulate on)")
    return found


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
    rig = _addon_loader.submodule(addon, "runtime.cage.build")
    export = _addon_loader.submodule(addon, "runtime.cage.export")
    errors = _addon_loader.submodule(addon, "tetrig_addon.errors")
    settings = _addon_loader.settings(obj)
    if settings.role == "CAGE" and settings.source is not None:
        raise BatchError(f"{obj.name} is the TetRig cage of {settings.source.name}; "
                         f"pass --object {settings.source.name!r}")
    surface = obj.type == "MESH" and (settings.surface_bound if settings.role == "SOURCE"
                                      else settings.body_type == "SURFACE")
    if surface:  # a Surface body (Set Up Surface Body): its own vertices are the particles
        return ensure_surface(addon, obj, rebuild)
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


def ensure_surface(addon: ModuleType, obj: bpy.types.Object, rebuild: bool) -> RigCounts:
    """Set up ``obj`` as a Surface body unless it is one already (``rebuild``: set it up again,
    which checks it anew). Its counts are its vertices (the particles) and no tets.

    Raises:
        BatchError: TetRig refuses the object (an open mesh with pressure on, no faces ...).
    """
    rig = _addon_loader.submodule(addon, "runtime.surface.setup")
    errors = _addon_loader.submodule(addon, "tetrig_addon.errors")
    vertex_count = len(obj.data.vertices)
    if _addon_loader.settings(obj).role == "SOURCE" and not rebuild:
        return RigCounts(vertex_count, vertex_count, 0, None)
    try:
        report = rig.setup_surface(obj)
    except errors.TetRigInputError as exc:
        raise BatchError(str(exc)) from exc
    return RigCounts(vertex_count, vertex_count, 0, report.seconds)


def _progress(names: list[str]) -> Any:
    """A bake progress callback printing ``tetrig batch: frame 40/120`` (one object) or
    ``tetrig batch: NAME frame 40/120`` (several) every ``PROGRESS_EVERY`` frames."""
    counts: dict[str, int] = {}

    def report(name: str, frame: int, last: int) -> None:
        counts[name] = counts.get(name, 0) + 1
        if counts[name] % PROGRESS_EVERY == 0 or frame == last:
            label = "" if len(names) == 1 else f"{name} "
            print(f"{PREFIX}: {label}frame {frame}/{last}", flush=True)

    return report


def run(args: Arguments) -> str:
    """The single-file job; returns the summary lines.

    Raises:
        BatchError: bad input.
        _addon_loader.AddonLoadError: the add-on cannot be loaded.
        _addon_loader.HandlerFailure: the frame handler failed.
    """
    if args.blend is not None:
        output = args.output or baked_path(args.blend, args.output_dir)
    elif args.output:
        output = args.output
    elif bpy.data.filepath:
        output = baked_path(bpy.data.filepath, args.output_dir)
    else:
        raise BatchError("the open file has no name: pass --output or --output-dir")
    check_writable(output)
    if args.json:
        check_writable(args.json)
    addon = _addon_loader.load_addon()
    if args.blend is not None:
        open_blend(args.blend)
    scene = bpy.context.scene
    assert scene is not None, "Blender always has a current scene"
    chosen = (scene_soft_bodies(scene) if args.all_soft_bodies
              else [find_object(name, scene) for name in args.objects])
    rigs = [o for o in chosen if o.type == "ARMATURE"]
    objects = [o for o in chosen if o.type != "ARMATURE"]
    if args.json and not objects:
        raise BatchError("--json writes a soft body's cage and binding; an armature has none")
    if args.json and (_addon_loader.settings(objects[0]).surface_bound
                      or _addon_loader.settings(objects[0]).body_type == "SURFACE"):
        raise BatchError(f"--json writes a soft body's cage and binding; {objects[0].name} is a Surface "
                         "body and has none")
    counts = {obj.name: ensure_bound(addon, obj, scene, args.rebuild) for obj in objects}
    first, last = args.frames if args.frames is not None else (scene.frame_start, scene.frame_end)
    if first > last:
        raise BatchError(f"the scene's frame range {first}-{last} is empty; pass --frames")
    rig_lines = [bake_rig(addon, rig, scene, first, last, len(chosen)) for rig in rigs]
    driver = _addon_loader.submodule(addon, "runtime.scene")
    soft_body = _addon_loader.submodule(addon, "runtime.common.soft_body")
    bake = _addon_loader.submodule(addon, "runtime.bake")
    # Frames the add-on already simulated (its load handler shows the file's current frame) would
    # make the timing meaningless: start from empty caches. The result is the same either way.
    for obj in objects:
        driver.free(obj)
    results = []
    if objects:
        try:
            job = bake.BakeJob(objects, scene, first, last)
            results = job.run(bpy.context.evaluated_depsgraph_get(), progress=_progress([o.name for o in objects]))
        except (bake.BakeError, soft_body.StaleBindingError, ValueError) as exc:
            raise BatchError(str(exc)) from exc
    with _addon_loader.handler_errors_raised():
        scene.frame_set(last)  # the saved file shows the last baked frame
    for obj in objects + rigs:
        problem = driver.status(obj)
        if problem:
            print(f"{PREFIX}: warning: {problem}", file=sys.stderr, flush=True)

    try:
        bpy.ops.wm.save_as_mainfile(filepath=output, copy=False)
    except RuntimeError as exc:
        raise BatchError(f"cannot save {output}: {str(exc).strip()}") from exc
    if args.json:
        export = _addon_loader.submodule(addon, "runtime.cage.export")
        try:
            export.write_seed_json(objects[0], args.json)
        except OSError as exc:
            raise BatchError(f"cannot write {args.json}: {exc.strerror}") from exc
        except export.ExportError as exc:
            raise BatchError(str(exc)) from exc

    saved = output + (f", {args.json}" if args.json else "")
    lines = [f"{line}; saved {saved}" for line in rig_lines]
    for result in results:
        c = counts[result.name]
        build = ("kept the existing binding" if c.build_seconds is None
                 else f"build {c.build_seconds:.3f} s")
        made = (f"{c.vertex_count} vertices, Surface body" if c.tet_count == 0 else
                f"{c.vertex_count} vertices, {c.control_point_count} control points, {c.tet_count} tets")
        lines.append(f"{PREFIX}: {result.name}: {made}, {build}, frames {first}-{last} baked at "
                     f"{result.seconds / result.info.frame_count * 1000:.1f} ms/frame "
                     f"({result.info.nbytes / 1e6:.2f} MB); saved {saved}")
    return "\n".join(lines)


def bake_rig(addon: ModuleType, obj: bpy.types.Object, scene: bpy.types.Scene, first: int, last: int,
             object_count: int) -> str:
    """Set up and bake the jiggle bones of an armature; returns its summary line (without where
    the file was saved).

    Raises:
        BatchError: the armature has no jiggle bones, or TetRig refuses it (linked, scaled ...).
    """
    jiggle_rig = _addon_loader.submodule(addon, "runtime.jiggle.rig")
    jiggle_bake = _addon_loader.submodule(addon, "runtime.jiggle.bake")
    errors = _addon_loader.submodule(addon, "tetrig_addon.errors")
    problem = jiggle_bake.bake_problem(obj)
    if problem and not jiggle_rig.rig_problem(obj) and not jiggle_rig.bone_problem(obj):
        try:  # not set up yet (bones turned on from Python): set it up, as Update Jiggle Rig does
            jiggle_rig.setup(obj, scene)
        except errors.TetRigInputError as exc:
            raise BatchError(str(exc)) from exc
        problem = jiggle_bake.bake_problem(obj)
    if problem:
        raise BatchError(problem)
    _addon_loader.submodule(addon, "runtime.scene").free(obj)
    try:
        result = jiggle_bake.bake(obj, scene, bpy.context.evaluated_depsgraph_get(), first, last,
                                  progress=_progress([obj.name] * object_count))
    except jiggle_bake.JiggleBakeError as exc:
        raise BatchError(str(exc)) from exc
    per_frame = result.seconds / result.info.frame_count * 1000
    return (f"{PREFIX}: {obj.name}: {len(result.info.bones)} jiggle bones, frames {first}-{last} baked "
            f"at {per_frame:.1f} ms/frame ({result.info.nbytes / 1e6:.2f} MB)")


# --- several files -------------------------------------------------------------------------------

@dataclass(frozen=True)
class FileOutcome:
    blend: str
    output: str
    status: int  # the child's exit status
    reason: str  # its last error line ('' on success)
    seconds: float


def child_command(args: Arguments, blend: str, output: str) -> list[str]:
    """The command line that runs the single-file job on ``blend`` (same program as this one)."""
    options: list[str] = []
    if args.all_soft_bodies:
        options.append("--all")
    for name in args.objects:
        options += ["--object", name]
    if args.frames is not None:
        options += ["--frames", str(args.frames[0]), str(args.frames[1])]
    if args.rebuild:
        options.append("--rebuild")
    options += ["--output", output]
    if IN_BLENDER_PROGRAM:
        startup = ["--factory-startup"] if args.factory_startup else []
        return [bpy.app.binary_path, "-b", *startup, blend, "--python", SCRIPT, "--", *options]
    return [sys.executable, SCRIPT, blend, "--", *options]


_print_lock = threading.Lock()


def _say(line: str, error: bool = False) -> None:
    with _print_lock:
        print(line, file=sys.stderr if error else sys.stdout, flush=True)


def bake_file(args: Arguments, blend: str, output: str) -> FileOutcome:
    """Run the single-file job on ``blend`` in a child process, relaying its output."""
    label = os.path.basename(blend)
    problem = check_blend(blend)
    if problem:  # a child blender would die on it with its own message and status 1
        return FileOutcome(blend, output, 2, problem, 0.0)
    t0 = time.perf_counter()
    reason = ""
    try:
        proc = subprocess.Popen(child_command(args, os.path.abspath(blend), output),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace")
    except OSError as exc:
        return FileOutcome(blend, output, 1, f"cannot start a process: {exc.strerror}", 0.0)
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        if not line.strip():
            continue
        if line.startswith(f"{PREFIX}: error: "):
            reason = line.removeprefix(f"{PREFIX}: error: ")
        elif line.startswith(f"{PREFIX}: internal error: "):
            reason = line.removeprefix(f"{PREFIX}: ")
        _say(f"[{label}] {line}")
    status = proc.wait()
    if status != 0 and not reason:
        reason = f"the process ended with status {status} without a message"
    if status < 0:  # killed by a signal (a crash)
        status = 1
    return FileOutcome(blend, output, status, reason if status else "", time.perf_counter() - t0)


def run_many(args: Arguments) -> tuple[int, str]:
    """Bake every file in its own process, ``args.jobs`` at a time; returns the exit status and
    the closing line."""
    outputs = [baked_path(b, args.output_dir) for b in args.blends]
    if len(set(outputs)) != len(outputs):
        raise BatchError("two input files would both be saved as the same "
                         f"<name>{BAKED_SUFFIX}; rename one or bake them separately")
    for path in outputs:
        check_writable(path)
    _say(f"{PREFIX}: {len(args.blends)} files, {min(args.jobs, len(args.blends))} at a time")
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        outcomes = list(pool.map(lambda bo: bake_file(args, bo[0], bo[1]), zip(args.blends, outputs)))
    failed = [o for o in outcomes if o.status != 0]
    for o in outcomes:
        name = os.path.basename(o.blend)
        if o.status == 0:
            _say(f"{PREFIX}: {name}: baked in {o.seconds:.1f} s, saved {o.output}")
        else:
            _say(f"{PREFIX}: {name}: failed (status {o.status}): {o.reason}", error=True)
    summary = f"{PREFIX}: {len(outcomes)} files: {len(outcomes) - len(failed)} baked, {len(failed)} failed"
    if not failed:
        return 0, summary
    return (1 if any(o.status == 1 for o in failed) else 2), summary


def main(argv: list[str] | None = None) -> int:
    """Run the batch job; returns the exit status (see the module docstring)."""
    argv = sys.argv if argv is None else argv
    try:
        args = parse_arguments(argv, IN_BLENDER_PROGRAM)
    except BatchError as exc:
        print(f"{PREFIX}: error: {exc}", file=sys.stderr, flush=True)
        return 2
    if len(args.blends) <= 1:
        return _addon_loader.run_cli(PREFIX, lambda: run(args), BatchError)
    statuses: list[int] = []

    def many() -> str:
        status, summary = run_many(args)
        statuses.append(status)
        return summary

    code = _addon_loader.run_cli(PREFIX, many, BatchError)
    return code if code != 0 else statuses[0]


if __name__ == "__main__":
    exit_status = main()
    sys.stdout.flush()
    if exit_status != 0:
        sys.exit(exit_status)
