"""Surface bodies against Blender's Soft Body on the same mesh, side by side in one run (issue 12:
"Benchmark Surface mode at 10k and 100k vertices against Blender's Soft Body").

Usage (``make bench-surface``; about 5 minutes, ``--quick`` about 3)::

    .venv/bin/python benchmarks/surface.py [--quick] [--out benchmarks/surface.md]

A closed UV sphere (Blender's Add > Mesh > UV Sphere, r = 0.5 m) at about 10k and 100k vertices
(128 × 80 → 10,114 vertices; 448 × 224 → 99,906), its lowest point 0.1 m above a ground at z = 0
(it lands near frame 5), 24 fps. Each part runs in its own process (the bpy module), so the Numba
threads of one do not steal the cores of the other; the processes run one after the other.
Frames timed on both sides: 3–12 at 10k; at 100k only 3–4 (before contact), as Soft Body takes
minutes to set up there and tens of seconds a frame. Frame 2 is listed apart: Soft Body's first
step carries a one-off cost. TetRig goes on to frame 49 (10k) and 9 (100k) for its sanity
figures (the enclosed volume with and without pressure after the landing).

1. TetRig: ``SurfaceBody.advance`` per frame (the compiled kernel, loaded before the first frame
   and stepped once from rest before timing), then the write-back of that frame: float32 [V, 3]
   offsets into the mesh's ``tetrig_offset`` point attribute (``mesh_io.write_attribute``, the
   ``foreach_set`` the cages' write-back uses), ``mesh.update()`` and the depsgraph
   evaluation through TetRig's Geometry Nodes offset modifier, timed apart and added up: the
   work of a frame of the frame handler (``runtime/surface/kind``), without its bookkeeping (it was
   written before that handler existed; the jelly demo times the handler through ``frame_set``). The add-on is registered from this checkout
   (``scripts/_addon_loader.py``, as batch.py does); the kernel's load after registration is
   reported as the cold start (a load from Numba's cache when an earlier run filled it).
2. Blender's Soft Body modifier on the same sphere above a plane with Collision physics at z = 0:
   ``scene.frame_set(f)`` + depsgraph evaluation of the object for frames 2..N+1 after frame 1 (the
   point cache starts empty: a fresh scene, nothing baked), as ``benchmarks/run.py`` times it.

Settings, and what is equivalent (written into the report as well):

* Gravity 9.81 m/s² and air damping 0.5 /s on both. Soft Body's clock runs in frames with its
  gravity scaled by 1/1000 (``sb_grav_force_scale``), so at 24 fps it falls at 0.58 g unless its
  ``speed`` is √1000/24 = 1.318; its media ``friction`` (force 0.01·friction·v on a point of
  ``mass`` 1) is set to 0.5 /s in the same clock. The free fall before contact is measured on
  both sides and printed (it agrees within a few millimetres).
* Springs: TetRig's structural (edges), shear (quad diagonals) and dihedral bending, in N/m and
  N·m (stretch 3e3, shear 3e2, bending 0.01, the jelly sphere of tests/test_engine_surface.py,
  10 kg/m²). Soft Body: edge springs (``use_edges``, pull = push = 0.5), quad diagonals
  (``use_stiff_quads``, shear 1.0), and in one 10k row bending springs (``bend`` 0.5; its default
  is 0), all its own dimensionless stiffnesses on a uniform point mass of 1: the materials are not
  the same, only the kinds of spring.
* Pressure: Soft Body has no gas (``ball_stiff`` is its self-collision balls' stiffness): the
  like-for-like TetRig row is pressure off; pressure on (1 atm) is measured besides.
* Steps: TetRig 10 substeps a frame (240 /s), 1 iteration. Soft Body: its default adaptive
  Heun steps (``use_auto_step``, 10 to 300 a frame, error limit 0.1), and also a fixed 10 steps a
  frame at 10k (``step_min = step_max = 10``, auto step off: its cost per step; it blows up).
* Collision: TetRig's ground plane at z = 0 (friction 0.5 / 0.6); Soft Body: the plane's Collision
  modifier (outer thickness 0.02 m, Soft Body's ``choke`` 3, ``fuzzy`` 1). Self-collision off on
  both.

Figures per frame are medians over the same frames on both sides. Not a test; never fails on speed.
"""

