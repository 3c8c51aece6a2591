"""The machine code the Linux zips ship (``tetrig_addon.machine_code``): Numba reads a cache filled
on another path of another computer, for the shipped CPU target only; nothing changes where the
extension ships none.

The round trip compiles a one-line kernel in a subprocess (each run a fresh interpreter, so Numba
reads its target from the environment), as the build does, and loads it from the copy the way a
user's first start does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tetrig_addon import machine_code
from tetrig_addon.machine_code import SHIPPED_MARKER

# (Numba is imported in the tests, never at collection: the session's conftest points its cache
# at the session's folder before the first import.)
REPO = Path(__file__).resolve().parent.parent

KERNEL = '''
from numba import njit

@njit(cache=True)
def double(x):
    return 2.0 * x
'''

# Imports the one-line kernel from a folder as the package argv[2] ("tiny" as built, "outer.tiny" as
# a user's Blender would name it: with argv[3], the built names answered by machine_code.BuiltNames),
# calls it, and prints Numba's cache hits and misses.
RUN = '''
import importlib, json, sys
sys.path.insert(0, sys.argv[1])
if len(sys.argv) > 3:
    sys.path.insert(0, sys.argv[3])
    from tetrig_addon.machine_code import BuiltNames
    BuiltNames.install("tiny", sys.argv[2])
kern = importlib.import_module(sys.argv[2] + ".kern")
value = kern.double(1.5)
stats = kern.double.stats
print(json.dumps({"value": value, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}))
'''

V3_FLAGS = "flags\t\t: fpu " + " ".join(sorted(machine_code.TARGET_FLAGS)) + " avx512f\n"


def run_kernel(folder: Path, cache: Path, target: bool, package: str = "tiny", alias: bool = False) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    if target:
        env["NUMBA_CPU_NAME"], env["NUMBA_CPU_FEATURES"] = machine_code.TARGET_CPU, ""
    args = [str(folder), package, *([str(REPO)] if alias else [])]
    proc = subprocess.run([sys.executable, "-c", RUN, *args], env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def make_engine(root: Path) -> Path:
    engine = root / "tiny"
    engine.mkdir(parents=True)
    (engine / "__init__.py").write_text("")
    (engine / "kern.py").write_text(KERNEL)
    return engine


def test_numba_names_a_kernel_folder_as_numba_subpath_does(tmp_path: Path) -> None:
    caching = pytest.importorskip("numba.core.caching")
    _CacheLocator = caching._CacheLocator

    for directory in (machine_code.ENGINE / "solver", tmp_path / "a b" / "tetrig_addon" / "cage"):
        assert machine_code.numba_subpath(directory) == _CacheLocator.get_suitable_cache_subpath(
            str(directory / "kernel.py"))


def test_the_target_needs_every_feature_of_the_level() -> None:
    if not (sys.platform.startswith("linux") and os.uname().machine == "x86_64"):
        pytest.skip("the shipped code is for Linux on x86-64")
    assert machine_code.host_has_target(V3_FLAGS)
    assert not machine_code.host_has_target(V3_FLAGS.replace(" avx2 ", " "))
    assert not machine_code.host_has_target("processor\t: 0\n")


@pytest.mark.skipif(not machine_code.host_has_target(), reason="this computer cannot run the shipped target")
def test_a_cache_filled_on_another_path_loads_for_the_target_only(tmp_path: Path) -> None:
    pytest.importorskip("numba")
    built = make_engine(tmp_path / "build")
    cache = tmp_path / "build-cache"
    first = run_kernel(built.parent, cache, target=True)
    assert first == {"value": 3.0, "hits": 0, "misses": 1}
    shipped = tmp_path / "shipped"
    assert machine_code.collect(cache, shipped, engine=built) == 2  # the index and one entry
    assert sorted(p.name for p in shipped.iterdir())[0].startswith("kern.double-")

    # the user's copy: another path, other time stamps, another package name (as Blender's
    # bl_ext.<repository>.<id>), an empty cache
    (tmp_path / "user" / "outer").mkdir(parents=True)
    (tmp_path / "user" / "outer" / "__init__.py").write_text("")
    user = tmp_path / "user" / "outer" / "tiny"
    shutil.copytree(built, user)
    os.utime(user / "kern.py", (1.0e9, 1.0e9))
    user_cache = tmp_path / "user-cache"
    assert machine_code.seed(shipped, user_cache, engine=user) == 2
    marker = user_cache / SHIPPED_MARKER.format(tag=sys.implementation.cache_tag)
    assert json.loads(marker.read_text())["files"] == 2
    assert machine_code.seed(shipped, user_cache, engine=user) == 0  # a second start copies nothing
    hit = {"value": 3.0, "hits": 1, "misses": 0}
    assert run_kernel(user.parent.parent, user_cache, True, "outer.tiny", alias=True) == hit
    # the entry imports its module by the name it was built under: without BuiltNames it cannot load
    assert "No module named 'tiny'" in run_kernel(user.parent.parent, user_cache, True, "outer.tiny")["error"]

    # for the host's own CPU the shipped entry does not count: Numba compiles
    native_cache = tmp_path / "native-cache"
    machine_code.seed(shipped, native_cache, engine=user)
    assert run_kernel(user.parent.parent, native_cache, False, "outer.tiny") == {"value": 3.0, "hits": 0,
                                                                                   "misses": 1}


def test_without_the_target_our_inherited_cpu_variables_go(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process started by one that used the shipped code, on a computer without the target
    (a farm's node): Numba must not compile for a CPU the computer does not have."""
    monkeypatch.setattr(machine_code, "host_has_target", lambda cpuinfo=None: False)
    monkeypatch.setattr(sys, "modules", {k: v for k, v in sys.modules.items() if k != "numba"})
    for name, value in (("NUMBA_CPU_NAME", machine_code.TARGET_CPU), ("NUMBA_CPU_FEATURES", ""),
                        (machine_code.OURS, "1")):
        monkeypatch.setenv(name, value)
    assert not machine_code.use_shipped("/nonexistent", "0123456789abcdef")
    assert not {"NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", machine_code.OURS} & set(os.environ)
    # the user's own choice stays
    monkeypatch.setenv("NUMBA_CPU_NAME", "haswell")
    assert not machine_code.use_shipped("/nonexistent", "0123456789abcdef")
    assert os.environ["NUMBA_CPU_NAME"] == "haswell"


