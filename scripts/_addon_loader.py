"""Load the TetRig add-on for the command-line scripts (``batch.py``, ``demo.py``).

``load_addon()`` returns the add-on's package, registered in the running Blender:

1. If TetRig is already registered — the extension is installed and enabled in the Blender that
   runs the script (for instance ``blender -b scene.blend --python scripts/batch.py``) — that
   installed package is used, whatever its module name (``bl_ext.user_default.tetrig``, ...).
2. Otherwise the repository this file lives in is imported as the package ``tetrig``, the way
   Blender imports an extension and the way ``tests/conftest.py`` does: a folder in the temporary
   directory, the same one for every run from this checkout (``_link_dir``), holds a symlink
   ``tetrig`` → repository root and goes first on ``sys.path``; then ``register()`` runs.
   Where symlinks are not allowed (Windows without developer mode) the package is imported
   straight from the root's ``__init__.py`` under the same name instead.

It works the same in the ``blender`` program and in the ``bpy`` module from PyPI.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator

import bpy

# The repository root is the add-on package (it holds __init__.py and blender_manifest.toml).
REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_NAME = "tetrig"
# An operator class that exists exactly when the add-on is registered; its module tells the
# installed package's name (``<package>.operators.build_cage``).
PROBE_OPERATOR = "TETRIG_OT_build_cage"
MIN_BLENDER_VERSION = (4, 2, 0)


class AddonLoadError(RuntimeError):
    """The add-on could not be imported or registered; the message is one line for the user."""


def registered_package_name() -> str | None:
    """Module name of the TetRig package registered in this Blender, or ``None``."""
    probe = getattr(bpy.types, PROBE_OPERATOR, None)
    if probe is None:
        return None
    return probe.__module__.rpartition(".operators.")[0] or None


def _link_dir() -> str:
    """A folder holding the symlink ``tetrig`` → the repository, the same for every run from this
    checkout: the compiled solver's cache is found by its source files' paths, so a new folder per
    run would compile it again each time (seconds per batch job).

    Raises:
        OSError: symlinks are not allowed here.
    """
    digest = hashlib.blake2b(str(REPO_ROOT).encode(), digest_size=6).hexdigest()
    link_dir = os.path.join(tempfile.gettempdir(), f"tetrig-addon-{digest}")
    link = os.path.join(link_dir, PACKAGE_NAME)
    os.makedirs(link_dir, exist_ok=True)
    if os.path.realpath(link) != os.path.realpath(REPO_ROOT):
        if os.path.lexists(link):
            os.remove(link)
        try:
            os.symlink(REPO_ROOT, link, target_is_directory=True)
        except FileExistsError:  # another process made it at the same moment
            pass
    if os.path.realpath(link) != os.path.realpath(REPO_ROOT):
        raise OSError(f"{link} does not lead to {REPO_ROOT}")
    return link_dir


def _import_repository() -> ModuleType:
    """Import the repository root as the package ``tetrig`` (not registered yet)."""
    existing = sys.modules.get(PACKAGE_NAME)
    if existing is not None:
        return existing
    try:
        link_dir = _link_dir()
    except OSError:
        spec = importlib.util.spec_from_file_location(
            PACKAGE_NAME, REPO_ROOT / "__init__.py", submodule_search_locations=[str(REPO_ROOT)])
        if spec is None or spec.loader is None:
            raise AddonLoadError(f"cannot import {REPO_ROOT} as a package")
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE_NAME] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[PACKAGE_NAME]
            raise
        return module
    sys.path.insert(0, link_dir)
    return importlib.import_module(PACKAGE_NAME)


def load_addon() -> ModuleType:
    """The TetRig package, registered in the running Blender (see the module docstring).

    Raises:
        AddonLoadError: Blender is too old, or the add-on (or SciPy, which it needs) cannot be
            imported, or registering it failed.
    """
    if tuple(bpy.app.version) < MIN_BLENDER_VERSION:
        raise AddonLoadError(f"TetRig needs Blender {'.'.join(map(str, MIN_BLENDER_VERSION))} or "
                             f"newer, this is {bpy.app.version_string}")
    name = registered_package_name()
    if name is not None:
        return importlib.import_module(name)
    try:
        package = _import_repository()
    except ImportError as exc:
        raise AddonLoadError(
            f"cannot import the TetRig add-on from {REPO_ROOT}: {exc} (install the extension, "
            "or run with a Python that has SciPy)") from exc
    try:
        package.register()
    except Exception as exc:
        raise AddonLoadError(f"registering the TetRig add-on failed: {exc}") from exc
    if registered_package_name() is None:
        # Without SciPy the add-on registers only its preferences and a panel saying so.
        message = submodule(package, "runtime.app.dependencies").missing_message()
        if message is not None:
            raise AddonLoadError(f"{message} (or run with a Python that has SciPy)")
        raise AddonLoadError(f"the TetRig add-on from {REPO_ROOT} did not register its operators")
    return package


def submodule(package: ModuleType, name: str) -> ModuleType:
    """A submodule of the add-on package, e.g. ``submodule(pkg, "runtime.cage.rig")``."""
    return importlib.import_module(f"{package.__name__}.{name}")


def settings(obj: bpy.types.Object) -> Any:
    """``obj.tetrig``, the add-on's settings of an object (registered at run time, so the bpy
    stubs do not know it)."""
    return obj.tetrig  # type: ignore[attr-defined]


class HandlerFailure(RuntimeError):
    """An exception escaped an application handler (the add-on's frame handler) while frames were
    being shown; Blender printed it and carried on, so the frames are not simulated."""


@contextlib.contextmanager
def handler_errors_raised() -> Iterator[None]:
    """Raise ``HandlerFailure`` after the ``with`` block if a handler raised inside it.

    Blender reports an exception escaping a handler (``frame_change_post`` ...) with
    ``PyErr_Print`` and goes on, so ``scene.frame_set`` itself never fails; ``PyErr_Print`` calls
    ``sys.excepthook``, which this wraps for the duration of the block (the traceback is still
    printed). Checked with the bpy module 5.0 and the blender program 4.3.
    """
    caught: list[tuple[int, BaseException]] = []
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
        caught.append((bpy.context.scene.frame_current if bpy.context.scene else 0, value))
        previous(kind, value, tb)

    sys.excepthook = hook
    try:
        yield
    finally:
        sys.excepthook = previous
    if caught:
        frame, exc = caught[0]
        raise HandlerFailure(f"a frame handler failed {len(caught)} time(s), first at frame "
                             f"{frame}: {type(exc).__name__}: {exc}")


def run_cli(prefix: str, job: Callable[[], str], bad_input: type[Exception]) -> int:
    """Run a script's job and turn its outcome into an exit status and one readable line.

    ``bad_input`` errors exit 2, add-on load or handler failures exit 1, anything else is a bug:
    its traceback is shown and the status is 1. On success the job's text is printed (status 0).
    """
    try:
        text = job()
    except bad_input as exc:
        print(f"{prefix}: error: {exc}", file=sys.stderr, flush=True)
        return 2
    except (AddonLoadError, HandlerFailure) as exc:
        print(f"{prefix}: error: {exc}", file=sys.stderr, flush=True)
        return 1
    except Exception as exc:  # noqa: BLE001 -- anything else is a bug: show it, exit 1
        import traceback

        traceback.print_exc()
        print(f"{prefix}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        return 1
    print(text.rstrip("\n"), flush=True)
    return 0