from __future__ import annotations

import os

# One BLAS thread before NumPy is imported, as benchmarks/run.py does (Blender's NumPy in practice).
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

FPS = 24
RADIUS = 0.5  # [m]
DROP = 0.1  # lowest vertex above the ground at frame 1 [m]
GRAVITY = 9.81  # [m/s²]
DAMPING = 0.5  # [1/s], both sides
AREAL_DENSITY = 10.0  # [kg/m²]
STRETCH, SHEAR, BENDING = 3e3, 3e2, 0.01  # [N/m], [N/m], [N·m]: the jelly sphere of the tests
PRESSURE = 101325.0  # [Pa], 1 atm
# Soft Body: time runs in frames, gravity scaled by 1/1000 (softbody.cc sb_grav_force_scale):
# this speed makes its fall 9.81 m/s² at 24 fps; its media friction is 0.01·friction·v per unit
# mass (sb_fric_force_scale) in that clock.
SB_SPEED = math.sqrt(1000.0) / FPS
SB_MASS = 1.0
SB_FRICTION = DAMPING * SB_MASS / (0.01 * SB_SPEED * FPS)
SB_BEND = 0.5
FREE_FALL_FRAME = 4  # before contact (the sphere lands near frame 5), or the window's end if sooner


@dataclasses.dataclass(frozen=True)
class Variant:
    """A Soft Body setup: its key in the report, its description, and what it changes."""

    key: str
    title: str
    bend: float
    fixed_steps: bool


SB_SPRINGS = Variant("springs", "edges + quad diagonals, adaptive steps", 0.0, False)
SB_BENDING = Variant("bending", f"edges + quad diagonals + bending ({SB_BEND}), adaptive steps", SB_BEND, False)
SB_FIXED = Variant("fixed", "edges + quad diagonals, fixed 10 steps/frame", 0.0, True)
VARIANTS = {v.key: v for v in (SB_SPRINGS, SB_BENDING, SB_FIXED)}


@dataclasses.dataclass(frozen=True)
class Size:
    label: str
    segments: int
    rings: int
    frames: int  # frames 2..frames+1: the window timed on both sides
    tetrig_frames: int  # TetRig goes on to here (its state at the end is the sanity check)
    variants: tuple[Variant, ...]


# Soft Body's adaptive steps multiply with bending springs (seconds a frame at 10k); at 100k its
# set-up alone takes minutes and a frame in free fall tens of seconds: there only the plain
# springs, frames 3-4 timed (before contact), to keep the run near 5 minutes. TetRig goes on past
# the landing for its sanity figures.
FULL = (Size("10k", 128, 80, 11, 48, (SB_SPRINGS, SB_BENDING, SB_FIXED)),
        Size("100k", 448, 224, 3, 8, (SB_SPRINGS,)))
QUICK = (Size("10k", 128, 80, 5, 8, (SB_SPRINGS, SB_FIXED)), Size("100k", 448, 224, 2, 2, (SB_SPRINGS,)))
PART_MARK = "SURFACE-BENCH-JSON:"


def fall_frame(size: Size) -> int:
    """The frame whose mean z both sides record in free fall."""
    return min(FREE_FALL_FRAME, size.frames + 1)


def log(message: str) -> None:
    print(message, flush=True)


def ms(seconds: float) -> float:
    return 1000.0 * seconds


def median_ms(values: list[float]) -> float:
    return ms(float(np.median(values))) if values else float("nan")


# ----------------------------------------------------------------------------- Blender scene

def sphere_scene(size: Size) -> Any:
    """A fresh scene at 24 fps with the UV sphere, its lowest point DROP above z = 0; the object."""
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    bpy.ops.mesh.primitive_uv_sphere_add(segments=size.segments, ring_count=size.rings, radius=RADIUS,
                                         location=(0.0, 0.0, RADIUS + DROP))
    return bpy.context.active_object


