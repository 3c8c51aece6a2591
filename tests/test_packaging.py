"""Packaging tests: the manifest, the linux-x64 zips for Python 3.11 and 3.13, Blender's `validate`,
and the zip for the running Python installed into a temporary Blender user folder.

These use only the manifest, `scripts/build_extension.py` and Blender's extension tool (inside the
`bpy` wheel); the build downloads the six linux-x64 wheels (SciPy, numba, llvmlite for cp311 and
cp313) into ./wheels/ once (pip, from PyPI).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

from tetrig_addon import machine_code

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST_PATH = REPO_ROOT / "blender_manifest.toml"
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build_extension.py"

PLATFORMS = ("linux-x64", "windows-x64", "macos-arm64", "macos-x64")
PYTHONS = ("3.11", "3.13")
THIS_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
OTHER_PYTHON = next(v for v in PYTHONS if v != THIS_PYTHON)
# The wheels every zip carries, by distribution: SciPy (required), numba + llvmlite (the compiled
# solver). Intel Macs run Blender 4.2-4.5 only (Python 3.11), and numba's last macOS x86_64 wheels
# are 0.62.1 (with llvmlite 0.45).
SCIPY_VERSION = "1.16.3"
NUMBA_LLVMLITE = {"linux-x64": ("0.68.1", "0.50.0"), "windows-x64": ("0.68.1", "0.50.0"),
                  "macos-arm64": ("0.68.1", "0.50.0"), "macos-x64": ("0.62.1", "0.45.1")}
# Downloading ~200 MB of wheels may take a while on a slow link, but not forever.
BUILD_TIMEOUT_S = 900


def load_manifest() -> dict:
    """Parse the source manifest."""
    with open(MANIFEST_PATH, "rb") as fh:
        return tomllib.load(fh)


def platform_of_wheel(filename: str) -> str:
    """Blender platform of a wheel from its platform tag (independent of the build script)."""
    tag = filename.removesuffix(".whl").split("-")[-1]
    if tag == "win_amd64":
        return "windows-x64"
    if tag.startswith("manylinux") and tag.endswith("x86_64"):
        return "linux-x64"
    if tag.startswith("macosx_") and tag.endswith("_arm64"):
        return "macos-arm64"
    if tag.startswith("macosx_") and tag.endswith("_x86_64"):
        return "macos-x64"
    raise AssertionError(f"unexpected platform tag in {filename}")


def python_of_wheel(filename: str) -> str:
    """Python version of a CPython wheel from its tags: ``cp313-cp313`` -> ``3.13``."""
    python_tag, abi_tag = filename.split("-")[-3:-1]
    assert python_tag == abi_tag and python_tag.startswith("cp3"), filename
    return f"3.{python_tag[3:]}"


def load_module(path: Path, name: str) -> ModuleType:
    """Import a file as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def load_build_script() -> ModuleType:
    """scripts/build_extension.py as a module."""
    return load_module(BUILD_SCRIPT, "build_extension")


def blender_ext_module() -> ModuleType:
    """Blender's extension tool (inside the bpy wheel) as a module, for its wheel-name functions."""
    return load_module(load_build_script().find_blender_ext(), "blender_ext")


@pytest.fixture(scope="module")
def linux_zips(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Build the linux-x64 zips (both Python versions) once, the way a developer does
    (``make build PLATFORMS=linux-x64``), with the kernels compiled for this Python's only (the
    other's would take this session minutes more); Python version -> zip."""
    out_dir = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--platform", "linux-x64", "--output-dir", str(out_dir),
         "--machine-code", f"{THIS_PYTHON}={sys.executable}"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
    )
    assert proc.returncode == 0, f"build failed:\n{proc.stdout}\n{proc.stderr}"
    printed = [Path(line) for line in proc.stdout.splitlines() if line.strip()]
    names = ["tetrig-0.1.0-linux_x64-py311.zip", "tetrig-0.1.0-linux_x64-py313.zip"]
    assert printed == [out_dir / n for n in names], proc.stdout
    assert sorted(p.name for p in out_dir.iterdir()) == names
    return dict(zip(PYTHONS, printed))


