"""Build the TetRig extension zip(s) with Blender's own extension tool.

Usage::

    python scripts/build_extension.py [--platform linux-x64 ...] [--output-dir dist]

Steps:

1. Download the SciPy wheels that ``blender_manifest.toml`` lists into ``./wheels/`` with
   ``pip download`` (only those of the requested platforms; files already present are kept).
2. ``blender_ext.py validate`` on the source folder, then ``blender_ext.py build --split-platforms``,
   then ``validate`` again on every zip produced.
3. Print the path of each zip, one a line, on standard output.

``blender_ext.py`` is the script behind ``blender --command extension``; it ships inside the
``bpy`` wheel (``bpy/<version>/scripts/addons_core/bl_pkg/cli/blender_ext.py``) and is found
through the ``bpy`` module of the running interpreter without importing it. Tags are checked
against the list Blender itself uses, as ``blender --command extension`` does.

The tool has no option to build only some platforms: ``--split-platforms`` builds one zip for each
platform the manifest declares, and it fails on the first wheel file it cannot find. So the build
runs on a staging copy of the source in which the wheels of the platforms not asked for are empty
placeholders; their zips are thrown away. The zips kept are exactly what a full build gives.

On failure the script prints one line starting with ``build_extension: error:`` on standard error
(after whatever the tool printed) and exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST_NAME = "blender_manifest.toml"

# Relative path of the extension tool (and of Blender's list of valid tags) inside
# ``bpy/<version>/`` of the bpy wheel.
BLENDER_EXT_RELPATH = Path("scripts/addons_core/bl_pkg/cli/blender_ext.py")
VALID_TAGS_RELPATH = Path("scripts/modules/_bpy_internal/extensions/tags.py")

# Top-level entries of the source folder never copied into the staging folder: version control,
# virtual environments, downloads and build output. The manifest's own [build] excludes still
# decide what goes into the zip; this list only keeps the copy small.
STAGING_SKIP_TOP = {".git", "wheels", "dist", "out"}
STAGING_SKIP_ANYWHERE = {"__pycache__", ".mypy_cache", ".pytest_cache"}


class BuildError(Exception):
    """A failure reported to the user as one line."""


def wheel_platforms(wheel_filename: str) -> set[str]:
    """Return the Blender platforms (``linux-x64`` ...) a wheel file name is built for.

    Follows the mapping of ``blender_ext.py``: the last dash-separated field of the name is the
    platform tag, which may be a dot-separated set (``manylinux_2_17_x86_64.manylinux2014_x86_64``).
    """
    stem = wheel_filename[: -len(".whl")] if wheel_filename.endswith(".whl") else wheel_filename
    platform_tags = stem.split("-")[-1].split(".")
    result: set[str] = set()
    for tag in platform_tags:
        if tag == "any":
            return {"linux-x64", "linux-arm64", "windows-x64", "windows-arm64", "macos-x64", "macos-arm64"}
        if tag.startswith("win"):
            system = "windows"
        elif tag.startswith(("manylinux", "musllinux", "linux")):
            system = "linux"
        elif tag.startswith("macosx"):
            system = "macos"
        else:
            continue
        if tag.endswith(("x86_64", "amd64")):
            result.add(system + "-x64")
        elif tag.endswith(("arm64", "aarch64")):
            result.add(system + "-arm64")
        elif tag.endswith("universal2"):
            result.update({system + "-x64", system + "-arm64"})
    return result


def load_manifest(source_dir: Path) -> dict:
    """Parse ``blender_manifest.toml`` in ``source_dir``."""
    path = source_dir / MANIFEST_NAME
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as ex:
        raise BuildError(f"cannot read {path}: {ex}") from ex


def wheels_for_platforms(manifest: dict, platforms: list[str]) -> list[str]:
    """Return the manifest's wheel paths (as written there) needed by any of ``platforms``."""
    wanted = set(platforms)
    return [w for w in manifest.get("wheels", []) if wheel_platforms(Path(w).name) & wanted]


