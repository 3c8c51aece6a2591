"""Compile the machine code a Linux zip ships (``tetrig_addon/machine_code.py`` says what and why).

Usage, with the Python version and Numba of the zip (``build_extension.py --machine-code`` runs it)::

    python scripts/build_machine_code.py --source EXTENSION_FOLDER --out FOLDER

Compiles every kernel of ``EXTENSION_FOLDER/tetrig_addon`` for ``machine_code.TARGET_CPU`` into a
fresh Numba cache, then copies the cache's files to ``FOLDER/<fingerprint>/<directory in the
engine>/`` (``machine_code.collect``). The last line on standard output is JSON: the fingerprint,
Numba's version and the number of files. On failure: one line starting with
``build_machine_code: error:`` on standard error, exit status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

# Where the files go inside a zip (``machine_code.ENGINE / machine_code.SHIPPED_FOLDER``).
ZIP_FOLDER = "tetrig_addon/machine_code"
# A compile of every kernel: about 3 minutes on 2 cores (182 s measured, Python 3.11).
TIMEOUT_S = 1800


def compile_for(interpreter: Path, source: Path, out: Path, wheels: list[str]) -> dict:
    """Run this script with ``interpreter`` (a Python with the zip's Numba) on the extension folder
    ``source``, into ``out``; returns its JSON line. ``wheels``: the file names of the zip's wheels.

    Raises:
        RuntimeError: it failed (its last error line), or its Numba is not the zip's.
    """
    numba_version = next((w.split("-")[1] for w in wheels if w.startswith("numba-")), "")
    proc = subprocess.run([str(interpreter), __file__, "--source", str(source), "--out", str(out)],
                          capture_output=True, text=True, timeout=TIMEOUT_S)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        errors = proc.stderr.strip().splitlines()
        raise RuntimeError(f"machine code for {interpreter}: {errors[-1] if errors else 'failed'}")
    report = json.loads(lines[-1])
    if report["numba"] != numba_version:
        raise RuntimeError(f"{interpreter} has Numba {report['numba']}, the zip ships {numba_version}")
    return report


def add_to_zip(zip_path: Path, folder: Path) -> int:
    """Append the files of ``folder`` (``compile_for``'s ``out``) to the zip under ``ZIP_FOLDER``;
    returns how many."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    with zipfile.ZipFile(zip_path, "a", compression=zipfile.ZIP_DEFLATED) as zf:
        for path in files:
            zf.write(path, f"{ZIP_FOLDER}/{path.relative_to(folder).as_posix()}")
    return len(files)


def compile_all() -> dict[str, float]:
    """Compile every kernel of the engine (``tetrig_addon``, imported) into Numba's cache
    (``solver.backend.configure``'s folder), blocking, the way a start loads them: each
    ``lazy_kernel.LazyKernel`` of every module of the engine (the solver's kernel through the
    frames' own path, its global step, the searches that follow it, the jiggle step, the quality
    pass), all modules imported first so that none is missed. Returns the seconds waited for each,
    by its loading thread's name (``tetrig-compile`` is the solver's kernel), in that order: the
    searches that follow the solver's kernel start compiling in the background when it is in, so
    theirs is what was left of their compile.

    Raises:
        lazy_kernel.KernelUnavailable: a kernel did not compile (the message says why).
    """
    import importlib
    import pkgutil

    import tetrig_addon
    from tetrig_addon.lazy_kernel import every_kernel

    for module in pkgutil.walk_packages(tetrig_addon.__path__, "tetrig_addon."):
        importlib.import_module(module.name)
    seconds = {}
    for kernel in every_kernel():
        start = time.perf_counter()
        kernel.module()
        seconds[kernel.thread_name] = round(time.perf_counter() - start, 1)
    return seconds


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, required=True, help="the extension folder (holds tetrig_addon/)")
    parser.add_argument("--out", type=Path, required=True, help="where the fingerprint's folder goes")
    args = parser.parse_args(argv)
    source = args.source.resolve()
    if not (source / "tetrig_addon" / "machine_code.py").is_file():
        print(f"build_machine_code: error: no tetrig_addon/machine_code.py in {source}", file=sys.stderr)
        return 1
    if "numba" in sys.modules:
        print("build_machine_code: error: Numba was imported before the target CPU was set", file=sys.stderr)
        return 1
    sys.path.insert(0, str(source))
    from tetrig_addon import machine_code
    from tetrig_addon.lazy_kernel import KernelUnavailable
    from tetrig_addon.solver import backend

    if not machine_code.host_has_target():
        print(f"build_machine_code: error: this computer cannot run {machine_code.TARGET_CPU} code (Linux "
              "x86-64 with AVX2, FMA, BMI2...), which the build runs to compile it", file=sys.stderr)
        return 1
    # the target, before Numba is imported (it reads both once)
    os.environ["NUMBA_CPU_NAME"], os.environ["NUMBA_CPU_FEATURES"] = machine_code.TARGET_CPU, ""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tetrig-machine-code-") as cache_dir:
        backend.configure(cache_dir)
        fingerprint = backend.source_fingerprint()
        try:
            kernels = compile_all()
        except KernelUnavailable as ex:
            print(f"build_machine_code: error: a kernel did not compile: {ex}", file=sys.stderr)
            return 1
        import numba
        if numba.config.CPU_NAME != machine_code.TARGET_CPU:
            print(f"build_machine_code: error: Numba compiled for {numba.config.CPU_NAME}", file=sys.stderr)
            return 1
        files = machine_code.collect(Path(cache_dir) / fingerprint, args.out.resolve() / fingerprint,
                                     engine=source / "tetrig_addon")
    print(json.dumps({"fingerprint": fingerprint, "numba": numba.__version__, "kernels_s": kernels, "files": files,
                      "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
                      "seconds": round(time.perf_counter() - start, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
