"""When SciPy (or numba) does not import, the add-on says so instead of failing with a traceback.

Each case runs in a subprocess whose ``sitecustomize`` (on ``PYTHONPATH``) makes the named packages
unimportable, as in a Blender that installed a zip built for another Python. The add-on is imported
as the package ``tetrig`` (a symlink to the repository, as ``conftest.addon`` does) and registered.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

TIMEOUT_S = 300
PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
ZIP = f"tetrig-0.1.0-linux_x64-py{sys.version_info[0]}{sys.version_info[1]}.zip"

# Blocks importing the packages named in TETRIG_TEST_BLOCK (comma-separated) and their submodules.
SITECUSTOMIZE = '''
import os, sys
from importlib.abc import MetaPathFinder

BLOCKED = set(filter(None, os.environ.get("TETRIG_TEST_BLOCK", "").split(",")))

class Blocker(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in BLOCKED:
            raise ModuleNotFoundError(f"No module named {top!r}", name=top)
        return None

sys.meta_path.insert(0, Blocker())
'''

# Registers the add-on, draws its preferences and TetRig panels into a recording layout, writes
# what was registered and drawn as JSON to argv[-1], unregisters.
PROBE = r'''
import json, os, sys, tempfile
import bpy

link_dir = tempfile.mkdtemp()
os.symlink(sys.argv[-2], os.path.join(link_dir, "tetrig"))
sys.path.insert(0, link_dir)
import tetrig

class Layout:
    """Records the labels drawn; every sub-layout records into the same list."""
    def __init__(self, labels):
        self.labels = labels
    def column(self, **kwargs):
        return self
    row = box = column
    def label(self, text="", icon="NONE"):
        self.labels.append([text, icon])

class Drawer:
    def __init__(self):
        self.layout = Layout([])

def registered():
    preferences = tetrig.preferences.TETRIG_AP_preferences
    return [preferences.is_registered, hasattr(bpy.types, "TETRIG_PT_missing_dependencies"),
            hasattr(bpy.types, "TETRIG_PT_main"), hasattr(bpy.types, "TETRIG_OT_build_cage")]

tetrig.register()
result = {
    "registered": registered(),
    "object_settings": hasattr(bpy.types.Object, "tetrig"),
    "scipy_imported": "scipy" in sys.modules,
}
prefs = Drawer()
tetrig.preferences.TETRIG_AP_preferences.draw(prefs, bpy.context)
result["preferences_labels"] = prefs.layout.labels
if hasattr(bpy.types, "TETRIG_PT_missing_dependencies"):
    panel = Drawer()
    tetrig.panels.dependencies.TETRIG_PT_missing_dependencies.draw(panel, bpy.context)
    result["panel_labels"] = panel.layout.labels
tetrig.unregister()
result["after_unregister"] = registered()
with open(sys.argv[-1], "w") as fh:
    json.dump(result, fh)
'''


def blocked_env(tmp_path: Path, blocked: str) -> dict[str, str]:
    """The environment of a subprocess in which the packages ``blocked`` do not import."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return {**os.environ, "PYTHONPATH": str(site), "TETRIG_TEST_BLOCK": blocked}


def probe(tmp_path: Path, blocked: str) -> dict:
    """Run PROBE with ``blocked`` unimportable; return its JSON result."""
    pytest.importorskip("bpy")
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    out = tmp_path / "probe.json"
    proc = subprocess.run([sys.executable, str(script), str(REPO), str(out)], env=blocked_env(tmp_path, blocked),
                          capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_without_scipy_the_sidebar_names_the_zip_to_install(tmp_path: Path) -> None:
    result = probe(tmp_path, "scipy")
    assert not result["scipy_imported"]
    # nothing that needs SciPy is registered, but the preferences and one panel are
    # (preferences, missing-dependencies panel, main panel, an operator)
    assert result["registered"] == [True, True, False, False]
    assert not result["object_settings"]

    message = f"SciPy missing: install {ZIP} (the zip for Python {PYTHON})"
    panel_text = " ".join(text for text, _ in result["panel_labels"])
    assert panel_text == message  # one message (wrapped to the sidebar's width), nothing else
    assert result["panel_labels"][0][1] == "ERROR"

    prefs = [text for text, _ in result["preferences_labels"]]
    assert prefs[0] == message
    assert prefs[1] == "Import error: No module named 'scipy'"
    assert result["after_unregister"] == [False, False, False, False]


def test_without_numba_everything_registers_and_the_preferences_say_so(tmp_path: Path) -> None:
    result = probe(tmp_path, "numba")
    assert result["registered"] == [True, False, True, True]
    assert result["object_settings"]
    prefs = [text for text, _ in result["preferences_labels"]]
    assert prefs[0].startswith("SciPy 1.")
    assert prefs[1] == "compiled solver unavailable: No module named 'numba'"
    assert prefs[2] == "The NumPy solver runs instead (slower)"
    assert result["after_unregister"] == [False, False, False, False]


def test_with_everything_the_preferences_show_the_versions(tmp_path: Path) -> None:
    import numba
    import numpy
    import scipy

    result = probe(tmp_path, "")
    prefs = [text for text, _ in result["preferences_labels"]]
    assert prefs == [f"SciPy {scipy.__version__}", f"Compiled solver: numba {numba.__version__}",
                     f"Python {PYTHON}, NumPy {numpy.__version__}, linux-x64"]


def test_batch_without_scipy_exits_1_with_the_message(scene, tmp_path: Path) -> None:
    """The command line gets the same line (scripts/batch.py through the bpy module)."""
    import bpy

    blend = tmp_path / "empty.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(blend))
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "batch.py"), str(blend), "--", "--all"],
                          env=blocked_env(tmp_path, "scipy"), capture_output=True, text=True,
                          timeout=TIMEOUT_S, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines[-1] == (f"tetrig batch: error: SciPy missing: install {ZIP} (the zip for Python {PYTHON}) "
                         "(or run with a Python that has SciPy)"), proc.stderr
