"""Build the TetRig extension zips with Blender's own extension tool: one per platform and Python.

Usage::

    python scripts/build_extension.py [--platform linux-x64 ...] [--python 3.13 ...] [--output-dir dist]

Each zip is ``tetrig-<version>-<platform>-py<XY>.zip`` (``tetrig-0.1.0-linux_x64-py313.zip``) and
carries the wheels that ``blender_manifest.toml`` lists for that platform and Python version only:
one SciPy, one numba, one llvmlite. Blender reads the supported Python version from the wheels in a
zip and refuses a zip without one for its own Python with a clear message, so a user who picks the
wrong zip is told so at install time. Without ``--python`` every Python version the manifest's
wheels are built for is built (3.11 and 3.13); a platform without wheels for a Python version
(macos-x64 has 3.11 only) gets no zip for it. Without ``--platform``: every platform.

With ``--machine-code X.Y=PYTHON`` the linux-x64 zip for Python X.Y also carries every kernel
compiled (``build_machine_code.py``, run by that interpreter; ``tetrig_addon/machine_code.py``).

Steps:

1. Download the wheels those zips need into ``./wheels/`` with ``pip download`` (files already
   present are kept).
2. ``blender_ext.py validate`` on the source folder; then, for each Python version,
   ``blender_ext.py build --split-platforms`` on a staging copy of the source whose manifest lists
   only the platforms asked for and their wheels for that Python version; then ``validate`` again
   on every zip produced.
3. Print the path of each zip, one a line, on standard output.

``blender_ext.py`` is the script behind ``blender --command extension``; it ships inside the
``bpy`` wheel (``bpy/<version>/scripts/addons_core/bl_pkg/cli/blender_ext.py``) and is found
through the ``bpy`` module of the running interpreter without importing it. Tags are checked
against the list Blender itself uses, as ``blender --command extension`` does.

The tool has no option to build only some platforms or one Python version: ``--split-platforms``
builds one zip for each platform the manifest declares, with every wheel of that platform. Hence
the staging copy: its manifest differs from the source's only in its ``platforms`` and ``wheels``
lists (checked after rewriting), and the zip's ``[build.generated]`` table names exactly the
platform and wheels it holds.

On failure the script prints one line starting with ``build_extension: error:`` on standard error
(after whatever the tool printed) and exits with status 1.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path
from typing import Callable

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


def wheel_python_version(wheel_filename: str) -> str | None:
    """Return the Python version (``"3.13"``) a wheel's ``cpXY`` tag is built for, or None for a
    wheel that fits any Python 3 (``py3``, ``abi3``)."""
    parts = wheel_filename.removesuffix(".whl").split("-")
    if len(parts) not in (5, 6):
        raise BuildError(f"not a wheel file name: {wheel_filename}")
    python_tag, abi_tag = parts[-3], parts[-2]
    if abi_tag == "abi3" or not python_tag.startswith("cp"):
        return None
    digits = python_tag[2:]
    if not digits.isdigit() or len(digits) < 2:
        raise BuildError(f"cannot read the Python version of {wheel_filename}")
    return f"{digits[0]}.{digits[1:]}"


def manifest_python_versions(manifest: dict) -> list[str]:
    """Return the Python versions the manifest's wheels are built for, oldest first."""
    versions = {wheel_python_version(Path(w).name) for w in manifest.get("wheels", [])}
    return sorted((v for v in versions if v is not None), key=lambda v: tuple(map(int, v.split("."))))


def wheels_for_platforms(manifest: dict, platforms: list[str], python: str | None = None) -> list[str]:
    """Return the manifest's wheel paths (as written there) needed by any of ``platforms``; with
    ``python``, only those for that Python version (and those for any Python)."""
    wanted = set(platforms)
    return [w for w in manifest.get("wheels", [])
            if wheel_platforms(Path(w).name) & wanted
            and (python is None or wheel_python_version(Path(w).name) in (python, None))]


def zip_name(manifest: dict, platform: str, python: str | None) -> str:
    """Return the file name of the zip for ``platform`` and ``python`` (None: a zip without wheels,
    for every Python): ``tetrig-0.1.0-linux_x64-py313.zip``."""
    suffix = f"-py{python.replace('.', '')}" if python else ""
    return f"{manifest['id']}-{manifest['version']}-{platform.replace('-', '_')}{suffix}.zip"


def _toml_string_array(key: str, values: list[str]) -> str:
    """``key = [...]`` with one quoted value a line (the manifest's values have no quotes or
    backslashes: ``validate`` forbids them in wheel paths)."""
    return f"{key} = [\n" + "".join(f'  "{v}",\n' for v in values) + "]"