def world_positions(obj: Any, mesh: Any) -> np.ndarray:
    """float64 [V, 3] [m]: ``mesh``'s vertices through ``obj``'s world matrix."""
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    m = np.array(obj.matrix_world, dtype=np.float64)
    return co.reshape(-1, 3).astype(np.float64) @ m[:3, :3].T + m[:3, 3]


def triangles(mesh: Any) -> np.ndarray:
    """int32 [T, 3]: the mesh's loop triangles (outward, as Blender makes the sphere)."""
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    return tris.reshape(-1, 3)


def evaluated(obj: Any) -> Any:
    import bpy

    return obj.evaluated_get(bpy.context.evaluated_depsgraph_get())


def shape_figures(positions: np.ndarray, rest: np.ndarray, tris: np.ndarray) -> dict:
    """Enclosed volume / rest volume, lowest z [m] and mean z [m] of the sphere's vertices."""
    sys.path.insert(0, str(REPO))
    from tetrig_addon.solver.pressure import enclosed_volume  # the engine, no bpy

    return {"volume_ratio": enclosed_volume(positions, tris) / enclosed_volume(rest, tris),
            "lowest_z": float(positions[:, 2].min()), "mean_z": float(positions[:, 2].mean())}


# ----------------------------------------------------------------------------- parts (own processes)