def test_manifest_lists_scipy_numba_llvmlite_per_platform_and_python_and_no_numpy() -> None:
    manifest = load_manifest()
    assert manifest["schema_version"] == "1.0.0"
    assert manifest["id"] == "tetrig"
    assert manifest["type"] == "add-on"
    assert manifest["blender_version_min"] == "4.2.0"
    assert sorted(manifest["platforms"]) == sorted(PLATFORMS)

    wheels = manifest["wheels"]
    assert all(w.startswith("./wheels/") and w.endswith(".whl") for w in wheels), wheels
    names = [Path(w).name for w in wheels]
    assert len(set(names)) == len(names)
    assert not [n for n in names if n.lower().startswith("numpy")]
    found: dict[tuple[str, str], dict[str, str]] = {}
    for name in names:
        dist, version = name.split("-")[:2]
        key = (platform_of_wheel(name), python_of_wheel(name))
        assert dist not in found.setdefault(key, {}), f"two {dist} wheels for {key}"
        found[key][dist] = version
    expected_keys = {(p, v) for p in PLATFORMS for v in PYTHONS if (p, v) != ("macos-x64", "3.13")}
    assert set(found) == expected_keys
    for (platform, _), dists in found.items():
        numba, llvmlite = NUMBA_LLVMLITE[platform]
        assert dists == {"scipy": SCIPY_VERSION, "numba": numba, "llvmlite": llvmlite}


def test_the_add_on_knows_the_zips_the_build_makes() -> None:
    """runtime/app/dependencies.py names the zip to install when SciPy is missing: its table of zips
    is the build's."""
    dependencies = load_module(REPO_ROOT / "runtime" / "app" / "dependencies.py", "tetrig_dependencies")
    plan = load_build_script().build_plan(load_manifest(), None, None)
    zips = {(platform, python) for python, platforms in plan for platform in platforms}
    assert zips == {(p, v) for p, versions in dependencies.ZIP_PYTHONS.items() for v in versions}


def test_manifest_build_excludes_development_files() -> None:
    patterns = load_manifest()["build"]["paths_exclude_pattern"]
    for pattern in ("/tests/", "/benchmarks/", "/.ci/", "/docs/", "/Makefile",
                    "/scripts/build_extension.py", "requirements*.txt", "__pycache__/"):
        assert pattern in patterns


def test_pip_download_args_name_the_exact_wheel() -> None:
    build_extension = load_build_script()
    name = "scipy-1.16.3-cp313-cp313-manylinux2014_x86_64.manylinux_2_17_x86_64.whl"
    args = build_extension.pip_download_args(name)
    assert args[:3] == ["download", "--only-binary=:all:", "--no-deps"]
    assert args[args.index("--python-version") + 1] == "3.13"
    assert args[args.index("--abi") + 1] == "cp313"
    assert [args[i + 1] for i, a in enumerate(args) if a == "--platform"] == [
        "manylinux2014_x86_64", "manylinux_2_17_x86_64"]
    assert args[-1] == "scipy==1.16.3"
    assert build_extension.wheel_platforms(name) == {"linux-x64"}
    assert build_extension.wheel_python_version(name) == "3.13"
    assert build_extension.wheel_python_version("attrs-26.1.0-py3-none-any.whl") is None


def test_build_plan_one_zip_per_platform_and_python() -> None:
    build_extension = load_build_script()
    manifest = load_manifest()
    everything = build_extension.build_plan(manifest, None, None)
    assert everything == [("3.11", list(PLATFORMS)), ("3.13", ["linux-x64", "windows-x64", "macos-arm64"])]
    assert build_extension.build_plan(manifest, ["macos-x64"], None) == [("3.11", ["macos-x64"])]
    assert build_extension.build_plan(manifest, None, ["3.13"]) == [everything[1]]
    for platforms, pythons, error in ((["macos-x64"], ["3.13"], "no wheels for Python 3.13 on macos-x64"),
                                      (None, ["3.12"], "no wheels for Python 3.12"),
                                      (["linux-arm64"], None, "platform(s) not in")):
        with pytest.raises(build_extension.BuildError, match=re.escape(error)):
            build_extension.build_plan(manifest, platforms, pythons)
    assert build_extension.zip_name(manifest, "macos-arm64", "3.13") == "tetrig-0.1.0-macos_arm64-py313.zip"