def staged_manifest_text(text: str, arrays: dict[str, list[str]]) -> str:
    """Return the manifest ``text`` with the top-level arrays named in ``arrays`` (``platforms``,
    ``wheels``) replaced by the given values; everything else is left as it is (checked by parsing
    both)."""
    result = text
    for key, values in arrays.items():
        # One line (``key = [...]``, maybe a comment after it), or up to a line starting with "]".
        pattern = re.compile(rf"^{key}\s*=\s*\[[^\n]*\][ \t]*(?:#[^\n]*)?$|^{key}\s*=\s*\[.*?^\]",
                             re.MULTILINE | re.DOTALL)
        result, count = pattern.subn(lambda _m: _toml_string_array(key, values), result, count=1)
        if count != 1:
            raise BuildError(f"cannot find the top-level {key} = [...] array in {MANIFEST_NAME}")
    try:
        before, after = tomllib.loads(text), tomllib.loads(result)
    except tomllib.TOMLDecodeError as ex:
        raise BuildError(f"rewriting {MANIFEST_NAME} for the build failed: {ex}") from ex
    if after != {**before, **arrays}:
        raise BuildError(f"rewriting {MANIFEST_NAME} for the build changed more than {', '.join(arrays)}")
    return result


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


def stage_source(source_dir: Path, stage_dir: Path, manifest_text: str, skip: list[Path]) -> None:
    """Copy the source into ``stage_dir`` with ``manifest_text`` as its manifest, and link (or copy)
    the wheels that manifest lists from the source folder."""
    skip_resolved = {p.resolve() for p in skip}

    def ignore(directory: str, names: list[str]) -> set[str]:
        ignored = {n for n in names if n in STAGING_SKIP_ANYWHERE or n.endswith(".pyc")}
        if Path(directory).resolve() == source_dir.resolve():
            ignored |= {n for n in names if n in STAGING_SKIP_TOP or n.startswith(".venv")}
        ignored |= {n for n in names if (Path(directory) / n).resolve() in skip_resolved}
        return ignored

    shutil.copytree(source_dir, stage_dir, symlinks=True, ignore=ignore)
    (stage_dir / MANIFEST_NAME).write_text(manifest_text, encoding="utf-8")

    for rel in tomllib.loads(manifest_text).get("wheels", []):
        staged = stage_dir / rel
        staged.parent.mkdir(parents=True, exist_ok=True)
        real = (source_dir / rel).resolve()
        try:
            os.symlink(real, staged)
        except OSError:  # e.g. Windows without the symlink privilege.
            shutil.copy2(real, staged)


def _select(asked: list[str] | None, available: list[str], unknown_error: Callable[[str], str]) -> list[str]:
    """``available`` (in its order) limited to ``asked``, all of it when nothing is asked for; an
    asked-for name not available is a BuildError with ``unknown_error(names)`` as its message."""
    if asked and (unknown := [a for a in asked if a not in available]):
        raise BuildError(unknown_error(", ".join(unknown)))
    return [a for a in available if not asked or a in asked]


def build_plan(manifest: dict, platforms: list[str] | None,
               pythons: list[str] | None) -> list[tuple[str | None, list[str]]]:
    """Return what to build: ``(python, platforms)`` pairs, one ``build --split-platforms`` run each.

    ``platforms``/``pythons`` None means all the manifest declares (Python versions: those its
    wheels are built for). A platform without wheels for a Python version gets no zip for it; a
    platform or Python version asked for by name that ends up with no zip at all is an error. A
    manifest without wheels gives one pair with python None (zips without a Python suffix).
    """
    declared = list(manifest.get("platforms") or [])
    if not declared:
        raise BuildError(f"{MANIFEST_NAME} declares no platforms")
    wanted_platforms = _select(platforms, declared, lambda unknown: (
        f"platform(s) not in {MANIFEST_NAME}: {unknown} (declared: {', '.join(declared)})"))

    available = manifest_python_versions(manifest)
    if not available:
        if pythons:
            raise BuildError(f"{MANIFEST_NAME} lists no wheels for a particular Python version")
        return [(None, wanted_platforms)]
    wanted_pythons = _select(pythons, available, lambda unknown: (
        f"no wheels for Python {unknown} in {MANIFEST_NAME} (it has wheels for Python {', '.join(available)})"))

    plan: list[tuple[str | None, list[str]]] = []
    for python in wanted_pythons:
        with_wheels = [p for p in wanted_platforms
                       if any(wheel_python_version(Path(w).name) == python
                              for w in wheels_for_platforms(manifest, [p], python))]
        if with_wheels:
            plan.append((python, with_wheels))
        elif pythons:
            raise BuildError(f"no wheels for Python {python} on {', '.join(wanted_platforms)} "
                             f"in {MANIFEST_NAME}")
    built = {p for _, ps in plan for p in ps}
    if platforms and (missing := [p for p in wanted_platforms if p not in built]):
        raise BuildError(f"no wheels for {', '.join(missing)} and Python {', '.join(wanted_pythons)} "
                         f"in {MANIFEST_NAME}")
    return plan


