"""Load the TetRig add-on from this repository into a running Blender, for command lines that
play, render or export a file without the extension installed::

    blender -b scene.blend --python scripts/load_addon.py -a
    blender -b scene.blend --python scripts/load_addon.py -o //render/frame_#### -f 12

Blender handles its arguments in order: the file opens, this script registers the add-on (and
shows the file's current frame), then ``-a`` / ``-f`` render with the soft bodies updating on
every frame (from their bakes, or simulated live in the main thread). Put ``--python`` *before*
``-a``: arguments after ``-a`` are only read once the render is over. With the extension
installed and enabled in Blender's preferences this script is not needed; it then only reports
the installed add-on. If the add-on cannot be loaded, Blender exits with status 1 before anything
is rendered.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import bpy

if TYPE_CHECKING:  # mypy checks this file as the module tetrig.scripts.load_addon
    from . import _addon_loader
else:  # run as a script: scripts/ is not a package, so import the loader from beside this file
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import _addon_loader


def main() -> int:
    try:
        addon = _addon_loader.load_addon()
    except _addon_loader.AddonLoadError as exc:
        print(f"tetrig: error: {exc}", file=sys.stderr, flush=True)
        return 1
    # The file was opened before the add-on was registered, so its load handler did not run:
    # show the current frame now, as opening the file with the add-on enabled would.
    scene = bpy.context.scene
    if scene is not None:
        driver = _addon_loader.submodule(addon, "runtime.scene")
        driver.update(scene, bpy.context.evaluated_depsgraph_get())
    print(f"TetRig: add-on {addon.__name__} loaded from {os.path.dirname(addon.__file__ or '')}",
          flush=True)
    return 0


if __name__ == "__main__":
    status = main()
    if status != 0:
        sys.exit(status)