def test_staged_manifest_changes_only_platforms_and_wheels() -> None:
    build_extension = load_build_script()
    text = MANIFEST_PATH.read_text()
    wheels = build_extension.wheels_for_platforms(load_manifest(), ["windows-x64"], "3.13")
    assert [python_of_wheel(Path(w).name) for w in wheels] == ["3.13"] * 3
    staged = tomllib.loads(build_extension.staged_manifest_text(text, {"platforms": ["windows-x64"],
                                                                        "wheels": wheels}))
    assert staged == {**load_manifest(), "platforms": ["windows-x64"], "wheels": wheels}
    with pytest.raises(build_extension.BuildError, match="cannot find the top-level"):
        build_extension.staged_manifest_text(text.replace("\nwheels =", "\nwheelz ="), {"wheels": wheels})


@pytest.mark.parametrize("python", PYTHONS)
def test_linux_zip_contents(linux_zips: dict[str, Path], python: str) -> None:
    zip_path = linux_zips[python]
    linux_wheels = [w for w in load_manifest()["wheels"]
                    if platform_of_wheel(Path(w).name) == "linux-x64" and python_of_wheel(Path(w).name) == python]
    assert len(linux_wheels) == 3
    with zipfile.ZipFile(zip_path) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        packaged_manifest = tomllib.loads(zf.read("blender_manifest.toml").decode("utf-8"))

    assert "blender_manifest.toml" in names
    assert "__init__.py" in names
    assert "tetrig_addon/__init__.py" in names
    assert "runtime/app/dependencies.py" in names and "panels/dependencies.py" in names
    assert any(n.startswith("tetrig_addon/") and n.endswith(".py") for n in names)

    assert sorted(n for n in names if n.endswith(".whl")) == sorted(w.removeprefix("./") for w in linux_wheels)

    forbidden_prefixes = ("tests/", "benchmarks/", "docs/", ".ci/", ".git", ".venv", "dist/",
                          "scripts/build_extension.py")
    assert not [n for n in names if n.startswith(forbidden_prefixes)]
    assert not [n for n in names if "__pycache__/" in n or n.endswith((".pyc", ".blend1"))]
    # the batch script ships (it runs the installed extension headless); the dev scripts do not
    assert "scripts/batch.py" in names
    # the kernels' machine code, for this Python in its zip (the fixture compiles it for this one only)
    shipped = [n for n in names if n.startswith("tetrig_addon/machine_code/")]
    tag = f".py{python.replace('.', '')}"
    if python == THIS_PYTHON:
        indexes = {n.split("/")[3] for n in shipped if n.endswith(tag + ".nbi")}
        assert {"solver", "cage", "jiggle", "quality"} <= indexes, shipped
        assert all(tag in n for n in shipped)
    else:
        assert not shipped
    assert not {"scripts/demo.py", "scripts/jelly_demo.py", "scripts/build_extension.py"} & set(names)
    for top_level in ("Makefile", "mypy.ini", "requirements-dev.txt", "requirements-dev-py313.txt",
                      "requirements-typecheck.txt"):
        assert top_level not in names

    generated = packaged_manifest["build"]["generated"]
    assert generated["platforms"] == ["linux-x64"]
    assert generated["wheels"] == linux_wheels
    # Blender derives the supported Python versions from the wheels: exactly this one
    major, minor = map(int, python.split("."))
    assert blender_ext_module().python_versions_from_wheels(generated["wheels"]) == {(major, minor)}


def run_validate(target: Path) -> subprocess.CompletedProcess[str]:
    """Run Blender's `validate` (with Blender's list of valid tags) on a folder or zip."""
    build_extension = load_build_script()
    blender_ext = build_extension.find_blender_ext()
    tags = build_extension.find_valid_tags(blender_ext)
    assert tags is not None, "Blender's tags.py not found beside blender_ext.py"
    return subprocess.run(
        [sys.executable, str(blender_ext), "validate", "--valid-tags", str(tags), str(target)],
        capture_output=True, text=True, timeout=120,
    )


