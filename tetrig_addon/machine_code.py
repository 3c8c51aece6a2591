"""Machine code shipped in the Linux zips, so a first start loads the compiled kernels in about a
second instead of compiling them for half a minute to a minute (issue 22, "the first minute").

What ships is Numba's own on-disk cache of every kernel of the engine, filled at build time
(``scripts/build_machine_code.py``) and copied, on the user's computer, into the cache folder
``solver.backend.configure`` gives Numba (``seed``). Four things make a cache filled elsewhere load:

* **The sources.** Numba checks a cache index against a hash of the kernel file's contents (not
  its time stamp, in the Numba the Linux zips ship, 0.68.1), and each entry against the function's bytecode: extracting
  the zip changes neither. The folder is named for the engine's sources and Numba's version
  (``backend.source_fingerprint``), here as in the user's cache.
* **The folder.** Numba files a kernel's entries under a folder named for the absolute path of the
  kernel's directory (``numba_subpath``), which differs between the build and the user's
  computer: the zip holds them by the directory's path inside the engine (``solver``,
  ``cage``...), and ``seed`` copies them under the name Numba gives that directory there.
* **The module names.** Each entry names the module of its function as the build imported it
  (``tetrig_addon.solver.kernel``) and imports it when it loads (Numba's ``_rebuild_env``). In
  Blender the engine is ``bl_ext.<repository>.tetrig.tetrig_addon``: ``BuiltNames`` answers the
  build's names with the modules Blender loaded (the same module objects, never a second copy).
* **The CPU.** Each entry is keyed by the target: triple, CPU name and CPU features, by default
  the host's own. The shipped code is compiled for a level most x86-64 computers have,
  ``x86-64-v3`` (AVX2, FMA, BMI2: Intel since Haswell, 2013; AMD since Excavator and Zen), with
  no further features, and a computer that has them asks for the same target
  (``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES``, set before Numba is imported). Measured on this
  machine (a Xeon with AVX-512; the bunny's Fit cage, 4,282 tets, with the ground; median ms a
  frame over three alternating runs, ``/work/probe/cpu_ab2.sh``): the host's own CPU 11.4 / 11.6 /
  12.1, ``x86-64-v3`` 11.0 / 11.0 / 14.4, ``generic`` (SSE2) 13.6 / 21.2 / 17.3. The level costs
  nothing measurable where ``generic`` costs about half again. It also gives every such computer
  the same machine code, so a bake on a render farm is the one made on the workstation.

Anywhere else (no shipped code: a checkout, the Windows and macOS zips; a CPU without those
features; the user's own ``NUMBA_CPU_NAME``; Numba imported earlier by another add-on) nothing
changes: Numba compiles for the host on first use, as before.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import platform
import shutil
import sys
import threading
from pathlib import Path
from types import ModuleType

# Not resolved: Numba names a kernel's cache folder by the path it was imported from, symbolic links
# and all (the batch script imports the extension through one).
ENGINE = Path(os.path.abspath(os.path.dirname(__file__)))
# The engine's package name as the build imports it (``scripts/build_machine_code.py``), and here.
BUILT_AS = "tetrig_addon"
PACKAGE = __name__.rpartition(".")[0]
# The zip's folder of Numba cache files: ``machine_code/<fingerprint>/<directory in the engine>/``.
SHIPPED_FOLDER = "machine_code"
TARGET_CPU = "x86-64-v3"
# /proc/cpuinfo's names of the features x86-64-v3 adds to x86-64 (v2's and v3's: psABI's list;
# ``pni`` is SSE3, ``abm`` LZCNT, ``lahf_lm`` LAHF/SAHF).
TARGET_FLAGS = frozenset({"cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3",
                          "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"})
_CACHE_SUFFIXES = (".nbi", ".nbc")
# Left in the cache folder by ``seed``: the kernels' loads read a filled cache (``lazy_kernel``'s
# ``cache_filled``, in a process that uses the shipped code), for this Python (``cache_tag``).
SHIPPED_MARKER = "shipped-{tag}.json"
# Set beside the CPU variables when ``use_shipped`` sets them, so that a process started from this
# one (a farm's submitter forwarding its environment) on a computer without the target drops them.
OURS = "TETRIG_NUMBA_CPU"
_in_use = False


def in_use() -> bool:
    """Whether this process uses the shipped machine code (``use_shipped`` returned True)."""
    return _in_use


def host_has_target(cpuinfo: str | None = None) -> bool:
    """Whether this computer runs ``TARGET_CPU`` code: Linux on x86-64 with every feature of
    ``TARGET_FLAGS`` in ``cpuinfo`` (the text of ``/proc/cpuinfo``; read when ``None``). False
    elsewhere, and when the file cannot be read."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return False
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return TARGET_FLAGS <= set(value.split())
    return False