def part_tetrig(sizes: tuple[Size, ...]) -> dict:
    """TetRig: register the add-on, wait for its kernels, then per size and pressure on/off the
    engine's advance and the write-back of every frame."""
    import bpy

    sys.path.insert(0, str(REPO / "scripts"))
    import _addon_loader

    t0 = time.perf_counter()
    package = _addon_loader.load_addon()  # registers: the kernels start loading in the background
    name = package.__name__
    backend = importlib.import_module(f"{name}.tetrig_addon.solver.backend")
    from_cache = backend.cache_filled()  # the marker exists before the load only if a run left it
    backend.warm_up()
    kernel_wait_s = time.perf_counter() - t0
    for other in ("tetrig_addon.jiggle.backend", "tetrig_addon.quality.backend"):
        importlib.import_module(f"{name}.{other}").warm_up()  # their loads would share the cores
    surface = importlib.import_module(f"{name}.tetrig_addon.surface")
    solver = importlib.import_module(f"{name}.tetrig_addon.solver")
    mesh_io = importlib.import_module(f"{name}.runtime.common.mesh_io")
    offset_modifier = importlib.import_module(f"{name}.runtime.common.offset_modifier")
    binding_store = importlib.import_module(f"{name}.runtime.common.binding_store")
    import numba

    out: dict[str, Any] = {"kernel_load_s": backend.load_seconds(), "kernel_wait_s": kernel_wait_s,
                           "from_cache": from_cache, "status": backend.status(),
                           "numba_threads": numba.get_num_threads(), "numba": numba.__version__,
                           "blender": bpy.app.version_string, "sizes": {}}
    settings = solver.SimSettings(ground_height=0.0, damping=DAMPING,
                                  gravity=(0.0, 0.0, -GRAVITY)).validated()
    frame_dt = 1.0 / FPS
    for size in sizes:
        obj = sphere_scene(size)
        mesh = obj.data
        rest = world_positions(obj, mesh)
        corners = np.empty(len(mesh.loops), dtype=np.int32)
        mesh.loops.foreach_get("vertex_index", corners)
        corner_edges = np.empty(len(mesh.loops), dtype=np.int32)
        mesh.loops.foreach_get("edge_index", corner_edges)
        face_sizes = np.empty(len(mesh.polygons), dtype=np.int32)
        mesh.polygons.foreach_get("loop_total", face_sizes)
        edges = np.empty(len(mesh.edges) * 2, dtype=np.int32)
        mesh.edges.foreach_get("vertices", edges)
        tris = triangles(mesh)
        t0 = time.perf_counter()
        body = surface.build_body(rest, corners, face_sizes, AREAL_DENSITY, edges=edges.reshape(-1, 2),
                                  corner_edges=corner_edges, name=obj.name)
        build_s = time.perf_counter() - t0
        model = body.model_for(body.rest_state().torn).model
        offset_modifier.ensure(obj)
        mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", np.zeros_like(rest))
        evaluated(obj)
        to_local = np.linalg.inv(np.array(obj.matrix_world, dtype=np.float64))[:3, :3]
        row: dict[str, Any] = {"vertices": len(mesh.vertices), "edges": len(mesh.edges),
                               "faces": len(mesh.polygons), "triangles": int(tris.shape[0]),
                               "springs": int(model.edges.shape[0]), "hinges": int(model.hinges.shape[0]),
                               "build_s": build_s, "substeps": settings.substeps,
                               "iterations": settings.iterations}
        for label, pressure in (("pressure off", 0.0), ("pressure on", PRESSURE)):
            material = solver.SurfaceMaterial(stretch=STRETCH, shear=SHEAR, bending=BENDING, pressure=pressure)
            t0 = time.perf_counter()
            body.advance(body.rest_state(), settings, material, frame_dt)  # the first call, not timed
            first_s = time.perf_counter() - t0
            state = body.rest_state()
            steps, writes, fall, window = [], [], None, {}
            for frame in range(2, size.tetrig_frames + 2):
                t0 = time.perf_counter()
                state = body.advance(state, settings, material, frame_dt)
                t1 = time.perf_counter()
                offsets = (body.vertex_positions(state) - rest) @ to_local.T
                mesh_io.write_attribute(mesh, binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR", offsets)
                mesh.update()
                shown = evaluated(obj)
                t2 = time.perf_counter()
                steps.append(t1 - t0)
                writes.append(t2 - t1)
                if frame == fall_frame(size):
                    fall = float(body.vertex_positions(state)[:, 2].mean())
                if frame == size.frames + 1:  # the end of Soft Body's frames
                    window = shape_figures(body.vertex_positions(state), rest, tris)
            # what Blender shows after the last frame: the evaluated mesh, through the modifier
            shown_positions = world_positions(obj, shown.data)
            row[label] = {"step": steps, "write": writes, "first_s": first_s, "fall_mean_z": fall, "window": window,
                          "finite": bool(np.isfinite(state.positions).all()),
                          "shown_matches": float(np.abs(shown_positions - body.vertex_positions(state)).max()),
                          **shape_figures(body.vertex_positions(state), rest, tris)}
            log(f"  TetRig {size.label} {label}: advance {median_ms(steps):.1f} ms, write-back "
                f"{median_ms(writes):.1f} ms, volume {row[label]['volume_ratio']:.4f}")
        out["sizes"][size.label] = row
    return out


def part_softbody(size: Size, variant: Variant) -> dict:
    """Blender's Soft Body on the sphere above a Collision plane; the add-on is not loaded."""
    import bpy

    obj = sphere_scene(size)
    rest = world_positions(obj, obj.data)
    tris = triangles(obj.data)
    bpy.ops.mesh.primitive_plane_add(size=4.0, location=(0.0, 0.0, 0.0))
    plane = bpy.context.active_object
    plane.modifiers.new("Collision", "COLLISION")
    modifier = obj.modifiers.new("Softbody", "SOFT_BODY")
    sb = obj.soft_body
    sb.use_goal = False
    sb.use_edges, sb.pull, sb.push = True, 0.5, 0.5
    sb.use_stiff_quads, sb.shear = True, 1.0
    sb.bend = variant.bend
    sb.mass, sb.speed, sb.friction = SB_MASS, SB_SPEED, SB_FRICTION
    sb.use_self_collision = False
    if variant.fixed_steps:
        sb.use_auto_step = False
        sb.step_min = sb.step_max = 10
    settings = {k: getattr(sb, k) for k in ("pull", "push", "damping", "shear", "bend", "mass", "speed",
                                            "friction", "step_min", "step_max", "use_auto_step",
                                            "error_threshold", "choke", "fuzzy")}
    settings["collision_thickness_outer"] = plane.collision.thickness_outer
    scene = bpy.context.scene
    cache = modifier.point_cache
    cache.frame_start, cache.frame_end = 1, size.frames + 1
    t0 = time.perf_counter()
    scene.frame_set(1)
    evaluated(obj)
    start_s = time.perf_counter() - t0
    times, fall = [], None
    for frame in range(2, size.frames + 2):
        t0 = time.perf_counter()
        scene.frame_set(frame)
        shown = evaluated(obj)
        times.append(time.perf_counter() - t0)
        if frame == fall_frame(size):
            fall = float(world_positions(obj, shown.data)[:, 2].mean())
    positions = world_positions(obj, evaluated(obj).data)
    return {"frames": times, "start_s": start_s, "fall_mean_z": fall, "settings": settings, "vertices": len(obj.data.vertices),
            "finite": bool(np.isfinite(positions).all()), "threads": scene.render.threads,
            **shape_figures(positions, rest, tris)}


def run_part(args: list[str]) -> dict:
    """One part in a fresh process; its JSON back."""
    command = [sys.executable, str(Path(__file__).resolve()), *args]
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith(PART_MARK):
            return json.loads(line[len(PART_MARK):])
        if line.startswith("  "):
            log(line)
    print(proc.stdout[-4000:], flush=True)
    raise RuntimeError(f"benchmark part {args} failed (exit status {proc.returncode})")


# ----------------------------------------------------------------------------- report

def fmt(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None or value != value else f"{value:,.{digits}f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
            + ["| " + " | ".join(r) + " |" for r in rows])


def free_fall_z(frame: int) -> float:
    """Mean z [m] of the sphere falling from rest with damping c: z0 − g/c·(t − (1 − e^−ct)/c)."""
    t = (frame - 1) / FPS
    c = DAMPING
    return RADIUS + DROP - GRAVITY / c * (t - (1.0 - math.exp(-c * t)) / c)


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def report(tetrig: dict, softbody: dict[str, dict], sizes: tuple[Size, ...], total_s: float, load: str,
           quick: bool) -> str:
    lines = [f"# Surface bodies vs Blender's Soft Body (`benchmarks/surface.py`{', --quick' if quick else ''})", "",
             "Written by `benchmarks/surface.py` (`make bench-surface`). One run, each part in its own "
             "process, one after the other; absolute times depend on the machine and its load (other "
             "work shares it), the ratios are what counts.", ""]
    first_sb = next(iter(softbody.values()))
    cold = ("from the Numba cache an earlier run filled" if tetrig["from_cache"]
            else "compiled: the cache was empty")
    lines += table(["setting", "value"], [
        ["machine", f"{platform.machine()}, {os.cpu_count()} cores (shared with other work)"],
        ["Python / NumPy / Numba", f"{platform.python_version()} / {np.__version__} / {tetrig['numba']}"],
        ["Blender (bpy module)", tetrig["blender"]],
        ["TetRig backend", tetrig["status"]],
        ["Numba threads / Blender threads (Soft Body's force loop)",
         f"{tetrig['numba_threads']} / {first_sb['threads']}"],
        ["cold start: kernel load after registering the add-on",
         f"{fmt(tetrig['kernel_load_s'], 2)} s ({cold}); registration to kernel ready "
         f"{fmt(tetrig['kernel_wait_s'], 2)} s"],
        ["load average at the end (1, 5, 15 min)", load],
        ["total runtime", f"{total_s:.0f} s"]])
    lines.append("")

    rows = []
    for size in sizes:
        tr = tetrig["sizes"][size.label]
        n = size.frames
        off, on = tr["pressure off"], tr["pressure on"]
        timed = slice(1, n)  # frames 3..n+1: frame 2 is Soft Body's first step, listed apart
        window = f"3–{n + 1}"

        def tetrig_row(r: dict, name: str, ratio: str) -> list[str]:
            step, write = median_ms(r["step"][timed]), median_ms(r["write"][timed])
            return ["", "", name, f"{fmt(step)} + {fmt(write)} = {fmt(step + write)}", ratio, "",
                    fmt(ms(r["step"][0] + r["write"][0])), f"{fmt(ms(tr['build_s']))} (build_body)", ""]

        off_ms = median_ms(off["step"][timed]) + median_ms(off["write"][timed])
        on_ms = median_ms(on["step"][timed]) + median_ms(on["write"][timed])
        rows.append(tetrig_row(off, "TetRig, pressure off (advance + write-back)", "1.0×"))
        rows[-1][:2] = [f"{tr['vertices']:,}", window]
        rows.append(tetrig_row(on, "TetRig, pressure on (advance + write-back)", fmt(on_ms / off_ms, 2) + "×"))
        for variant in size.variants:
            sb = softbody[f"{size.label} {variant.key}"]
            sb_ms = median_ms(sb["frames"][timed])
            note = "" if sb["finite"] else " (blew up: NaN positions)"
            rows.append(["", "", f"Soft Body, {variant.title}{note}", fmt(sb_ms), fmt(sb_ms / off_ms) + "×",
                         fmt(sb_ms / on_ms) + "×", fmt(ms(sb["frames"][0]), 0), fmt(ms(sb["start_s"]), 0),
                         " / ".join(fmt(ms(t), 0) for t in sb["frames"][timed])])
    lines += ["## Per frame, TetRig vs Soft Body on the same sphere", ""]
    lines += table(["vertices", "frames timed", "run", "ms/frame (median)", "× TetRig pressure off",
                    "× TetRig pressure on", "frame 2 ms (first step)", "set-up ms (frame 1 / build)",
                    "Soft Body each timed frame ms"], rows)
    lines += ["", "Medians over the same frames on both sides (the sphere lands near frame 5; at 100k the "
              "timed frames are before contact, where Soft Body is cheapest). TetRig = "
              "`SurfaceBody.advance` + the write-back of its frame (float32 offsets into the "
              "`tetrig_offset` point attribute by `foreach_set`, `mesh.update()`, depsgraph evaluation "
              "through TetRig's Geometry Nodes offset modifier), timed apart and added: a frame handler's "
              "work without its bookkeeping (no `frame_set` on TetRig's side). Soft "
              "Body = `frame_set` + depsgraph evaluation. Set-up is not in the medians: Soft Body's frame 1 "
              "(the start frame) and frame 2 both carry a one-off cost (a fresh Soft Body's set-up; at 100k "
              "over a minute each), as does TetRig's `build_body` (its first `advance`, "
              "untimed, comes before frame 2). Soft Body has no gas pressure: pressure off is the "
              "like-for-like TetRig row.", ""]

    rows = []
    for size in sizes:
        tr = tetrig["sizes"][size.label]
        for label in ("pressure off", "pressure on"):
            r = tr[label]
            rows.append([f"{tr['vertices']:,}", label, f"2–{size.tetrig_frames + 1}", fmt(median_ms(r["step"])),
                         fmt(ms(min(r["step"]))), fmt(median_ms(r["write"]), 2), fmt(ms(r["first_s"])),
                         f"{r['volume_ratio']:.4f}", fmt(1000 * r["lowest_z"], 1), fmt(1000 * r["mean_z"], 1),
                         "yes" if r["finite"] else "NO", f"{r['shown_matches']:.1e}"])
    lines += ["## TetRig alone: every frame it ran, and its state at the last one", ""]
    lines += table(["vertices", "gas", "frames", "advance median ms", "advance min ms", "write-back median ms",
                    "first advance ms (untimed warm-up)", "volume / rest volume", "lowest z mm", "mean z mm",
                    "finite", "shown − simulated max m"], rows)
    lines += ["", f"Pressure on = {PRESSURE:.0f} Pa (1 atm). 'shown − simulated': Blender's evaluated mesh "
              "(through the offset modifier) against the engine's positions at the last frame (float32).", ""]
    for size in sizes:
        tr = tetrig["sizes"][size.label]
        for label in ("pressure off", "pressure on"):
            r = tr[label]
            if r["mean_z"] > RADIUS + DROP:  # above where it fell from: it gained energy
                lines += [f"**Not a working simulation at the end: {tr['vertices']:,} vertices, {label}.** "
                          f"At frame {size.tetrig_frames + 1} the sphere is in the air (mean z "
                          f"{fmt(1000 * r['mean_z'], 0)} mm, above the {1000 * (RADIUS + DROP):.0f} mm it fell "
                          "from): it gained energy resting on the ground, an engine defect to fix. The timed "
                          f"frames 3–{size.frames + 1} come before it (at frame {size.frames + 1}: volume "
                          f"{r['window']['volume_ratio']:.4f}, mean z {fmt(1000 * r['window']['mean_z'], 0)} mm, "
                          "on the ground).", ""]
            if r["volume_ratio"] < 0.0:
                lines += [f"{tr['vertices']:,} vertices, {label}: a negative volume at the end: the shell has "
                          "folded flat and through itself (no self-collision on either side).", ""]

    rows = []
    for size in sizes:
        tr = tetrig["sizes"][size.label]
        rows.append([f"{tr['vertices']:,}", f"{size.segments} × {size.rings}", f"{tr['edges']:,}",
                     f"{tr['faces']:,}", f"{tr['triangles']:,}", f"{tr['springs']:,}", f"{tr['hinges']:,}",
                     fmt(tr["build_s"], 2), f"{tr['substeps']} × {tr['iterations']}"])
    lines += ["## Meshes and TetRig's model", ""]
    lines += table(["vertices", "segments × rings", "edges", "faces", "triangles", "springs (edges + diagonals)",
                    "hinges", "build_body s", "substeps × iterations"], rows)
    lines += ["", "UV spheres from `bpy.ops.mesh.primitive_uv_sphere_add` (r = 0.5 m; quads, triangle fans "
              "at the poles), the same call on both sides.", ""]

    rows = []
    for size in sizes:
        tr = tetrig["sizes"][size.label]
        fall = f"frame {fall_frame(size)}: {fmt(1000 * free_fall_z(fall_frame(size)), 1)}"
        for label in ("pressure off", "pressure on"):
            r, w = tr[label], tr[label]["window"]
            rows.append([f"{tr['vertices']:,}", f"TetRig, {label}", fall, fmt(1000 * r["fall_mean_z"], 1),
                         f"{w['volume_ratio']:.4f}", fmt(1000 * w["lowest_z"], 1), fmt(1000 * w["mean_z"], 1),
                         "yes" if r["finite"] else "NO"])
        for variant in size.variants:
            sb = softbody[f"{size.label} {variant.key}"]
            rows.append([f"{sb['vertices']:,}", f"Soft Body, {variant.title}", fall, fmt(1000 * sb["fall_mean_z"], 1),
                         f"{sb['volume_ratio']:.4f}", fmt(1000 * sb["lowest_z"], 1), fmt(1000 * sb["mean_z"], 1),
                         "yes" if sb["finite"] else "NO"])
    lines += [f"## The same scene on both sides: the fall, and the shape at frame {sizes[0].frames + 1} "
              f"(10k) / {sizes[-1].frames + 1} (100k)", ""]
    lines += table(["vertices", "run", "damped free fall: mean z mm", "measured mean z mm",
                    "volume / rest volume", "lowest z mm", "mean z mm", "finite"], rows)
    lines += ["", f"Both start at rest, the lowest point {1000 * DROP:.0f} mm above the ground (mean z "
              f"{1000 * (RADIUS + DROP):.0f} mm); the damped free fall is z₀ − g/c·(t − (1 − e^−ct)/c), "
              f"g = {GRAVITY}, c = {DAMPING} /s. With speed {SB_SPEED:.4f} and media friction "
              f"{SB_FRICTION:.3f} (mass {SB_MASS:g}) Soft Body falls as TetRig does (with its defaults, 1 "
              "and 0.5, it falls at 0.58 g at 24 fps). Soft Body stops about its Collision thickness "
              "above the plane. A shell of springs without gas does not hold its volume: Soft Body's "
              "sphere folds up within a few frames of landing, TetRig's (pressure off) later (its last "
              "frame is in the table before); with pressure TetRig keeps it.", ""]

    sb_settings = first_sb["settings"]
    lines += ["## What is equivalent and what is not", "",
              "* Same: the mesh (the same `primitive_uv_sphere_add` call), the start (at rest, lowest point "
              f"{1000 * DROP:.0f} mm above z = 0), 24 fps, gravity {GRAVITY} m/s² and damping {DAMPING} /s of "
              "the whole motion (checked by the fall above), a ground plane at z = 0, goals and "
              "self-collision off, springs along the edges and across the quads' diagonals.",
              f"* Not the same material: TetRig's springs are in physical units (stretch {STRETCH:g} N/m, "
              f"shear {SHEAR:g} N/m, bending {BENDING:g} N·m, {AREAL_DENSITY:g} kg/m², mass by area at each "
              "vertex: the same body at any resolution); Soft Body's are its own dimensionless stiffnesses "
              f"(pull {sb_settings['pull']:g}, push {sb_settings['push']:g}, shear {sb_settings['shear']:g}, "
              f"spring damping {sb_settings['damping']:g}) on a uniform point mass of {sb_settings['mass']:g}, "
              "so it is a different material at each resolution.",
              f"* Bending: TetRig's is a dihedral angle per edge, always on here. Soft Body's is springs to "
              f"second neighbours (`bend`): on in one 10k row ({SB_BEND}), off in the others (Soft Body's "
              "default), since with it the adaptive steps multiply and 100k would take minutes a frame.",
              "* Not the same integrator: TetRig takes 10 implicit substeps a frame (block descent, 1 "
              "iteration), whatever happens. Soft Body takes explicit Heun steps, by default adaptive "
              f"({sb_settings['step_min']}–{sb_settings['step_max']} a frame, error limit "
              f"{sb_settings['error_threshold']:.2g}: what a user gets, and its cost grows on contact); the "
              "fixed row forces 10 a frame, TetRig's count.",
              "* Pressure: Soft Body has no gas (`ball_stiff` is the stiffness of its self-collision "
              "balls); TetRig's pressure-on rows have no Soft Body counterpart.",
              "* Contact: TetRig's ground is an exact plane with Coulomb friction (0.5 / 0.6); Soft Body "
              f"collides with the plane's Collision modifier (outer thickness "
              f"{sb_settings['collision_thickness_outer']:.2g} m, choke {sb_settings['choke']}, fuzzy "
              f"{sb_settings['fuzzy']}) through a penalty force.",
              "* Timing: Soft Body through `frame_set` + evaluation (its C code, point cache, modifier "
              "stack); TetRig as engine step + write-back + evaluation through its offset modifier, in the "
              "bpy module but outside `frame_set` (the frame handler's work without its bookkeeping).", ""]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer frames (about a minute)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "surface.md")
    parser.add_argument("--part", choices=("tetrig", "softbody"), help=argparse.SUPPRESS)
    parser.add_argument("--size", help=argparse.SUPPRESS)
    parser.add_argument("--variant", choices=tuple(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--render", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.render is not None:  # the report again from a run's raw figures
        data = json.loads(args.render.read_text())
        text = report(data["tetrig"], data["softbody"], sizes, data["total_s"], data["load"], args.quick)
        args.out.write_text(text)
        print(text, flush=True)
        return 0
    if args.part == "tetrig":
        print(PART_MARK + json.dumps(part_tetrig(sizes)), flush=True)
        return 0
    if args.part == "softbody":
        size = next(s for s in sizes if s.label == args.size)
        print(PART_MARK + json.dumps(part_softbody(size, VARIANTS[args.variant])), flush=True)
        return 0

    t_start = time.perf_counter()
    quick = ["--quick"] if args.quick else []
    log("TetRig: registering the add-on, waiting for its kernels, stepping the spheres")
    tetrig = run_part(["--part", "tetrig", *quick])
    softbody: dict[str, dict] = {}
    for size in sizes:
        for variant in size.variants:
            log(f"Soft Body {size.label}, {variant.title}, {size.frames} frames")
            softbody[f"{size.label} {variant.key}"] = result = run_part(
                ["--part", "softbody", "--size", size.label, "--variant", variant.key, *quick])
            log(f"  {median_ms(result['frames']):.1f} ms/frame (frames: "
                f"{', '.join(f'{ms(t):.0f}' for t in result['frames'])}; start frame {ms(result['start_s']):.0f} ms), "
                f"volume {result['volume_ratio']:.4f}")
    raw = Path(tempfile.gettempdir()) / "tetrig-surface-bench.json"  # to render again: --render
    total_s, load = time.perf_counter() - t_start, load_average()
    raw.write_text(json.dumps({"tetrig": tetrig, "softbody": softbody, "total_s": total_s, "load": load}))
    text = report(tetrig, softbody, sizes, total_s, load, args.quick)
    args.out.write_text(text)
    print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
