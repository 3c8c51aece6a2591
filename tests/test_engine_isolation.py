"""The engine never imports Blender modules."""

import ast
import subprocess
import sys
from pathlib import Path

from conftest import REPO

BLENDER_MODULES = {"bpy", "bmesh", "mathutils", "bpy_extras", "gpu", "aud"}


def test_engine_sources_import_no_blender_module():
    for path in (REPO / "tetrig_addon").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            for name in names:
                assert name.split(".")[0] not in BLENDER_MODULES, f"{path.name} imports {name}"


def test_engine_imports_in_a_plain_interpreter():
    code = ("import sys, pkgutil, importlib, tetrig_addon;"
            "[importlib.import_module('tetrig_addon.' + m.name) for m in pkgutil.iter_modules(tetrig_addon.__path__)];"
            "assert not {'bpy', 'mathutils', 'bmesh'} & set(sys.modules), sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