def pip_download_args(wheel_filename: str) -> list[str]:
    """Return the ``pip download`` arguments that fetch exactly ``wheel_filename`` from PyPI.

    The name is ``{dist}-{version}-{python tag}-{abi tag}-{platform tag}.whl``; each tag of a
    dot-separated platform set is passed as its own ``--platform``.
    """
    parts = wheel_filename[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        raise BuildError(f"not a wheel file name: {wheel_filename}")
    dist, version, python_tag, abi_tag, platform_tag = parts[0], parts[1], parts[-3], parts[-2], parts[-1]
    if not (python_tag.startswith("cp") and python_tag[2:].isdigit()):
        raise BuildError(f"expected a CPython wheel (cpXY tag): {wheel_filename}")
    digits = python_tag[2:]
    args = [
        "download",
        "--only-binary=:all:",
        "--no-deps",
        "--python-version", f"{digits[0]}.{digits[1:]}",
        "--implementation", "cp",
        "--abi", abi_tag,
    ]
    for tag in platform_tag.split("."):
        args += ["--platform", tag]
    args.append(f"{dist}=={version}")
    return args


def download_wheels(source_dir: Path, wheel_paths: list[str]) -> None:
    """Download each wheel of ``wheel_paths`` (manifest-relative) that is not present yet.

    pip downloads into a temporary folder beside the target, so that a wheel pip picks under
    another name than the manifest's is reported instead of left lying in ``wheels/``.
    """
    for rel in wheel_paths:
        target = (source_dir / rel).resolve()
        if target.is_file() and zipfile.is_zipfile(target):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        print(f"downloading {target.name}", file=sys.stderr)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
            cmd = [sys.executable, "-m", "pip", *pip_download_args(target.name), "-d", tmp]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            got = Path(tmp) / target.name
            if proc.returncode != 0 or not got.is_file():
                sys.stderr.write(proc.stdout)
                found = ", ".join(sorted(p.name for p in Path(tmp).iterdir())) or "nothing"
                raise BuildError(f"pip download did not give {target.name} (got {found})")
            os.replace(got, target)


def find_blender_ext() -> Path:
    """Locate ``blender_ext.py`` inside the ``bpy`` package of this interpreter, without importing it."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        raise BuildError("the bpy module is not installed in this Python (pip install bpy==5.0.1), "
                         "or pass --blender-ext")
    candidates: list[Path] = []
    for location in spec.submodule_search_locations:
        candidates.extend(Path(location).glob(f"*/{BLENDER_EXT_RELPATH.as_posix()}"))
    if not candidates:
        raise BuildError(f"no {BLENDER_EXT_RELPATH} inside the bpy module")

    def version_key(path: Path) -> tuple[int, ...]:
        # bpy/<major.minor>/scripts/... : prefer the highest version folder.
        name = path.parents[len(BLENDER_EXT_RELPATH.parents) - 1].name
        return tuple(int(p) for p in name.split(".") if p.isdigit())

    return max(candidates, key=version_key)


def find_valid_tags(blender_ext: Path) -> Path | None:
    """Return Blender's list of valid tags next to ``blender_ext``, or None if it is absent."""
    version_dir = blender_ext.parents[len(BLENDER_EXT_RELPATH.parents) - 1]
    tags = version_dir / VALID_TAGS_RELPATH
    return tags if tags.is_file() else None


def run_tool(blender_ext: Path, args: list[str], what: str) -> None:
    """Run ``blender_ext.py`` with ``args``; its output goes to standard error."""
    cmd = [sys.executable, str(blender_ext), *args]
    sys.stderr.flush()
    proc = subprocess.run(cmd, stdout=sys.stderr.fileno(), stderr=sys.stderr.fileno())
    # The tool does not always end its output with a newline.
    print(file=sys.stderr)
    if proc.returncode != 0:
        raise BuildError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}")


