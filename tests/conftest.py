"""Shared test fixtures.

Engine tests import ``tetrig_addon`` straight from the repository root and need no Blender.
Blender tests (``test_blender_*``) use the real ``bpy`` module from PyPI and load the add-on as
the package ``tetrig`` through a symlink, the way Blender imports an extension.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
MESHES = REPO.parent / "shared" / "meshes"
sys.path.insert(0, str(REPO))


@pytest.fixture(scope="session", autouse=True)
def compiled_solver(tmp_path_factory: pytest.TempPathFactory):
    """The engine steps with the compiled kernel in every test (a fresh Numba cache per session,
    so a stale cache can never hide a change); the NumPy reference is tested against it."""
    from tetrig_addon.solver import backend

    backend.configure(str(tmp_path_factory.mktemp("numba-cache")))
    backend.warm_up()
    assert backend.kernel_ready(), backend.status()
    assert backend.wait_for_global_step(), backend.status()  # its part compiles after the rest
    return backend


def obj_vertices(name: str) -> np.ndarray:
    """Vertices of ``../shared/meshes/<name>.obj`` as float64 [N, 3] (OBJ 'v' lines, file order)."""
    path = MESHES / f"{name}.obj"
    if not path.exists():
        pytest.fail(f"test mesh missing: {path}")
    rows = [line.split()[1:4] for line in path.read_text().splitlines() if line.startswith("v ")]
    return np.asarray(rows, dtype=np.float64)


def obj_triangles(name: str) -> np.ndarray:
    """Faces of ``../shared/meshes/<name>.obj`` fan-triangulated: int64 [T, 3], 0-based."""
    tris = []
    for line in (MESHES / f"{name}.obj").read_text().splitlines():
        if line.startswith("f "):
            corners = [int(c.split("/")[0]) - 1 for c in line.split()[1:]]
            tris += [(corners[0], corners[i], corners[i + 1]) for i in range(1, len(corners) - 1)]
    return np.asarray(tris, dtype=np.int64)


def diagonal(points: np.ndarray) -> float:
    return float(np.linalg.norm(points.max(0) - points.min(0)))


_ADDON_DIR = None


@pytest.fixture(scope="session")
def addon():
    """The add-on imported as package ``tetrig`` and registered in the bpy module."""
    global _ADDON_DIR
    bpy = pytest.importorskip("bpy", reason="Blender tests need the bpy module (make test installs it)")
    _ADDON_DIR = tempfile.mkdtemp(prefix="tetrig-addon-")
    os.symlink(REPO, os.path.join(_ADDON_DIR, "tetrig"))
    sys.path.insert(0, _ADDON_DIR)
    import tetrig  # noqa: E402

    tetrig.register()
    yield tetrig
    tetrig.unregister()
    shutil.rmtree(_ADDON_DIR, ignore_errors=True)


@pytest.fixture()
def scene(addon):
    """An empty factory scene, frames 1–120 at 24 fps."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 1, 120
    sc.render.fps, sc.render.fps_base = 24, 1.0
    return sc
