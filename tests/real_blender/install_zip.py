"""Install a TetRig extension zip in Blender and report what works (run inside Blender: the real
one, ``make real-blender-check``, or the bpy module, ``tests/test_packaging.py``).

    run.sh -b --factory-startup --python tests/real_blender/install_zip.py -- ZIP OUT.json [--bundled-only]

Run with BLENDER_USER_RESOURCES set to a temporary folder: the zip goes into its user extensions,
never the machine's real config. Writes OUT.json: whether the install finished and the add-on is
enabled (or the error Blender gave), where SciPy, numba and llvmlite were imported from, whether a
trivial ``@numba.njit`` function compiles and runs, which solver TetRig runs (its compiled kernel,
where its cache is, and whether it came from the zip's machine code), and whether a Suzanne dropped on the ground falls. With ``--bundled-only`` those three packages may come from the extension's own
site-packages only: a system SciPy (Debian's Blender has one) or a venv's (the bpy module puts the
extensions' site-packages after the venv's) is then not used.
"""

import json
import os
import sys
import time
import traceback
from importlib.machinery import PathFinder

import bpy

args = sys.argv[sys.argv.index("--") + 1:]
zip_path, out_path = args[0], args[1]
bundled_only = "--bundled-only" in args
BUNDLED = ("scipy", "numba", "llvmlite")
site_packages = os.path.join(os.environ["BLENDER_USER_RESOURCES"], "extensions", ".local", "lib",
                             "python%d.%d" % sys.version_info[:2], "site-packages")


class BundledOnly:
    """scipy, numba and llvmlite from the extension's site-packages, or not at all."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in BUNDLED:
            return None
        spec = PathFinder.find_spec(name, [site_packages])
        if spec is None:
            raise ModuleNotFoundError(f"No module named {name!r} in {site_packages}", name=name)
        return spec


if bundled_only:
    sys.meta_path.insert(0, BundledOnly)

result = {"blender": bpy.app.version_string, "python": "%d.%d.%d" % sys.version_info[:3],
          "bundled_only": bundled_only}
start = install_start = time.perf_counter()
try:
    result["install"] = sorted(bpy.ops.extensions.package_install_files(
        filepath=zip_path, repo="user_default", enable_on_install=True))
except RuntimeError as ex:
    result["install"] = f"error: {ex}".strip()
result["install_s"] = round(time.perf_counter() - start, 2)
result["enabled"] = hasattr(bpy.types.Object, "tetrig")
result["panel"] = ("TETRIG_PT_main" if hasattr(bpy.types, "TETRIG_PT_main")
                   else "TETRIG_PT_missing_dependencies" if hasattr(bpy.types, "TETRIG_PT_missing_dependencies")
                   else None)

import numpy as np  # noqa: E402

result["numpy"] = [np.__version__, np.__file__]
for name in BUNDLED:
    try:
        module = __import__(name)
        result[name] = [module.__version__, module.__file__, module.__file__.startswith(site_packages + os.sep)]
    except Exception as ex:  # noqa: BLE001 -- reported, not raised
        result[name] = f"{type(ex).__name__}: {ex}"

try:
    import numba

    start = time.perf_counter()

    @numba.njit(cache=False)
    def total(values):
        s = 0.0
        for v in values:
            s += v
        return s

    result["njit"] = [float(total(np.arange(5.0))), round(time.perf_counter() - start, 2)]
except Exception as ex:  # noqa: BLE001
    result["njit"] = f"{type(ex).__name__}: {ex}"

if result["enabled"]:
    prefs = bpy.context.preferences.addons["bl_ext.user_default.tetrig"].preferences
    result["preferences"] = type(prefs).__name__
    try:  # the add-on's own solver: compiled with the bundled numba, cached in its user folder
        import importlib

        backend = importlib.import_module("bl_ext.user_default.tetrig.tetrig_addon.solver.backend")
        start = time.perf_counter()
        backend.warm_up()
        result["solver"] = [backend.name(), backend.status(), round(time.perf_counter() - start, 2),
                            os.environ.get("NUMBA_CACHE_DIR", "")]
        # the zip's machine code (Linux zips): whether it was used, the kernel's functions Numba
        # compiled rather than read (none when it was), and the time from the install to the kernel
        kernel = backend.kernel()
        compiled = sorted(name for name, value in vars(kernel).items() if hasattr(value, "stats")
                          and hasattr(value, "py_func") and sum(value.stats.cache_misses.values()))
        result["machine_code"] = [backend.uses_shipped_code(), compiled, round(time.perf_counter() - install_start, 2)]
    except Exception:  # noqa: BLE001
        result["solver"] = traceback.format_exc()
    try:
        bpy.ops.mesh.primitive_monkey_add(location=(0, 0, 1))
        obj = bpy.context.active_object
        obj.tetrig.use_ground = True
        result["build_cage"] = sorted(bpy.ops.tetrig.build_cage())
        bpy.context.scene.frame_set(10)
        dg = bpy.context.evaluated_depsgraph_get()
        result["moved_z"] = obj.evaluated_get(dg).data.vertices[0].co.z - obj.data.vertices[0].co.z
    except Exception:  # noqa: BLE001
        result["build_cage"] = traceback.format_exc()
    try:  # a Surface body with pressure from the installed zip: its engine, runtime and tear display
        bpy.context.scene.frame_set(1)
        bpy.ops.mesh.primitive_uv_sphere_add(segments=16, ring_count=8, radius=0.5, location=(3, 0, 1))
        ball = bpy.context.active_object
        ball.tetrig.body_type, ball.tetrig.pressure, ball.tetrig.use_ground = "SURFACE", 1e5, True
        result["setup_surface"] = sorted(bpy.ops.tetrig.setup_surface())
        bpy.context.scene.frame_set(10)
        dg = bpy.context.evaluated_depsgraph_get()
        result["surface_moved_z"] = ball.evaluated_get(dg).data.vertices[0].co.z - ball.data.vertices[0].co.z
    except Exception:  # noqa: BLE001
        result["setup_surface"] = traceback.format_exc()

with open(out_path, "w") as fh:
    json.dump(result, fh, indent=1)
print("install_zip:", json.dumps(result))