def test_without_shipped_code_nothing_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    engine = make_engine(tmp_path)
    assert machine_code.shipped("0123456789abcdef", engine) is None
    assert not machine_code.use_shipped(str(tmp_path / "cache"), "0123456789abcdef", engine)
    assert "NUMBA_CPU_NAME" not in os.environ and not (tmp_path / "cache").exists()

    # shipped code for another Python only is no shipped code
    other = engine / machine_code.SHIPPED_FOLDER / "0123456789abcdef"
    other.mkdir(parents=True)
    (other / "kern.double-4.py27.nbi").write_bytes(b"")
    assert machine_code.shipped("0123456789abcdef", engine) is None


def test_numba_imported_for_the_host_keeps_its_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This test process imported Numba for its own CPU: copying the shipped code would not help."""
    numba = pytest.importorskip("numba")
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)
    monkeypatch.setattr(machine_code, "host_has_target", lambda cpuinfo=None: True)
    engine = make_engine(tmp_path)
    tag = f".py{sys.version_info[0]}{sys.version_info[1]}"
    folder = engine / machine_code.SHIPPED_FOLDER / "0123456789abcdef" / "."
    folder.mkdir(parents=True)
    (folder / f"kern.double-4{tag}.nbi").write_bytes(b"")
    assert machine_code.shipped("0123456789abcdef", engine) is not None
    assert numba.config.CPU_NAME != machine_code.TARGET_CPU
    assert not machine_code.use_shipped(str(tmp_path / "cache"), "0123456789abcdef", engine)
    assert "NUMBA_CPU_NAME" not in os.environ and not (tmp_path / "cache").exists()


def test_built_names_are_the_same_modules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_engine(tmp_path / "outer")
    (tmp_path / "outer" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    machine_code.BuiltNames.install("tiny_built", "outer.tiny")
    machine_code.BuiltNames.install("tiny_built", "outer.tiny")  # once
    assert sum(isinstance(f, machine_code.BuiltNames) for f in sys.meta_path) == 1
    import importlib
    try:
        assert importlib.import_module("tiny_built.kern") is importlib.import_module("outer.tiny.kern")
        assert importlib.import_module("tiny_built") is sys.modules["outer.tiny"]
        # the modules keep their own spec (a package's with its path)
        assert sys.modules["outer.tiny"].__spec__.name == "outer.tiny"
        assert sys.modules["outer.tiny.kern"].__spec__.name == "outer.tiny.kern"
        assert sys.modules["outer.tiny"].__spec__.submodule_search_locations
        # enabled again after a disable: the names given to the earlier modules go
        sys.modules.pop("outer.tiny.kern")
        assert machine_code.BuiltNames.install("tiny_built", "outer.tiny")
        assert "tiny_built.kern" not in sys.modules and "tiny_built" in sys.modules
        assert importlib.import_module("tiny_built.kern") is importlib.import_module("outer.tiny.kern")
        # a module of another package under the name: not installed
        sys.modules["other_built"] = ModuleType("other_built")
        assert not machine_code.BuiltNames.install("other_built", "outer.tiny")
    finally:
        for name in ("tiny_built", "tiny_built.kern", "outer", "outer.tiny", "outer.tiny.kern", "other_built"):
            sys.modules.pop(name, None)
