"""Which of TetRig's bundled dependencies import in this Blender, and what to tell the user if not.

SciPy is required (cage building and binding import it). numba is optional: without it the solver
runs its NumPy code, slower. Blender bundles neither; the extension zips carry both as wheels, one
zip per platform and Python version (``scripts/build_extension.py``). Blender installs only the
wheels matching its own Python, so a zip built for another Python installs without them (or is
refused). This module finds that out and names the zip to install instead.

It imports neither ``bpy`` nor the engine, so the add-on can import it, and report, when SciPy is
missing.
"""

from __future__ import annotations

import functools
import importlib
import platform
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

# The modules the engine imports from SciPy; all must import for TetRig to work. Imported at
# registration, so none is first imported by a frame (csgraph: 20 ms of the first one).
SCIPY_MODULES = ("scipy", "scipy.sparse", "scipy.sparse.csgraph", "scipy.spatial")

# The zips the build makes: Blender platform -> the Python versions there is a zip for (the
# manifest's wheels; a packaging test checks the two agree). Intel Macs run Blender 4.2-4.5 only.
ZIP_PYTHONS: dict[str, tuple[str, ...]] = {
    "linux-x64": ("3.11", "3.13"),
    "windows-x64": ("3.11", "3.13"),
    "macos-arm64": ("3.11", "3.13"),
    "macos-x64": ("3.11",),
}

MANIFEST_PATH = Path(__file__).resolve().parents[2] / "blender_manifest.toml"


@dataclass(frozen=True)
class Dependency:
    """A Python package the add-on imports: its version when it imports, else why not."""

    name: str
    version: str | None
    error: str | None
    # True when the package is not installed at all (rather than installed and failing to load).
    missing: bool = False

    @property
    def available(self) -> bool:
        """True when the package imported."""
        return self.error is None


def _try_import(name: str, modules: tuple[str, ...]) -> Dependency:
    """Import ``modules`` in order; report the first failure as one line."""
    try:
        version = str(getattr(importlib.import_module(modules[0]), "__version__", "?"))
        for module_name in modules[1:]:
            importlib.import_module(module_name)
    except ImportError as ex:
        missing = isinstance(ex, ModuleNotFoundError) and (ex.name or "").split(".")[0] == modules[0]
        return Dependency(name, None, str(ex) or type(ex).__name__, missing)
    except Exception as ex:  # noqa: BLE001 -- a broken binary raises OSError, AttributeError, ...
        return Dependency(name, None, f"{type(ex).__name__}: {ex}")
    return Dependency(name, version, None)


@functools.cache
def scipy() -> Dependency:
    """SciPy (required), imported once per session."""
    return _try_import("SciPy", SCIPY_MODULES)


@functools.cache
def numba() -> Dependency:
    """numba (optional: the compiled solver), imported once per session (about half a second the
    first time)."""
    return _try_import("numba", ("numba",))


def python_version() -> str:
    """The running Python's version, ``"3.13"``."""
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def blender_platform() -> str:
    """This system in Blender's platform names: ``linux-x64``, ``windows-x64``, ``macos-arm64``..."""
    system = {"win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform)
    if system.startswith("linux"):
        system = "linux"
    machine = platform.machine().lower()
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(machine, machine)
    return f"{system}-{machine}"


def extension_version() -> str:
    """The add-on's version from its ``blender_manifest.toml`` (``"?"`` if unreadable)."""
    try:
        with open(MANIFEST_PATH, "rb") as fh:
            return str(tomllib.load(fh).get("version", "?"))
    except (OSError, tomllib.TOMLDecodeError):
        return "?"


def zip_for_this_blender() -> str | None:
    """The file name of the zip built for this platform and Python, or None if there is none."""
    here, python = blender_platform(), python_version()
    if python not in ZIP_PYTHONS.get(here, ()):
        return None
    return f"tetrig-{extension_version()}-{here.replace('-', '_')}-py{python.replace('.', '')}.zip"


def missing_message(scipy_status: Dependency | None = None) -> str | None:
    """One line for the sidebar when SciPy does not import: what is wrong and which zip to
    install; None when SciPy works."""
    status = scipy_status or scipy()
    if status.available:
        return None
    name = zip_for_this_blender()
    if name is None:
        here = blender_platform()
        offered = ", ".join(ZIP_PYTHONS.get(here, ())) or "none"
        return (f"SciPy {'missing' if status.missing else 'does not import'}: TetRig has no zip for "
                f"Python {python_version()} on {here} (zips for Python: {offered})")
    if status.missing:
        return f"SciPy missing: install {name} (the zip for Python {python_version()})"
    return f"SciPy does not import (Preferences > Add-ons > TetRig says why): reinstall {name}"


def compiled_solver_line(numba_status: Dependency | None = None) -> str:
    """One line for the preferences on the compiled (numba) solver."""
    status = numba_status or numba()
    if status.available:
        return f"Compiled solver: numba {status.version}"
    return f"compiled solver unavailable: {status.error}"
