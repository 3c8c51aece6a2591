"""The batch script's command line: its arguments, their checks and where results go
(``batch.py``; a module of its own so that each stays short). Bad input raises ``BatchError``,
which the script reports as one line and exit status 2."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import NoReturn

PREFIX = "tetrig batch"
BAKED_SUFFIX = ".baked.blend"
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


def _parser(prog: str, positional_blends: bool) -> _Parser:
    parser = _Parser(prog=prog, description="Bind meshes to TetRig cages, bake a frame range and "
                     "save the result (see the docstring of scripts/batch.py).")
    if positional_blends:
        parser.add_argument("blends", nargs="*", metavar="FILE.blend",
                            help="files to bake (default: the file Blender opened)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--object", action="append", metavar="NAME", dest="objects",
                       help="a mesh (soft body) or an armature (jiggle bones) to bake, in the "
                            "current scene; may be repeated")
    which.add_argument("--all", action="store_true",
                       help="bake every soft body and jiggle rig of the scene")
    parser.add_argument("--frames", nargs=2, type=int, metavar=("FIRST", "LAST"),
                        help="frames to bake, inclusive (default: the scene's range)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--output", metavar="OUT.blend",
                     help="where to save the .blend (one input file only; default: "
                          "<name>.baked.blend next to the input)")
    out.add_argument("--output-dir", metavar="DIR", help="save <name>.baked.blend files here")
    parser.add_argument("--json", metavar="OUT.json",
                        help="also write the seed JSON here (one file and one object only)")
    parser.add_argument("--rebuild", action="store_true",
                        help="build the cage again even if an object is already bound")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="files baked at the same time, each in its own process (default 1)")
    return parser


@dataclass(frozen=True)
class Arguments:
    blends: tuple[str, ...]  # .blend files to open; () = use the file already open (blender program)
    objects: tuple[str, ...]  # () with all_soft_bodies
    all_soft_bodies: bool
    frames: tuple[int, int] | None
    output: str | None
    output_dir: str | None
    json: str | None
    rebuild: bool
    jobs: int
    factory_startup: bool  # the blender program was started with --factory-startup

    @property
    def blend(self) -> str | None:
        """The single input file (module mode), ``None`` for the open file."""
        return self.blends[0] if self.blends else None


def parse_arguments(argv: list[str], in_blender_program: bool) -> Arguments:
    """Parse ``sys.argv``: in the blender program the script's arguments follow ``--`` (.blend
    files there are optional); in module mode the .blend paths come first, before ``--``.

    Raises:
        BatchError: the arguments are wrong (one-line message).
    """
    if in_blender_program:
        options = argv[argv.index("--") + 1:] if "--" in argv else []
        prog = "blender -b [scene.blend] --python scripts/batch.py -- [FILE.blend ...]"
        ns = _parser(prog, positional_blends=True).parse_args(options)
        blends = tuple(ns.blends)
    else:
        rest = argv[1:]
        before, options = (rest[:rest.index("--")], rest[rest.index("--") + 1:]) if "--" in rest \
            else (rest[:1], rest[1:])
        prog = "python scripts/batch.py scene.blend [more.blend ...] --"
        if not before or any(b.startswith("-") for b in before):
            if {"-h", "--help"} & set(rest):
                _parser(prog, positional_blends=False).parse_args(["--help"])
            raise BatchError("give the .blend file first: python scripts/batch.py scene.blend -- "
                             "--object NAME --output out.blend")
        ns = _parser(prog, positional_blends=False).parse_args(options)
        blends = tuple(before)
    frames = (ns.frames[0], ns.frames[1]) if ns.frames is not None else None
    if frames is not None:
        if frames[0] > frames[1]:
            raise BatchError(f"--frames: FIRST ({frames[0]}) is after LAST ({frames[1]})")
        if frames[0] < MIN_FRAME or frames[1] > MAX_FRAME:
            raise BatchError(f"--frames: Blender's frames run from {MIN_FRAME} to {MAX_FRAME}")
    if ns.jobs < 1:
        raise BatchError("--jobs must be at least 1")
    objects = tuple(ns.objects or ())
    if len(blends) > 1 and ns.output:
        raise BatchError("--output names one file: with several .blend files use --output-dir")
    if ns.json and (len(blends) > 1 or ns.all or len(objects) != 1):
        raise BatchError("--json writes one object's rig: give one .blend file and one --object")
    if len(set(objects)) != len(objects):
        raise BatchError("an --object is given twice")
    return Arguments(blends=blends, objects=objects, all_soft_bodies=bool(ns.all), frames=frames,
                     output=os.path.abspath(ns.output) if ns.output else None,
                     output_dir=os.path.abspath(ns.output_dir) if ns.output_dir else None,
                     json=os.path.abspath(ns.json) if ns.json else None, rebuild=ns.rebuild,
                     jobs=ns.jobs, factory_startup="--factory-startup" in argv)


def baked_path(blend: str, output_dir: str | None) -> str:
    """``<name>.baked.blend`` in ``output_dir`` or next to ``blend``."""
    name = os.path.basename(blend)
    stem = name[:-len(".blend")] if name.lower().endswith(".blend") else name
    return os.path.join(output_dir or os.path.dirname(os.path.abspath(blend)), stem + BAKED_SUFFIX)


def check_writable(path: str) -> None:
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


def check_blend(path: str) -> str:
    """Why ``path`` is not a readable .blend file, or '' when it looks like one.

    Checked before Blender opens the file: the ``blender`` program itself exits with status 1 and
    its own message on a missing or foreign file, before any script runs.
    """
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        return f"no such .blend file: {path}"
    try:
        with open(path, "rb") as fh:
            magic = fh.read(len(BLEND_MAGIC))
    except OSError as exc:
        return f"cannot read {path}: {exc.strerror}"
    if not magic.startswith((BLEND_MAGIC, GZIP_MAGIC, ZSTD_MAGIC)):
        return f"{path} is not a .blend file"
    return ""
