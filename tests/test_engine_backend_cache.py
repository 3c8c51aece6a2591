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