def numba_subpath(directory: Path | str) -> str:
    """The name of the folder Numba's cache (``NUMBA_CACHE_DIR``) gives the kernels of
    ``directory``: its last part and the SHA-1 of its absolute path, as Numba's
    ``_CacheLocator.get_suitable_cache_subpath`` (of any file in it) computes it; a test checks that
    the two agree, since Numba does not promise the formula."""
    path = os.path.abspath(directory)
    return "_".join([os.path.split(path)[-1], hashlib.sha1(path.encode()).hexdigest()])


def _python_tag() -> str:
    """The part of a cache file's name that says which Python made it (``.py311``)."""
    return f".py{sys.version_info[0]}{sys.version_info[1]}"


def shipped(fingerprint: str, engine: Path = ENGINE) -> Path | None:
    """The shipped cache for the engine's sources ``fingerprint`` (``backend.source_fingerprint``)
    when it holds entries for this Python, else ``None``."""
    folder = engine / SHIPPED_FOLDER / fingerprint
    if not folder.is_dir():
        return None
    tag = _python_tag()
    return folder if any(tag in p.name for p in folder.rglob("*.nbi")) else None


def use_shipped(cache_path: str, fingerprint: str, engine: Path = ENGINE) -> bool:
    """Where this computer can use the shipped machine code, have Numba use it: ask for
    ``TARGET_CPU`` (the environment, read when Numba is imported) and copy the shipped entries into
    ``cache_path`` (Numba's cache folder for these sources, ``NUMBA_CACHE_DIR``) with ``seed``.
    Returns whether it did; else changes nothing (see the module's docstring for when)."""
    global _in_use
    source = shipped(fingerprint, engine)
    if not host_has_target():
        if os.environ.pop(OURS, None) and "numba" not in sys.modules:  # inherited from a process of ours
            for name in ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES"):
                os.environ.pop(name, None)
        return False
    if source is None:
        return False
    if os.environ.get("NUMBA_CPU_NAME", TARGET_CPU) != TARGET_CPU or os.environ.get("NUMBA_CPU_FEATURES", ""):
        return False  # the user's own choice
    if "numba" in sys.modules:  # imported earlier, its target read already: only keep it if it is ours
        config = sys.modules.get("numba.core.config")
        if config is None or getattr(config, "CPU_NAME", None) != TARGET_CPU or getattr(config, "CPU_FEATURES", None):
            return False
    # the entries import their modules by the build's names: without those, none would load
    if engine == ENGINE and PACKAGE != BUILT_AS and not BuiltNames.install(BUILT_AS, PACKAGE):
        return False
    try:
        seed(source, Path(cache_path), engine)
    except OSError:  # a cache folder Numba cannot write either: it compiles, as before
        return False
    os.environ["NUMBA_CPU_NAME"], os.environ["NUMBA_CPU_FEATURES"], os.environ[OURS] = TARGET_CPU, "", "1"
    _in_use = True
    return True


