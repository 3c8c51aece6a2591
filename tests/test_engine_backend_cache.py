"""The compiled kernel's cache marker (``backend.cache_filled``), which lets a first frame wait for
a load from the cache and never for a compile (no Blender; the session's kernel, loaded by
``conftest``; the Blender side is ``test_blender_cold_start.py``)."""

import json
import os

from tetrig_addon.solver import backend


def loaded_kernel():
    """The kernel module (imported by ``conftest``'s load, after ``configure``: imported at
    collection, Numba would cache it beside its source instead)."""
    assert backend.kernel_ready()
    return backend.kernel()


def test_a_finished_load_leaves_its_marker_beside_numbas_cache():
    kernel = loaded_kernel()
    assert backend.cache_filled()
    marker = backend.marker_path()
    assert marker is not None and os.path.isfile(marker)
    # in the folder where Numba keeps the kernel's machine code
    assert os.path.dirname(kernel._frame.stats.cache_path) == os.path.dirname(marker)
    with open(marker, encoding="utf-8") as handle:
        recorded = json.load(handle)
    assert recorded["kernel"] == os.path.dirname(os.path.abspath(kernel.__file__))
    assert abs(recorded["seconds"] - backend.load_seconds()) < 1e-3


def test_a_folder_no_load_filled_has_no_marker(monkeypatch, tmp_path):
    kernel = loaded_kernel()
    monkeypatch.setenv("NUMBA_CACHE_DIR", os.environ.get("NUMBA_CACHE_DIR", ""))
    monkeypatch.setattr(backend, "_cache_path", backend._cache_path)
    backend.configure(str(tmp_path))
    assert not backend.cache_filled()
    assert os.path.dirname(backend.marker_path()) == os.path.join(str(tmp_path), backend.source_fingerprint())
    # Numba, imported before, keeps the kernel where it was: a load now would leave no marker here
    assert not backend._cached_here(kernel)


def test_a_loaded_kernel_is_not_waited_for():
    assert not backend.loading_from_cache()
    assert backend.wait_for_cached_load()


FRESH_START = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from tetrig_addon.solver import backend, build_model, rest_state, SimSettings
backend.configure(sys.argv[2])
backend.warm_up()
kernel = backend.kernel()
out = {"first": [str(s) for s in kernel._global_step.signatures], "ready_before": backend._GLOBAL_STEP.ready()}
import numpy as np
corners = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
model = build_model(corners, np.array([[0, 1, 2, 3]]), goal_weights=np.array([1.0, 0.0, 0.0, 0.0]))
settings = SimSettings(global_iterations=1).validated()
state = backend.step(model, rest_state(model), settings, 1 / 24)  # auto: the reference, the part loads meanwhile
out["loaded"] = backend.wait_for_global_step()
out["after"] = [str(s) for s in kernel._global_step.signatures]
again = backend.step(model, rest_state(model), settings, 1 / 24)
out["same"] = float(abs(state.positions - again.positions).max())
out["marker"] = backend._GLOBAL_STEP.cache_filled() and backend._GLOBAL_STEP.marker_path() != backend.marker_path()
print(json.dumps(out))
"""


def test_a_first_start_compiles_the_global_step_only_when_a_frame_needs_it(tmp_path):
    """Issue 22/24: the kernel's first compile leaves the global step out (measured: ready in 20.5 s
    instead of 33.8 s here); a frame with Global Iterations starts its compile and steps on the
    NumPy reference meanwhile (the same positions), then the compiled frame loads and leaves its
    own cache marker."""
    import subprocess
    import sys
    from pathlib import Path

    script = tmp_path / "fresh_start.py"
    script.write_text(FRESH_START)
    repo = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, str(script), repo, str(tmp_path / "cache")], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["first"] == [] and not out["ready_before"]
    assert out["loaded"] and len(out["after"]) == 1
    assert out["same"] < 1e-9
    assert out["marker"]