def stage_source(source_dir: Path, stage_dir: Path, manifest: dict, platforms: list[str],
                 skip: list[Path]) -> None:
    """Copy the source into ``stage_dir`` and lay out the manifest's wheels there.

    Wheels of ``platforms`` are links to (or copies of) the downloaded files; the others are
    empty placeholders that only the discarded zips of other platforms refer to.
    """
    skip_resolved = {p.resolve() for p in skip}

    def ignore(directory: str, names: list[str]) -> set[str]:
        ignored = {n for n in names if n in STAGING_SKIP_ANYWHERE or n.endswith(".pyc")}
        if Path(directory).resolve() == source_dir.resolve():
            ignored |= {n for n in names if n in STAGING_SKIP_TOP or n.startswith(".venv")}
        ignored |= {n for n in names if (Path(directory) / n).resolve() in skip_resolved}
        return ignored

    shutil.copytree(source_dir, stage_dir, symlinks=True, ignore=ignore)

    needed = set(wheels_for_platforms(manifest, platforms))
    for rel in manifest.get("wheels", []):
        staged = stage_dir / rel
        staged.parent.mkdir(parents=True, exist_ok=True)
        if rel in needed:
            real = (source_dir / rel).resolve()
            try:
                os.symlink(real, staged)
            except OSError:  # e.g. Windows without the symlink privilege.
                shutil.copy2(real, staged)
        else:
            staged.touch()


def build(source_dir: Path, output_dir: Path, platforms: list[str] | None,
          blender_ext: Path | None = None, verbose: bool = False) -> list[Path]:
    """Download wheels, validate, build and validate the zips; return the zip paths."""
    manifest = load_manifest(source_dir)
    declared = list(manifest.get("platforms") or [])
    if not declared:
        raise BuildError(f"{MANIFEST_NAME} declares no platforms")
    if platforms:
        unknown = [p for p in platforms if p not in declared]
        if unknown:
            raise BuildError(f"platform(s) not in {MANIFEST_NAME}: {', '.join(unknown)} "
                             f"(declared: {', '.join(declared)})")
        platforms = [p for p in declared if p in platforms]
    else:
        platforms = declared

    download_wheels(source_dir, wheels_for_platforms(manifest, platforms))

    blender_ext = blender_ext or find_blender_ext()
    if not blender_ext.is_file():
        raise BuildError(f"no such file: {blender_ext}")
    tags = find_valid_tags(blender_ext)
    tag_args = ["--valid-tags", str(tags) if tags else ""]

    run_tool(blender_ext, ["validate", *tag_args, str(source_dir)], "validate")

    output_dir.mkdir(parents=True, exist_ok=True)
    zips: list[Path] = []
    with tempfile.TemporaryDirectory(prefix="tetrig-build-") as tmp:
        stage_dir = Path(tmp) / "source"
        stage_out = Path(tmp) / "out"
        stage_out.mkdir()
        stage_source(source_dir, stage_dir, manifest, platforms, skip=[output_dir])
        build_args = ["build", *tag_args, "--split-platforms",
                      "--source-dir", str(stage_dir), "--output-dir", str(stage_out)]
        if verbose:
            build_args.append("--verbose")
        run_tool(blender_ext, build_args, "build")
        for platform in platforms:
            name = f"{manifest['id']}-{manifest['version']}-{platform.replace('-', '_')}.zip"
            built = stage_out / name
            if not built.is_file():
                raise BuildError(f"the build tool did not produce {name}")
            final = output_dir / name
            shutil.move(str(built), final)
            zips.append(final.resolve())

    for path in zips:
        run_tool(blender_ext, ["validate", *tag_args, str(path)], f"validate {path.name}")
    return zips


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--platform", action="append", dest="platforms", metavar="PLATFORM",
                        help="a platform of the manifest (linux-x64, windows-x64, macos-arm64, "
                             "macos-x64); repeat for several; default: all")
    parser.add_argument("--output-dir", type=Path, default=REPO_ROOT / "dist",
                        help="where the zips go (default: dist/ in the repository)")
    parser.add_argument("--source-dir", type=Path, default=REPO_ROOT,
                        help="the extension source (default: this repository)")
    parser.add_argument("--blender-ext", type=Path, default=None,
                        help="path to blender_ext.py (default: the one inside the bpy module)")
    parser.add_argument("--verbose", action="store_true", help="list every file added to a zip")
    args = parser.parse_args(argv)
    try:
        zips = build(args.source_dir.resolve(), args.output_dir.resolve(), args.platforms,
                     blender_ext=args.blender_ext, verbose=args.verbose)
    except BuildError as ex:
        print(f"build_extension: error: {ex}", file=sys.stderr)
        return 1
    except (OSError, subprocess.SubprocessError) as ex:
        print(f"build_extension: error: {type(ex).__name__}: {ex}", file=sys.stderr)
        return 1
    for path in zips:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
