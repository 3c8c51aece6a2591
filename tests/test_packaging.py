"""Packaging tests: the manifest, the linux-x64 extension zip, and Blender's `validate`.

These use only the manifest, `scripts/build_extension.py` and Blender's extension tool (inside the
`bpy` wheel); the build downloads the linux-x64 SciPy wheel into ./wheels/ once (pip, from PyPI).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
MANIFEST_PATH = REPO_ROOT / "blender_manifest.toml"
BUILD_SCRIPT = REPO_ROOT / "scripts" / "build_extension.py"

PLATFORMS = ("linux-x64", "windows-x64", "macos-arm64", "macos-x64")
SCIPY_PREFIX = "scipy-1.15.3-cp311-cp311-"
# A subprocess that downloads a 38 MB wheel may take a while on a slow link, but not forever.
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


def load_build_script() -> ModuleType:
    """Import scripts/build_extension.py as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("build_extension", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def linux_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Build the linux-x64 zip once for this module, the way a developer does."""
    out_dir = tmp_path_factory.mktemp("dist")
    proc = subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), "--platform", "linux-x64", "--output-dir", str(out_dir)],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S,
    )
    assert proc.returncode == 0, f"build failed:\n{proc.stdout}\n{proc.stderr}"
    printed = [Path(line) for line in proc.stdout.splitlines() if line.strip()]
    assert printed == [out_dir / "tetrig-0.1.0-linux_x64.zip"], proc.stdout
    assert printed[0].is_file()
    assert sorted(p.name for p in out_dir.iterdir()) == ["tetrig-0.1.0-linux_x64.zip"]
    return printed[0]


def test_manifest_lists_one_cp311_scipy_wheel_per_platform_and_no_numpy() -> None:
    manifest = load_manifest()
    assert manifest["schema_version"] == "1.0.0"
    assert manifest["id"] == "tetrig"
    assert manifest["type"] == "add-on"
    assert manifest["blender_version_min"] == "4.2.0"
    assert sorted(manifest["platforms"]) == sorted(PLATFORMS)

    wheels = manifest["wheels"]
    names = [Path(w).name for w in wheels]
    assert len(wheels) == 4
    assert all(w.startswith("./wheels/") for w in wheels), wheels
    assert all(n.startswith(SCIPY_PREFIX) and n.endswith(".whl") for n in names), names
    assert not [n for n in names if n.lower().startswith("numpy")]
    assert sorted(platform_of_wheel(n) for n in names) == sorted(PLATFORMS)


def test_manifest_build_excludes_development_files() -> None:
    patterns = load_manifest()["build"]["paths_exclude_pattern"]
    for pattern in ("/tests/", "/benchmarks/", "/.ci/", "/docs/", "/Makefile",
                    "/scripts/build_extension.py", "requirements*.txt", "__pycache__/"):
        assert pattern in patterns


def test_pip_download_args_name_the_exact_wheel() -> None:
    build_extension = load_build_script()
    name = SCIPY_PREFIX + "manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    args = build_extension.pip_download_args(name)
    assert args[:3] == ["download", "--only-binary=:all:", "--no-deps"]
    assert args[args.index("--python-version") + 1] == "3.11"
    assert args[args.index("--abi") + 1] == "cp311"
    assert [args[i + 1] for i, a in enumerate(args) if a == "--platform"] == [
        "manylinux_2_17_x86_64", "manylinux2014_x86_64"]
    assert args[-1] == "scipy==1.15.3"
    assert build_extension.wheel_platforms(name) == {"linux-x64"}


def test_linux_zip_contents(linux_zip: Path) -> None:
    linux_wheel = next(w for w in load_manifest()["wheels"] if platform_of_wheel(Path(w).name) == "linux-x64")
    with zipfile.ZipFile(linux_zip) as zf:
        assert zf.testzip() is None
        names = zf.namelist()
        packaged_manifest = tomllib.loads(zf.read("blender_manifest.toml").decode("utf-8"))

    assert "blender_manifest.toml" in names
    assert "__init__.py" in names
    assert "tetrig_addon/__init__.py" in names
    assert any(n.startswith("tetrig_addon/") and n.endswith(".py") for n in names)

    assert [n for n in names if n.endswith(".whl")] == [linux_wheel.removeprefix("./")]

    forbidden_prefixes = ("tests/", "benchmarks/", "docs/", ".ci/", ".git", ".venv", "dist/",
                          "scripts/build_extension.py")
    assert not [n for n in names if n.startswith(forbidden_prefixes)]
    assert not [n for n in names if "__pycache__/" in n or n.endswith((".pyc", ".blend1"))]
    # the batch script ships (it runs the installed extension headless); the dev scripts do not
    assert "scripts/batch.py" in names
    assert "scripts/demo.py" not in names and "scripts/build_extension.py" not in names
    for top_level in ("Makefile", "mypy.ini", "requirements-dev.txt", "requirements-typecheck.txt"):
        assert top_level not in names

    generated = packaged_manifest["build"]["generated"]
    assert generated["platforms"] == ["linux-x64"]
    assert generated["wheels"] == [linux_wheel]


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


def test_validate_linux_zip(linux_zip: Path) -> None:
    proc = run_validate(linux_zip)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success" in proc.stdout


INSTALL_SCRIPT = r'''
import sys, bpy
zip_path = sys.argv[-1]
bpy.ops.extensions.package_install_files(filepath=zip_path, repo="user_default", enable_on_install=True)
import addon_utils
assert "bl_ext.user_default.tetrig" in {m.__name__ for m in addon_utils.modules()}, "not installed"
assert hasattr(bpy.types.Object, "tetrig"), "add-on not enabled"
bpy.ops.mesh.primitive_monkey_add(location=(0, 0, 1))
obj = bpy.context.active_object
obj.tetrig.use_ground = True
assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
bpy.context.scene.frame_set(10)
dg = bpy.context.evaluated_depsgraph_get()
moved = obj.evaluated_get(dg).data.vertices[0].co.z - obj.data.vertices[0].co.z
assert moved < -0.01, moved
assert bpy.ops.tetrig.remove() == {"FINISHED"}
print("INSTALLED-OK", moved)
'''


def test_zip_installs_into_a_temporary_user_folder_and_runs(linux_zip: Path, tmp_path: Path) -> None:
    pytest.importorskip("bpy")
    import os
    env = dict(os.environ, BLENDER_USER_RESOURCES=str(tmp_path / "user"))
    script = tmp_path / "install.py"
    script.write_text(INSTALL_SCRIPT)
    code = ("import runpy, sys; sys.argv = [sys.argv[1], sys.argv[2]]; "
            "import bpy; runpy.run_path(sys.argv[0], run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code, str(script), str(linux_zip)], env=env,
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0 and "INSTALLED-OK" in proc.stdout, proc.stdout + proc.stderr
    # it went into the temporary user folder, not the machine's real config
    assert (tmp_path / "user" / "extensions" / "user_default" / "tetrig" / "__init__.py").is_file()