def _machine_code_script():
    """``build_machine_code.py``, beside this script, as a module."""
    path = Path(__file__).with_name("build_machine_code.py")
    spec = importlib.util.spec_from_file_location("build_machine_code", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def build(source_dir: Path, output_dir: Path, platforms: list[str] | None,
          pythons: list[str] | None = None, blender_ext: Path | None = None,
          verbose: bool = False, machine_code: dict[str, Path] | None = None) -> list[Path]:
    """Download wheels, validate, build and validate the zips; return the zip paths (for each
    Python version, oldest first, the platforms in manifest order). ``machine_code``: Python
    version -> an interpreter of that version with the zip's Numba, which compiles the kernels
    that version's linux-x64 zip ships (``build_machine_code.py``)."""
    manifest = load_manifest(source_dir)
    manifest_text = (source_dir / MANIFEST_NAME).read_text(encoding="utf-8")
    plan = build_plan(manifest, platforms, pythons)

    download_wheels(source_dir, [w for python, plats in plan
                                 for w in wheels_for_platforms(manifest, plats, python)])

    blender_ext = blender_ext or find_blender_ext()
    if not blender_ext.is_file():
        raise BuildError(f"no such file: {blender_ext}")
    tags = find_valid_tags(blender_ext)
    tag_args = ["--valid-tags", str(tags) if tags else ""]

    run_tool(blender_ext, ["validate", *tag_args, str(source_dir)], "validate")

    output_dir.mkdir(parents=True, exist_ok=True)
    zips: list[Path] = []
    for python, plats in plan:
        arrays = {"platforms": plats}
        if python is not None:
            arrays["wheels"] = wheels_for_platforms(manifest, plats, python)
        with tempfile.TemporaryDirectory(prefix="tetrig-build-") as tmp:
            stage_dir = Path(tmp) / "source"
            stage_out = Path(tmp) / "out"
            stage_out.mkdir()
            stage_source(source_dir, stage_dir, staged_manifest_text(manifest_text, arrays), skip=[output_dir])
            shipped = Path(tmp) / "machine_code" if "linux-x64" in plats and python in (machine_code or {}) else None
            if shipped is not None:
                wheels = [Path(w).name for w in wheels_for_platforms(manifest, ["linux-x64"], python)]
                try:
                    _machine_code_script().compile_for((machine_code or {})[str(python)], stage_dir, shipped, wheels)
                except RuntimeError as ex:
                    raise BuildError(str(ex)) from ex
            build_args = ["build", *tag_args, "--split-platforms",
                          "--source-dir", str(stage_dir), "--output-dir", str(stage_out)]
            if verbose:
                build_args.append("--verbose")
            run_tool(blender_ext, build_args, f"build (Python {python})" if python else "build")
            for platform in plats:
                built = stage_out / zip_name(manifest, platform, None)
                if not built.is_file():
                    raise BuildError(f"the build tool did not produce {built.name}")
                final = output_dir / zip_name(manifest, platform, python)
                shutil.move(str(built), final)
                if shipped is not None and platform == "linux-x64":
                    _machine_code_script().add_to_zip(final, shipped)
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
    parser.add_argument("--python", action="append", dest="pythons", metavar="X.Y",
                        help="a Python version the manifest's wheels are built for (3.11, 3.13); "
                             "repeat for several; default: all")
    parser.add_argument("--output-dir", type=Path, default=REPO_ROOT / "dist",
                        help="where the zips go (default: dist/ in the repository)")
    parser.add_argument("--source-dir", type=Path, default=REPO_ROOT,
                        help="the extension source (default: this repository)")
    parser.add_argument("--blender-ext", type=Path, default=None,
                        help="path to blender_ext.py (default: the one inside the bpy module)")
    parser.add_argument("--verbose", action="store_true", help="list every file added to a zip")
    parser.add_argument("--machine-code", action="append", default=[], metavar="X.Y=PYTHON",
                        help="ship compiled kernels in the linux-x64 zip for Python X.Y, compiled by the "
                             "interpreter PYTHON (of that version, with the zip's Numba); repeat per version")
    args = parser.parse_args(argv)
    if bad := [item for item in args.machine_code if not item.partition("=")[2]]:
        parser.error(f"--machine-code wants X.Y=PYTHON, not {bad[0]!r}")
    machine_code = {item.partition("=")[0]: Path(item.partition("=")[2]) for item in args.machine_code}
    try:
        zips = build(args.source_dir.resolve(), args.output_dir.resolve(), args.platforms,
                     pythons=args.pythons, blender_ext=args.blender_ext, verbose=args.verbose,
                     machine_code=machine_code)
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