class BuiltNames(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports of ``built`` and its submodules (``tetrig_addon.solver.kernel``) answered with the
    modules of ``real`` (``bl_ext.user_default.tetrig.tetrig_addon.solver.kernel``), imported under
    their own name first if need be: the same module objects under a second name, as the shipped
    cache entries name them (see the module's docstring)."""

    def __init__(self, built: str, real: str) -> None:
        self.built, self.real = built, real
        self._specs: dict[str, importlib.machinery.ModuleSpec | None] = {}  # by the second name

    @classmethod
    def install(cls, built: str, real: str) -> bool:
        """Put a finder for ``built`` first in ``sys.meta_path`` (in place of an earlier one), and
        drop the names it gave modules that are no longer ``real``'s (an extension disabled and
        enabled again, or updated, in the same session). Returns False, changing nothing, when a
        module of another package holds one of those names."""
        for name in [n for n in sys.modules if n == built or n.startswith(built + ".")]:
            module = sys.modules[name]
            if getattr(module, "__name__", None) != real + name[len(built):]:
                return False  # another package's
            if sys.modules.get(real + name[len(built):]) is not module:
                del sys.modules[name]  # a module of an earlier load of the extension
        sys.meta_path[:] = [f for f in sys.meta_path if not (isinstance(f, cls) and f.built == built)]
        sys.meta_path.insert(0, cls(built, real))
        return True

    def find_spec(self, name: str, path: object = None, target: object = None) -> importlib.machinery.ModuleSpec | None:
        if name != self.built and not name.startswith(self.built + "."):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.real + spec.name[len(self.built):])
        self._specs[spec.name] = module.__spec__  # the import system sets the second name's next
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing runs (the module ran when it was imported under its own name); its own spec is
        put back."""
        if module.__spec__ is not None and module.__spec__.name in self._specs:
            module.__spec__ = self._specs.pop(module.__spec__.name)


def seed(source: Path, cache_path: Path, engine: Path = ENGINE) -> int:
    """Copy the shipped cache ``source`` (``machine_code/<fingerprint>``, one folder a directory of
    the engine) into Numba's cache folder ``cache_path``, each directory's entries under Numba's
    name for it (``numba_subpath``). A function whose index is already there keeps its own (and its
    data files); a function's files are copied whole or not at all. Leaves ``SHIPPED_MARKER``.
    Returns how many files it copied.

    Raises:
        OSError: ``cache_path`` cannot be written.
    """
    copied = 0
    for index in sorted(source.rglob("*.nbi")):
        relative = index.parent.relative_to(source)
        target = cache_path / numba_subpath(engine / relative)
        if (target / index.name).exists():
            continue
        target.mkdir(parents=True, exist_ok=True)
        base = index.name[: -len(".nbi")]
        data = sorted(p for p in index.parent.glob(base + ".*.nbc"))
        for path in data + [index]:  # the index last: Numba reads no entry before its data is there
            part = target / f"{path.name}.{os.getpid()}-{threading.get_ident()}.part"  # one per writer
            shutil.copyfile(path, part)
            os.replace(part, target / path.name)
            copied += 1
    marker = cache_path / SHIPPED_MARKER.format(tag=sys.implementation.cache_tag)
    marker.write_text(json.dumps({"from": str(source), "files": copied}), encoding="utf-8")
    return copied


def collect(cache_path: Path, out: Path, engine: Path = ENGINE) -> int:
    """The build's side of ``seed``: copy the Numba cache files that ``cache_path`` holds for the
    engine's directories into ``out``, under each directory's path inside the engine. Returns how
    many files it copied."""
    copied = 0
    for directory in [engine, *sorted(p for p in engine.rglob("*") if p.is_dir())]:
        folder = cache_path / numba_subpath(directory)
        if not folder.is_dir():
            continue
        files = sorted(p for p in folder.iterdir() if p.suffix in _CACHE_SUFFIXES)
        if files:
            target = out / directory.relative_to(engine)
            target.mkdir(parents=True, exist_ok=True)
            for path in files:
                shutil.copyfile(path, target / path.name)
                copied += 1
    return copied