def test_validate_source_folder() -> None:
    proc = run_validate(REPO_ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


@pytest.mark.parametrize("python", PYTHONS)
def test_validate_linux_zip(linux_zips: dict[str, Path], python: str) -> None:
    proc = run_validate(linux_zips[python])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


# Installs a zip in the bpy module and reports what works (also used with the real Blender).
INSTALL_ZIP = REPO_ROOT / "tests" / "real_blender" / "install_zip.py"


def install_in_bpy(zip_path: Path, tmp_path: Path, *options: str) -> dict:
    """Install ``zip_path`` with tests/real_blender/install_zip.py in a bpy-module subprocess whose
    Blender user folder is ``tmp_path/user`` (BLENDER_USER_RESOURCES), never the machine's real
    config; returns its report."""
    pytest.importorskip("bpy")
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    out = tmp_path / "install.json"
    code = ("import runpy, sys; import bpy; sys.argv = [sys.argv[1], '--', *sys.argv[2:]]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code, str(INSTALL_ZIP), str(zip_path), str(out), *options],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0 and out.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_zip_installs_into_a_temporary_user_folder_and_runs(linux_zips: dict[str, Path], tmp_path: Path) -> None:
    """The zip's own SciPy, numba and llvmlite (the venv's are hidden) run the add-on."""
    report = install_in_bpy(linux_zips[THIS_PYTHON], tmp_path, "--bundled-only")
    assert report["install"] == ["FINISHED"] and report["enabled"], report
    assert report["panel"] == "TETRIG_PT_main" and report["preferences"] == "TETRIG_AP_preferences"
    expected = {"scipy": SCIPY_VERSION, "numba": NUMBA_LLVMLITE["linux-x64"][0],
                "llvmlite": NUMBA_LLVMLITE["linux-x64"][1]}
    for name, version in expected.items():
        assert report[name][0] == version and report[name][2], report  # from the extension's site-packages
    assert report["njit"][0] == 10.0, report  # a trivial @numba.njit function compiles and runs
    # TetRig's own kernel runs, compiled by the bundled numba into the extension's user folder
    assert report["solver"][0] == "Numba" and report["solver"][1].startswith("Numba"), report
    assert report["solver"][3].startswith(str(tmp_path / "user")), report
    # ... read from the zip's machine code, compiling none of the kernel's functions
    if machine_code.host_has_target():
        assert report["machine_code"][:2] == [True, []], report
        assert "machine code from the zip" in report["solver"][1], report
    assert report["build_cage"] == ["FINISHED"] and report["moved_z"] < -0.01, report
    assert report["setup_surface"] == ["FINISHED"] and report["surface_moved_z"] < -0.01, report
    # it went into the temporary user folder, not the machine's real config
    extensions = tmp_path / "user" / "extensions"
    assert (extensions / "user_default" / "tetrig" / "__init__.py").is_file()
    site_packages = extensions / ".local" / "lib" / f"python{THIS_PYTHON}" / "site-packages"
    installed = {p.name.split("-")[0] for p in site_packages.glob("*.dist-info")}
    assert installed == {"scipy", "numba", "llvmlite"}  # the zip's three wheels, no NumPy


def test_zip_for_the_other_python_is_refused_with_a_clear_message(linux_zips: dict[str, Path],
                                                                  tmp_path: Path) -> None:
    """Blender copies the add-on in but will not enable it, and says why (what a Blender 5.1 user
    saw with the cp311-only zip)."""
    report = install_in_bpy(linux_zips[OTHER_PYTHON], tmp_path)
    assert f"This Python version ({THIS_PYTHON}) isn't compatible with ({OTHER_PYTHON})" in report["install"], report
    assert not report["enabled"] and report["panel"] is None
    site_packages = tmp_path / "user" / "extensions" / ".local" / "lib" / f"python{THIS_PYTHON}" / "site-packages"
    assert not list(site_packages.glob("*.dist-info"))  # no wheel of the other Python went in
