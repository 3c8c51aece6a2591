"""TetRig benchmarks: per-frame cost against Blender's Soft Body, write-back against the floor,
solver scaling with cage size, cage build + bind time, peak memory, and the issue-5 targets.

Usage (``make bench`` installs ``benchmarks/requirements.txt`` for the plot, then runs this)::

    .venv/bin/python benchmarks/run.py [--quick] [--rev REV] [--mesh PATH] [--out DIR]

``--quick``: 8 frames instead of 24 and fewer repeats (about 1 minute; the full run about 2 to 3).
``--rev REV``: benchmark the add-on as committed at REV instead of the working tree (which is
copied at the start, so that files edited during the run do not mix two versions).

Prints a table and writes ``results.md`` and (when matplotlib is importable) ``results.png`` into
DIR (default: this folder). Everything is measured side by side in one run, so the ratios hold on
any machine; absolute times depend on the machine and on whatever else runs on it. The run never
fails on speed: a missed target is reported as FAIL and the exit status is still 0 (it is non-zero
only when the benchmark itself cannot run, e.g. the mesh is missing).

What is measured (stanford-bunny.obj imported with Blender's OBJ importer, 34,834 vertices and
69k triangles, raised so its lowest point is 0.3 m above z = 0; 24 fps; frames 2..N+1 after
frame 1):

1. Per frame in Blender: ``scene.frame_set(f)`` (the add-on's frame handler runs inside it) plus
   ``context.evaluated_depsgraph_get()`` and ``obj.evaluated_get(depsgraph)``, for TetRig (default
   settings, Ground on at z = 0) and for Blender's Soft Body modifier on a fresh import of the same
   mesh (defaults, goal off, nothing to collide with), each alone in its scene.
2. Write-back: ``runtime.simulation.write_back`` + depsgraph evaluation, against the floor: the
   same number of positions written with ``foreach_set`` into the ``position`` attribute +
   ``mesh.update()`` + evaluation, on a plain import of the mesh without modifiers (also shown:
   ``vertices.foreach_set("co")``, a slower path to the same data, and a float32 attribute that
   moves nothing).
3. ``solver.step`` alone (no Blender) on cages of about 1k, 4k, 16k and 64k tets built from the
   bunny, 10 substeps: with the Ground and the bunny's vertices as contacts (as in 1), and without.
4. ``build_cage`` + ``bind`` (engine) on the bunny and on the bunny midpoint-subdivided once.
5. Peak memory: tracemalloc peak for the engine parts (NumPy reports its buffers to tracemalloc;
   Qhull's own C allocations are not seen); growth of the process's peak RSS (VmHWM, reset
   through /proc/self/clear_refs before each part) for the Blender parts, each of which runs in
   its own process (``--part``, internal).
6. The issue-5 targets, PASS/FAIL.

It also profiles one frame of ``solver.step`` (cProfile) and counts its NumPy operations.

The BLAS thread count is pinned with OPENBLAS_NUM_THREADS=1 before NumPy is imported (the venv has
NumPy's and SciPy's OpenBLAS; Blender runs NumPy single-threaded in practice). OPENBLAS_CORETYPE
is left as the machine sets it.
"""

from __future__ import annotations

import os

# Before anything imports NumPy (bpy does): one BLAS thread, as Blender uses NumPy in practice.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import cProfile  # noqa: E402
import dataclasses  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import platform  # noqa: E402
import pstats  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import tracemalloc  # noqa: E402
from contextlib import contextmanager  # noqa: E402
from pathlib import Path  # noqa: E402
from types import ModuleType  # noqa: E402
from typing import Any, Callable, Iterator  # noqa: E402

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
DEFAULT_MESH = REPO.parent / "shared" / "meshes" / "stanford-bunny.obj"

FPS = 24
DROP_HEIGHT = 0.3  # lowest vertex above the ground at frame 1 [m]
GROUND_HEIGHT = 0.0  # [m]
SCALING_TARGETS = (1000, 4000, 16000, 64000)  # tets
# Issue-5 targets.
FRAME_BUDGET_MS = 1000.0 / 60.0  # ~4k tets, ~60k-triangle mesh, 10 substeps, incl. write-back
SOFTBODY_SPEEDUP = 50.0  # TetRig per frame at least this many times faster than Soft Body
WRITEBACK_OVER_FLOOR = 1.3
SCALING_16K_OVER_4K = 4.5
BUILD_BIND_BUDGET_S = 1.0


@dataclasses.dataclass(frozen=True)
class Config:
    frames: int  # TetRig frames measured in Blender (2..frames+1)
    softbody_frames: int
    scaling_frames: int  # solver.step frames per cage size
    scaling_frames_64k: int
    build_repeats: int
    writeback_repeats: int


FULL = Config(frames=24, softbody_frames=24, scaling_frames=24, scaling_frames_64k=12,
              build_repeats=3, writeback_repeats=40)
QUICK = Config(frames=8, softbody_frames=8, scaling_frames=8, scaling_frames_64k=4,
               build_repeats=1, writeback_repeats=15)


# ----------------------------------------------------------------------------- small utilities

def ms(seconds: float) -> float:
    return seconds * 1000.0


def median(values: list[float]) -> float:
    return float(np.median(values)) if values else float("nan")


def log(message: str) -> None:
    print(message, flush=True)


def proc_status_kb(field: str) -> int | None:
    """A ``/proc/self/status`` field in kB (VmRSS, VmHWM), or None off Linux."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux ≥ 4.0: write 5 to /proc/self/clear_refs)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


@dataclasses.dataclass
class RssReport:
    before_kb: int | None = None
    peak_kb: int | None = None
    after_kb: int | None = None
    reset: bool = False

    @property
    def peak_growth_mb(self) -> float:
        if self.before_kb is None or self.peak_kb is None:
            return float("nan")
        return (self.peak_kb - self.before_kb) / 1024.0

    @property
    def retained_mb(self) -> float:
        if self.before_kb is None or self.after_kb is None:
            return float("nan")
        return (self.after_kb - self.before_kb) / 1024.0


@contextmanager
def rss_growth() -> Iterator[RssReport]:
    """Peak RSS growth of a block: VmHWM after it minus VmRSS before it, with VmHWM reset first
    (without the reset, VmHWM is the peak since the process started and the delta understates)."""
    report = RssReport(before_kb=proc_status_kb("VmRSS"))
    report.reset = reset_peak_rss()
    try:
        yield report
    finally:
        report.peak_kb = proc_status_kb("VmHWM")
        report.after_kb = proc_status_kb("VmRSS")


def traced_peak_mb(fn: Callable[[], Any]) -> float:
    """tracemalloc peak of one call [MiB] (run apart from timed runs: tracing slows NumPy)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 2**20


def fmt(value: float, digits: int = 1) -> str:
    if value != value:  # NaN
        return "n/a"
    return f"{value:,.{digits}f}"


def verdict(ok: bool | None) -> str:
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


# ----------------------------------------------------------------------------- the add-on

def snapshot_source(rev: str | None) -> tuple[Path, str]:
    """A private copy of the add-on's source to benchmark, and a label saying which it is.

    Without ``rev``: the working tree's files (tracked and untracked, not ignored) as they are now,
    so that every part of the run measures the same code even while others edit the tree. With
    ``rev``: that commit (``git archive``), e.g. to compare before and after a change.
    """
    folder = Path(tempfile.mkdtemp(prefix="tetrig-bench-src-"))
    git = ["git", "-C", str(REPO)]
    if rev is not None:
        commit = subprocess.run(git + ["rev-parse", "--short", rev], capture_output=True, text=True,
                                check=True).stdout.strip()
        archive = subprocess.run(git + ["archive", "--format=tar", rev], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
        return folder, f"{commit} (git archive {rev})"
    try:
        listing = subprocess.run(git + ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                                 capture_output=True, check=True).stdout.decode().split("\0")
        head = subprocess.run(git + ["rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(git + ["status", "--porcelain", "--", "__init__.py", "tetrig_addon",
                                      "runtime", "operators", "panels"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        shutil.rmtree(folder, ignore_errors=True)
        return REPO, "working tree (not a git checkout)"
    for name in filter(None, listing):
        src = REPO / name
        if src.is_file() and not name.startswith("benchmarks/"):
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, folder / name)
    return folder, f"working tree at {head}" + (" + uncommitted changes in the add-on" if dirty else "")


class Addon:
    """The add-on package registered in the bpy module, and the engine modules inside it."""

    def __init__(self, source: Path) -> None:
        # scripts/_addon_loader.py imports the folder it lives in as the package ``tetrig``
        sys.path.insert(0, str(source / "scripts"))
        import _addon_loader

        self.package: ModuleType = _addon_loader.load_addon()
        name = self.package.__name__
        self.cage = importlib.import_module(f"{name}.tetrig_addon.cage")
        self.binding = importlib.import_module(f"{name}.tetrig_addon.binding")
        self.solver = importlib.import_module(f"{name}.tetrig_addon.solver")
        self.simulation = importlib.import_module(f"{name}.runtime.simulation")


@contextmanager
def timed_solver_steps(solver: ModuleType) -> Iterator[list[float]]:
    """Record the duration of every ``solver.step`` called through the module (the frame
    handler's path) while the block runs; the original function is put back afterwards."""
    original = solver.step
    durations: list[float] = []

    def step(*args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            durations.append(time.perf_counter() - t0)

    solver.step = step
    try:
        yield durations
    finally:
        solver.step = original


# ----------------------------------------------------------------------------- Blender scenes

def fresh_scene() -> Any:
    import bpy

    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    scene.render.fps, scene.render.fps_base = FPS, 1.0
    return scene


def import_mesh(path: Path) -> Any:
    """Import with Blender's OBJ importer; raise the object so its lowest point is DROP_HEIGHT
    above the ground; return it, active and selected."""
    import bpy

    bpy.ops.wm.obj_import(filepath=str(path))
    obj = bpy.context.selected_objects[0]
    bpy.context.view_layer.objects.active = obj
    bpy.context.view_layer.update()
    lowest = float(world_vertices(obj)[:, 2].min())
    obj.location.z += DROP_HEIGHT + GROUND_HEIGHT - lowest
    bpy.context.view_layer.update()
    return obj


def local_vertices(obj: Any) -> np.ndarray:
    co = np.empty(len(obj.data.vertices) * 3, dtype=np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def world_vertices(obj: Any) -> np.ndarray:
    m = np.array(obj.matrix_world, dtype=np.float64)
    return local_vertices(obj) @ m[:3, :3].T + m[:3, 3]


def triangles(obj: Any) -> np.ndarray:
    mesh = obj.data
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    return tris.reshape(-1, 3)


def evaluate(obj: Any) -> int:
    """Evaluate the depsgraph and fetch the object's evaluated mesh (what the viewport shows)."""
    import bpy

    depsgraph = bpy.context.evaluated_depsgraph_get()
    return len(obj.evaluated_get(depsgraph).data.vertices)


def play(obj: Any, frames: int) -> list[float]:
    """frame_set(1), then time frame_set(f) + evaluation for f = 2..frames+1 [s each]."""
    import bpy

    scene = bpy.context.scene
    scene.frame_set(1)
    evaluate(obj)
    times = []
    for f in range(2, frames + 2):
        t0 = time.perf_counter()
        scene.frame_set(f)
        evaluate(obj)
        times.append(time.perf_counter() - t0)
    return times


def set_setting(obj: Any, name: str, value: Any, notes: list[str]) -> None:
    settings = obj.tetrig
    if hasattr(settings, name):
        setattr(settings, name, value)
    else:
        notes.append(f"Object.tetrig has no '{name}' any more; left at its default.")


# ----------------------------------------------------------------------------- 1 + 2: Blender

@dataclasses.dataclass
class BlenderResults:
    vertex_count: int = 0
    triangle_count: int = 0
    cage_tets: int = 0
    cage_points: int = 0
    build_op_s: float = float("nan")
    build_op_rss: RssReport = dataclasses.field(default_factory=RssReport)
    tetrig_frames: list[float] = dataclasses.field(default_factory=list)
    tetrig_solver: list[float] = dataclasses.field(default_factory=list)
    tetrig_rss: RssReport = dataclasses.field(default_factory=RssReport)
    writeback: list[float] = dataclasses.field(default_factory=list)  # write_back + evaluation
    writeback_call: list[float] = dataclasses.field(default_factory=list)  # write_back alone
    floor_position: list[float] = dataclasses.field(default_factory=list)
    floor_co: list[float] = dataclasses.field(default_factory=list)
    floor_attr: list[float] = dataclasses.field(default_factory=list)
    softbody_frames: list[float] = dataclasses.field(default_factory=list)
    softbody_rss: RssReport = dataclasses.field(default_factory=RssReport)
    notes: list[str] = dataclasses.field(default_factory=list)


def bench_blender_tetrig(addon: Addon, mesh: Path, cfg: Config, out: BlenderResults) -> None:
    import bpy

    fresh_scene()
    obj = import_mesh(mesh)
    out.vertex_count = len(obj.data.vertices)
    out.triangle_count = int(triangles(obj).shape[0])
    set_setting(obj, "use_ground", True, out.notes)
    set_setting(obj, "ground_height", GROUND_HEIGHT, out.notes)
    with rss_growth() as rss:
        t0 = time.perf_counter()
        result = bpy.ops.tetrig.build_cage()
        out.build_op_s = time.perf_counter() - t0
    out.build_op_rss = rss
    if result != {"FINISHED"}:
        raise RuntimeError(f"tetrig.build_cage returned {result}")
    cage = obj.tetrig.cage
    out.cage_tets, out.cage_points = len(cage.data.polygons), len(cage.data.vertices)
    log(f"  Blender: Build Cage & Bind {ms(out.build_op_s):.0f} ms, {out.cage_points} control points, "
        f"{out.cage_tets} tets; playing {cfg.frames} frames")

    with rss_growth() as rss, timed_solver_steps(addon.solver) as steps:
        out.tetrig_frames = play(obj, cfg.frames)
    out.tetrig_rss = rss
    out.tetrig_solver = list(steps)
    if len(steps) != cfg.frames:
        out.notes.append(f"solver.step was seen {len(steps)} times for {cfg.frames} frames through "
                         "the module attribute; the solver/rest split of the frame is approximate.")

    # 2. write-back vs the floor, interleaved so that machine noise hits all of them alike
    plain = import_mesh(mesh)
    plain_mesh = plain.data
    n = len(plain_mesh.vertices)
    rest = local_vertices(plain).astype(np.float32).ravel()
    position = plain_mesh.attributes["position"]
    custom = plain_mesh.attributes.new(name="bench_offset", type="FLOAT_VECTOR", domain="POINT")
    disp = np.random.default_rng(0).normal(scale=1e-3, size=(out.cage_points, 3))
    evaluate(obj)
    evaluate(plain)
    for k in range(cfg.writeback_repeats):
        wiggle = 1.0 + 1e-3 * (k % 7)
        t0 = time.perf_counter()
        addon.simulation.write_back(obj, disp * wiggle)
        t1 = time.perf_counter()
        evaluate(obj)
        t2 = time.perf_counter()
        out.writeback_call.append(t1 - t0)
        out.writeback.append(t2 - t0)

        moved = rest * np.float32(wiggle)
        t0 = time.perf_counter()
        position.data.foreach_set("vector", moved)
        plain_mesh.update()
        evaluate(plain)
        out.floor_position.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        plain_mesh.vertices.foreach_set("co", moved)
        plain_mesh.update()
        evaluate(plain)
        out.floor_co.append(time.perf_counter() - t0)

        offsets = np.full(n * 3, 1e-3 * wiggle, dtype=np.float32)
        t0 = time.perf_counter()
        custom.data.foreach_set("vector", offsets)
        plain_mesh.update()
        evaluate(plain)
        out.floor_attr.append(time.perf_counter() - t0)


def bench_blender_softbody(mesh: Path, cfg: Config, out: BlenderResults) -> None:
    fresh_scene()
    obj = import_mesh(mesh)
    obj.modifiers.new("Softbody", "SOFT_BODY")
    obj.soft_body.use_goal = False
    log(f"  Blender: Soft Body modifier, playing {cfg.softbody_frames} frames (slow)")
    with rss_growth() as rss:
        out.softbody_frames = play(obj, cfg.softbody_frames)
    out.softbody_rss = rss


# ----------------------------------------------------------------------------- 3-5: engine

@dataclasses.dataclass
class MeshData:
    local: np.ndarray  # float64 [N, 3], object space
    tris: np.ndarray  # int32 [T, 3]
    world: np.ndarray  # float64 [4, 4]

    def to_world(self, points: np.ndarray) -> np.ndarray:
        return points @ self.world[:3, :3].T + self.world[:3, 3]


def load_mesh_data(mesh: Path) -> MeshData:
    fresh_scene()
    obj = import_mesh(mesh)
    return MeshData(local_vertices(obj), triangles(obj), np.array(obj.matrix_world, dtype=np.float64))


def midpoint_subdivide(vertices: np.ndarray, tris: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One level of midpoint subdivision: every triangle → 4, one new vertex per edge."""
    edges = np.sort(tris[:, [0, 1, 1, 2, 2, 0]].reshape(-1, 2), axis=1)
    unique, inverse = np.unique(edges, axis=0, return_inverse=True)
    mid = 0.5 * (vertices[unique[:, 0]] + vertices[unique[:, 1]])
    m = (vertices.shape[0] + inverse.reshape(-1, 3)).astype(np.int32)
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    m01, m12, m20 = m[:, 0], m[:, 1], m[:, 2]
    new_tris = np.concatenate([np.stack([a, m01, m20], 1), np.stack([m01, b, m12], 1),
                               np.stack([m20, m12, c], 1), np.stack([m01, m12, m20], 1)])
    return np.concatenate([vertices, mid]), new_tris


@dataclasses.dataclass
class BuildRow:
    label: str
    vertex_count: int
    tet_count: int
    build_s: float
    bind_s: float
    peak_mb: float

    @property
    def total_s(self) -> float:
        return self.build_s + self.bind_s


def bench_build_bind(addon: Addon, label: str, vertices: np.ndarray, repeats: int) -> BuildRow:
    builds, binds = [], []
    tets = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        cage = addon.cage.build_cage(vertices)
        t1 = time.perf_counter()
        addon.binding.bind(vertices, cage.control_points, cage.tets)
        t2 = time.perf_counter()
        builds.append(t1 - t0)
        binds.append(t2 - t1)
        tets = cage.tet_count

    def once() -> None:
        cage = addon.cage.build_cage(vertices)
        addon.binding.bind(vertices, cage.control_points, cage.tets)

    peak = traced_peak_mb(once)
    return BuildRow(label, vertices.shape[0], tets, median(builds), median(binds), peak)


def cage_near(addon: Addon, vertices: np.ndarray, target: int) -> tuple[Any, int]:
    """The cage (uncapped control points) whose tet count is nearest ``target`` (log scale), and
    its resolution: start from a cube-root estimate and walk the resolution while it improves."""
    cache: dict[int, Any] = {}

    def build(res: int) -> Any:
        if res not in cache:
            cache[res] = addon.cage.build_cage(vertices, resolution=res, max_control_points=10**7)
        return cache[res]

    def error(res: int) -> float:
        return abs(np.log(build(res).tet_count / target))

    default = addon.cage.DEFAULT_RESOLUTION
    res = max(1, int(round(default * (target / build(default).tet_count) ** (1.0 / 3.0))))
    direction = 1 if build(res).tet_count < target else -1
    while res + direction >= 1 and error(res + direction) < error(res):
        res += direction
    return build(res), res


@dataclasses.dataclass
class ScalingRow:
    target: int
    resolution: int
    tet_count: int
    point_count: int
    ground_ms: float
    free_ms: float
    ground_cpu_ms: float  # process CPU time: less sensitive than wall time to other processes
    free_cpu_ms: float
    model_s: float
    model_peak_mb: float
    step_peak_mb: float


def bench_scaling(addon: Addon, data: MeshData, cfg: Config) -> list[ScalingRow]:
    """solver.step per frame for each cage size, with and without the ground. The models are
    stepped round-robin (one frame of each size and case per round), so a burst of load from
    elsewhere on the machine hits every size alike and the ratios stay fair."""
    solver = addon.solver
    ground = solver.SimSettings(ground_height=GROUND_HEIGHT).validated()
    free = solver.SimSettings(ground_height=None).validated()
    dt = 1.0 / FPS
    built = []
    for target in SCALING_TARGETS:
        cage, res = cage_near(addon, data.local, target)
        bound = addon.binding.bind(data.local, cage.control_points, cage.tets)
        rest_world = data.to_world(cage.control_points)
        contacts = (bound.control_point_indices, bound.weights)
        t0 = time.perf_counter()
        model = solver.build_model(rest_world, cage.tets, contacts=contacts)
        model_s = time.perf_counter() - t0
        model_peak = traced_peak_mb(lambda: solver.build_model(rest_world, cage.tets, contacts=contacts))
        state = solver.rest_state(model)
        step_peak = traced_peak_mb(lambda: solver.step(model, state, ground, dt))
        frames = cfg.scaling_frames_64k if target >= 64000 else cfg.scaling_frames
        log(f"  cage of {cage.tet_count:,} tets (resolution {res}): build_model {model_s:.2f} s; "
            f"{frames} frames with and without ground")
        built.append((target, res, cage, model, model_s, model_peak, step_peak, frames))
    states = [[solver.rest_state(m), solver.rest_state(m)] for _, _, _, m, *_ in built]
    times: list[list[list[float]]] = [[[], []] for _ in built]
    cpu: list[list[list[float]]] = [[[], []] for _ in built]
    for rnd in range(max(b[-1] for b in built)):
        for i, (_, _, _, model, _, _, _, frames) in enumerate(built):
            if rnd >= frames:
                continue
            for j, settings in enumerate((ground, free)):
                c0, t0 = time.process_time(), time.perf_counter()
                states[i][j] = solver.step(model, states[i][j], settings, dt)
                times[i][j].append(time.perf_counter() - t0)
                cpu[i][j].append(time.process_time() - c0)
    return [ScalingRow(target, res, cage.tet_count, cage.control_point_count, ms(median(times[i][0])),
                       ms(median(times[i][1])), ms(median(cpu[i][0])), ms(median(cpu[i][1])),
                       model_s, model_peak, step_peak)
            for i, (target, res, cage, _, model_s, model_peak, step_peak, _) in enumerate(built)]


def bench_blend(addon: Addon, data: MeshData, repeats: int) -> float:
    """binding.blend of the bunny's vertices from its default cage [s, median]: the arithmetic
    inside TetRig's write-back, without Blender."""
    cage = addon.cage.build_cage(data.local)
    bound = addon.binding.bind(data.local, cage.control_points, cage.tets)
    disp = np.random.default_rng(1).normal(scale=1e-3, size=cage.control_points.shape)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        addon.binding.blend(disp, bound.control_point_indices, bound.weights)
        times.append(time.perf_counter() - t0)
    return median(times)


# ----------------------------------------------------------------------------- profile

class _CountingArray(np.ndarray):
    """An ndarray view that counts top-level NumPy operations done on it: ufuncs and operators,
    NumPy functions (``__array_function__``), indexing reads and writes, ``copy``/``astype``.
    Nested calls inside NumPy are not counted (operands are unwrapped before the real call)."""

    calls = 0

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        _CountingArray.calls += 1
        if "out" in kwargs:
            kwargs["out"] = _plain(kwargs["out"])
        return _counting(getattr(ufunc, method)(*_plain(inputs), **_plain(kwargs)))

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        _CountingArray.calls += 1
        return _counting(func(*_plain(args), **_plain(kwargs)))

    def __getitem__(self, key: Any) -> Any:
        _CountingArray.calls += 1
        return _counting(np.ndarray.__getitem__(self.view(np.ndarray), _plain(key)))

    def __setitem__(self, key: Any, value: Any) -> None:
        _CountingArray.calls += 1
        np.ndarray.__setitem__(self.view(np.ndarray), _plain(key), _plain(value))

    def copy(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        _CountingArray.calls += 1
        return _counting(np.ndarray.copy(self.view(np.ndarray), *args, **kwargs))

    def astype(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        _CountingArray.calls += 1
        return _counting(np.ndarray.astype(self.view(np.ndarray), *args, **kwargs))


def _plain(obj: Any) -> Any:
    if isinstance(obj, _CountingArray):
        return obj.view(np.ndarray)
    if isinstance(obj, tuple):
        return tuple(_plain(o) for o in obj)
    if isinstance(obj, list):
        return [_plain(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def _counting(obj: Any) -> Any:
    if type(obj) is np.ndarray:
        return obj.view(_CountingArray)
    if isinstance(obj, tuple):
        return tuple(_counting(o) for o in obj)
    return obj


def _with_counting_arrays(obj: Any) -> Any:
    """A copy of a dataclass (Model, State) whose array fields are counting views."""
    changes = {f.name: getattr(obj, f.name).view(_CountingArray) for f in dataclasses.fields(obj)
               if isinstance(getattr(obj, f.name), np.ndarray)}
    return dataclasses.replace(obj, **changes)


@dataclasses.dataclass
class ProfileResult:
    tet_count: int
    frame: int
    total_ms: float
    function_calls: int
    numpy_ops: int | None
    top: list[tuple[str, int, float, float]]  # name, calls, tottime ms, cumtime ms
    solver_functions: list[tuple[str, int, float, float]]  # the solver module's own functions
    text: str
    colors: str  # the model's constraint colours, if it says


def profile_step(addon: Addon, data: MeshData) -> ProfileResult:
    """cProfile one frame of solver.step on the bunny's default cage (the Blender case), taken
    while the bunny rests on the ground, and count the NumPy operations of that frame."""
    solver = addon.solver
    cage = addon.cage.build_cage(data.local)
    bound = addon.binding.bind(data.local, cage.control_points, cage.tets)
    model = solver.build_model(data.to_world(cage.control_points), cage.tets,
                               contacts=(bound.control_point_indices, bound.weights))
    settings = solver.SimSettings(ground_height=GROUND_HEIGHT).validated()
    state = solver.rest_state(model)
    frame = 1
    for _ in range(11):  # 0.3 m falls in ~6 frames: frame 12 is in contact
        state = solver.step(model, state, settings, 1.0 / FPS)
        frame += 1
    profiler = cProfile.Profile()
    t0 = time.perf_counter()
    profiler.enable()
    solver.step(model, state, settings, 1.0 / FPS)
    profiler.disable()
    total = time.perf_counter() - t0
    stats = pstats.Stats(profiler)
    top, own = [], []
    for (filename, _line, name), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = name if filename == "~" else f"{Path(filename).name}:{name}"
        top.append((where, nc, ms(tt), ms(ct)))
        if Path(filename).resolve() == Path(solver.__file__).resolve():
            own.append((where, nc, ms(tt), ms(ct)))
    top.sort(key=lambda row: -row[2])
    own.sort(key=lambda row: -row[3])
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(15)
    numpy_ops: int | None
    try:
        counted_model = _with_counting_arrays(model)
        counted_state = _with_counting_arrays(state)
        _CountingArray.calls = 0
        solver.step(counted_model, counted_state, settings, 1.0 / FPS)
        numpy_ops = _CountingArray.calls
    except Exception as exc:  # noqa: BLE001 -- a changed solver must not stop the benchmark
        log(f"  (NumPy operation count unavailable: {type(exc).__name__}: {exc})")
        numpy_ops = None
    return ProfileResult(cage.tet_count, frame + 1, ms(total), int(stats.total_calls),  # type: ignore[attr-defined]
                         numpy_ops, top[:12], own, buffer.getvalue(), _colors(model, settings))


def _colors(model: Any, settings: Any) -> str:
    """'E edge colours + T tet colours = P colour passes per frame', when the model has them."""
    try:
        edge = int(model.color_offsets.shape[0] - 1)
        tet = int(model.tet_color_offsets.shape[0] - 1)
    except AttributeError:
        return ""
    return (f"{edge} edge colours + {tet} tet colours, × {settings.substeps} substeps = "
            f"{(edge + tet) * settings.substeps} colour passes per frame")


# ----------------------------------------------------------------------------- report

def table(header: list[str], rows: list[list[str]]) -> tuple[str, str]:
    """(plain text, markdown) renderings of one table."""
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths))
    text = [line, "  ".join("-" * w for w in widths)]
    text += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    md = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    md += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(text), "\n".join(md)


def environment(args: argparse.Namespace, mode: str, source_label: str) -> list[tuple[str, str]]:
    import bpy
    import scipy

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            names = [ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return [
        ("mode", mode),
        ("date", time.strftime("%Y-%m-%d %H:%M:%S")),
        ("add-on source", source_label),
        ("mesh", f"{args.mesh.name}"),
        ("Blender (bpy)", bpy.app.version_string),
        ("Python / NumPy / SciPy", f"{platform.python_version()} / {np.__version__} / {scipy.__version__}"),
        ("CPU", f"{cpu}, {os.cpu_count()} logical cores, load average at start "
                f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (1, 5, 15 min)"),
        ("BLAS threads", "OPENBLAS_NUM_THREADS=1 (set by this benchmark before importing NumPy); "
                         f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')} (left as is)"),
    ]


def make_plot(path: Path, blender: BlenderResults, scaling: list[ScalingRow], builds: list[BuildRow],
              writeback: tuple[float, float, float]) -> str:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError:
        return ("matplotlib is not installed, so no plot was written "
                "(`make bench` installs benchmarks/requirements.txt into .venv).")
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    ax = axes[0, 0]
    f_tr = np.arange(2, 2 + len(blender.tetrig_frames))
    f_sb = np.arange(2, 2 + len(blender.softbody_frames))
    ax.semilogy(f_tr, [ms(t) for t in blender.tetrig_frames], "o-", label="TetRig (frame_set + eval)")
    if blender.tetrig_solver:
        ax.semilogy(f_tr[:len(blender.tetrig_solver)], [ms(t) for t in blender.tetrig_solver], ".--",
                    label="  of which solver.step")
    ax.semilogy(f_sb, [ms(t) for t in blender.softbody_frames], "s-", label="Blender Soft Body")
    ax.axhline(FRAME_BUDGET_MS, color="grey", lw=0.8, ls=":", label="16.7 ms (60 fps)")
    ax.set_xlabel("frame")
    ax.set_ylabel("ms per frame")
    ax.set_title(f"Per frame, bunny ({blender.vertex_count:,} vertices)")
    ax.legend(fontsize=8)

    ax = axes[0, 1]
    tets = np.array([r.tet_count for r in scaling], dtype=float)
    ax.loglog(tets, [r.ground_ms for r in scaling], "o-", label="solver.step, ground + mesh contacts")
    ax.loglog(tets, [r.free_ms for r in scaling], "s-", label="solver.step, no ground")
    if len(scaling) > 1:
        i4 = int(np.argmin(np.abs(np.log(tets / 4000))))
        ax.loglog(tets, scaling[i4].free_ms * tets / tets[i4], "k:", lw=0.8, label="linear in tets")
    ax.set_xlabel("tets")
    ax.set_ylabel("ms per frame (10 substeps)")
    ax.set_title("Solver cost vs cage size")
    ax.legend(fontsize=8)

    ax = axes[1, 0]
    labels = [f"{r.label}\n{r.vertex_count:,} v" for r in builds]
    x = np.arange(len(builds))
    ax.bar(x, [r.build_s for r in builds], 0.5, label="build_cage")
    ax.bar(x, [r.bind_s for r in builds], 0.5, bottom=[r.build_s for r in builds], label="bind")
    ax.axhline(BUILD_BIND_BUDGET_S, color="grey", lw=0.8, ls=":", label="1 s (build + bind target)")
    ax.set_xticks(x, labels)
    ax.set_ylabel("s")
    ax.set_title("Cage build + bind (engine)")
    ax.legend(fontsize=8)

    ax = axes[1, 1]
    names = ["TetRig write_back\n+ evaluation", "floor: 'position'\nforeach_set + eval",
             "vertices 'co'\nforeach_set + eval"]
    ax.bar(names, writeback, color=["C0", "C2", "C7"])
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_ylabel("ms (log)")
    ax.set_title("Write-back vs the floor (median)")
    fig.suptitle("TetRig benchmarks (ratios are the point; absolute times depend on the machine)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"plot written to {path}"


PART_MARK = "BENCH-PART-JSON:"


def run_part(name: str, args: argparse.Namespace) -> BlenderResults:
    """Run one Blender part in a fresh process (so its RSS is not hidden by memory the others
    left mapped) and read its results back."""
    command = [sys.executable, str(Path(__file__).resolve()), "--part", name, "--mesh", str(args.mesh),
               "--source", str(args.source)]
    if args.quick:
        command.append("--quick")
    proc = subprocess.run(command, stdout=subprocess.PIPE, stderr=None, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith(PART_MARK):
            raw = __import__("json").loads(line[len(PART_MARK):])
            for key in [k for k, v in raw.items() if isinstance(v, dict)]:
                raw[key] = RssReport(**raw[key])
            return BlenderResults(**raw)
        print(line, flush=True)
    raise RuntimeError(f"benchmark part {name!r} failed (exit status {proc.returncode})")


def part_main(name: str, args: argparse.Namespace, cfg: Config) -> int:
    out = BlenderResults()
    if name == "blender-tetrig":
        bench_blender_tetrig(Addon(args.source), args.mesh, cfg, out)
    elif name == "blender-softbody":  # plain Blender: the add-on is not even loaded
        bench_blender_softbody(args.mesh, cfg, out)
    else:
        raise SystemExit(f"unknown part {name}")
    print(PART_MARK + __import__("json").dumps(dataclasses.asdict(out)), flush=True)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer frames and repeats (~1 minute)")
    parser.add_argument("--mesh", type=Path, default=DEFAULT_MESH, help="the mesh (.obj) to use")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="folder for results.md and results.png")
    parser.add_argument("--rev", help="benchmark the add-on as committed at this git revision "
                        "(default: a copy of the working tree taken at the start)")
    parser.add_argument("--part", help=argparse.SUPPRESS)  # internal: one Blender part
    parser.add_argument("--source", type=Path, help=argparse.SUPPRESS)  # internal: the copy to use
    args = parser.parse_args(argv)
    if not args.mesh.exists():
        print(f"benchmark: mesh not found: {args.mesh}", file=sys.stderr)
        return 2
    cfg = QUICK if args.quick else FULL
    if args.part:
        return part_main(args.part, args, cfg)
    try:
        args.source, args.source_label = snapshot_source(args.rev)
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"benchmark: cannot take the add-on's source at {args.rev or 'the working tree'}: {exc}",
              file=sys.stderr)
        return 2
    try:
        return run_all(args, cfg)
    finally:
        if args.source != REPO:
            shutil.rmtree(args.source, ignore_errors=True)


def run_all(args: argparse.Namespace, cfg: Config) -> int:
    mode = "quick" if args.quick else "full"
    t_start = time.perf_counter()

    log(f"TetRig benchmark ({mode}); OPENBLAS_NUM_THREADS=1 (BLAS single-threaded, as in Blender)")
    addon = Addon(args.source)
    env = environment(args, mode, args.source_label)

    log("Blender, TetRig (own process)")
    blender = run_part("blender-tetrig", args)
    log("Blender, Soft Body (own process)")
    softbody = run_part("blender-softbody", args)
    blender.softbody_frames, blender.softbody_rss = softbody.softbody_frames, softbody.softbody_rss

    log("Engine: cage build + bind")
    data = load_mesh_data(args.mesh)
    sub_vertices, _ = midpoint_subdivide(data.local, data.tris)
    builds = [bench_build_bind(addon, "bunny", data.local, cfg.build_repeats),
              bench_build_bind(addon, "bunny subdivided", sub_vertices, cfg.build_repeats)]
    blend_ms = ms(bench_blend(addon, data, cfg.writeback_repeats))
    log("Engine: solver.step vs cage size")
    scaling = bench_scaling(addon, data, cfg)
    log("Engine: profile of one frame")
    prof = profile_step(addon, data)
    fresh_scene()

    # ------------------------------------------------------------------ figures
    tr_ms = ms(median(blender.tetrig_frames))
    sb_ms = ms(median(blender.softbody_frames))
    solver_ms = ms(median(blender.tetrig_solver))
    rest = [f - s for f, s in zip(blender.tetrig_frames, blender.tetrig_solver)]
    rest_ms = ms(median(rest)) if len(rest) == len(blender.tetrig_frames) else float("nan")
    wb_ms, call_ms = ms(median(blender.writeback)), ms(median(blender.writeback_call))
    pos_ms, co_ms, at_ms = (ms(median(blender.floor_position)), ms(median(blender.floor_co)),
                            ms(median(blender.floor_attr)))
    floor_ms = pos_ms
    by_target = {r.target: r for r in scaling}
    r4, r16 = by_target.get(4000), by_target.get(16000)
    ratio_16_4 = r16.ground_ms / r4.ground_ms if r4 and r16 else float("nan")
    ratio_16_4_free = r16.free_ms / r4.free_ms if r4 and r16 else float("nan")
    ratio_16_4_cpu = r16.ground_cpu_ms / r4.ground_cpu_ms if r4 and r16 else float("nan")
    ratio_16_4_free_cpu = r16.free_cpu_ms / r4.free_cpu_ms if r4 and r16 else float("nan")
    bunny_build = builds[0]

    sections: list[tuple[str, list[str], list[list[str]], str]] = []
    sections.append((
        "1. Per frame in Blender (bunny, frame_set + depsgraph evaluation)",
        ["measure", "TetRig", "Blender Soft Body", "Soft Body / TetRig"],
        [["median ms/frame", fmt(tr_ms), fmt(sb_ms), fmt(sb_ms / tr_ms) + "×"],
         ["mean ms/frame", fmt(ms(float(np.mean(blender.tetrig_frames)))),
          fmt(ms(float(np.mean(blender.softbody_frames)))),
          fmt(np.mean(blender.softbody_frames) / np.mean(blender.tetrig_frames)) + "×"],
         ["min ms/frame", fmt(ms(min(blender.tetrig_frames))), fmt(ms(min(blender.softbody_frames))), ""],
         ["first frame (frame 2) ms", fmt(ms(blender.tetrig_frames[0])), fmt(ms(blender.softbody_frames[0])), ""],
         ["last frame ms", fmt(ms(blender.tetrig_frames[-1])), fmt(ms(blender.softbody_frames[-1])), ""],
         ["frames", f"2–{cfg.frames + 1}", f"2–{cfg.softbody_frames + 1}", ""],
         ["TetRig: solver.step, median ms", fmt(solver_ms), "", ""],
         ["TetRig: rest of the frame, median ms", fmt(rest_ms), "", ""]],
        f"{blender.vertex_count:,} vertices, {blender.triangle_count:,} triangles. TetRig: default "
        f"settings ({blender.cage_points} control points, {blender.cage_tets} tets, 10 substeps), Ground "
        f"on at z = {GROUND_HEIGHT}. Soft Body: defaults, goal off, nothing to collide with; its first "
        "frame includes building its springs, and its cost per frame grows as it falls faster "
        "(adaptive steps). Each object alone in its scene and its own process. Ratios use the "
        "medians. 'Rest of the frame' = frame − solver.step, frame by frame: write-back, Blender's "
        "depsgraph, the handler's bookkeeping."))

    sections.append((
        "2. Write-back vs the floor (median of interleaved repeats)",
        ["measure", "ms", "× floor"],
        [["TetRig: write_back + evaluation (mesh + cage)", fmt(wb_ms, 2), fmt(wb_ms / floor_ms, 1) + "×"],
         ["  of which the write_back call", fmt(call_ms, 2), fmt(call_ms / floor_ms, 1) + "×"],
         ["  of which the evaluation (Geometry Nodes offset)", fmt(wb_ms - call_ms, 2), ""],
         ["  the blend alone (engine binding.blend, float64)", fmt(blend_ms, 2), ""],
         ["floor: 'position' attribute foreach_set + update + evaluation", fmt(pos_ms, 2), "1.0×"],
         ["vertices.foreach_set('co') + update + evaluation", fmt(co_ms, 2), fmt(co_ms / floor_ms, 1) + "×"],
         ["float32 point attribute (moves nothing) foreach_set + update + evaluation", fmt(at_ms, 2),
          fmt(at_ms / floor_ms, 1) + "×"],
         ["TetRig write-back / vertices.foreach_set('co') path", "", fmt(wb_ms / co_ms, 2) + "×"]],
        f"{cfg.writeback_repeats} repeats each, interleaved. The floor is the cheapest way to show "
        f"{blender.vertex_count:,} new positions in Blender: foreach_set on the mesh's 'position' "
        "attribute, mesh.update(), depsgraph evaluation, on a plain import of the same mesh without "
        "modifiers. vertices.foreach_set('co') is the same write through a slower per-item RNA path. "
        "TetRig's write-back = blend (Σ w·d per vertex) + the offset attribute of the mesh and of the "
        "cage + their Geometry Nodes offset modifiers."))

    sections.append((
        "3. solver.step per frame vs cage size (engine only, 10 substeps)",
        ["target", "tets", "control points", "resolution", "ms/frame ground+contacts",
         "ms/frame no ground", "CPU ms ground", "CPU ms no ground", "build_model s",
         "build_model peak MiB", "step peak MiB"],
        [[f"~{r.target // 1000}k", f"{r.tet_count:,}", f"{r.point_count:,}", str(r.resolution),
          fmt(r.ground_ms), fmt(r.free_ms), fmt(r.ground_cpu_ms), fmt(r.free_cpu_ms), fmt(r.model_s, 2),
          fmt(r.model_peak_mb), fmt(r.step_peak_mb)]
         for r in scaling] +
        [["16k / 4k", "", "", "", fmt(ratio_16_4, 2) + "×", fmt(ratio_16_4_free, 2) + "×",
          fmt(ratio_16_4_cpu, 2) + "×", fmt(ratio_16_4_free_cpu, 2) + "×", "", "", ""]],
        f"Cages from build_cage(bunny, resolution, max_control_points=10⁷), in the bunny's object space, "
        f"moved to world space as the add-on does. Ground case: the bunny's {data.local.shape[0]:,} "
        f"vertices are the contacts and it falls {DROP_HEIGHT} m onto z = {GROUND_HEIGHT} (lands near "
        f"frame 7). Median over frames 2–{cfg.scaling_frames + 1} "
        f"(2–{cfg.scaling_frames_64k + 1} for ~64k), stepped round-robin across sizes. "
        "Wall time (ms/frame) is what a user waits for; CPU = process CPU time, which other "
        "processes on the machine disturb less. Peak = tracemalloc peak of one call."))

    sections.append((
        "4. Cage build + bind vs mesh size (engine, default resolution and cap)",
        ["mesh", "vertices", "tets", "build_cage s", "bind s", "total s", "peak MiB (tracemalloc)"],
        [[r.label, f"{r.vertex_count:,}", f"{r.tet_count:,}", fmt(r.build_s, 3), fmt(r.bind_s, 3),
          fmt(r.total_s, 3), fmt(r.peak_mb)] for r in builds] +
        [["bunny, Build Cage & Bind operator in Blender", f"{blender.vertex_count:,}",
          f"{blender.cage_tets:,}", "", "", fmt(blender.build_op_s, 3), ""]],
        f"Median of {cfg.build_repeats} run(s). The subdivided bunny is one level of midpoint "
        "subdivision of Blender's triangles (NumPy). The operator row (one run) also creates the cage "
        "object, stores the binding attributes and adds the modifiers."))

    rss_ok = blender.tetrig_rss.reset and blender.softbody_rss.reset
    sections.append((
        "5. Peak memory of the Blender parts (process RSS)",
        ["part", "peak RSS growth MiB", "retained after MiB"],
        [["Build Cage & Bind operator (bunny)", fmt(blender.build_op_rss.peak_growth_mb),
          fmt(blender.build_op_rss.retained_mb)],
         [f"TetRig playback ({cfg.frames} frames)", fmt(blender.tetrig_rss.peak_growth_mb),
          fmt(blender.tetrig_rss.retained_mb)],
         [f"Soft Body playback ({cfg.softbody_frames} frames)", fmt(blender.softbody_rss.peak_growth_mb),
          fmt(blender.softbody_rss.retained_mb)]],
        "Each Blender part runs in its own process after the mesh is imported. " +
        ("Peak growth = VmHWM after the part − VmRSS before it, VmHWM reset through "
         "/proc/self/clear_refs just before the part" if rss_ok else
         "Peak growth = VmHWM delta without a reset (clear_refs unavailable): the peak since the "
         "process started, so growth below an earlier peak shows too small") +
        "; retained = VmRSS after − before. Memory the allocator had already mapped and freed is "
        "reused without growing RSS. Engine peaks (tracemalloc) are in tables 3 and 4."))

    targets = [
        ("~4k-tet cage, ~60k-triangle mesh, 10 substeps: frame incl. write-back ≤ 16.7 ms",
         f"{fmt(tr_ms)} ms ({blender.cage_tets:,} tets, {blender.triangle_count:,} triangles)",
         tr_ms <= FRAME_BUDGET_MS),
        (f"bunny ≥ {SOFTBODY_SPEEDUP:.0f}× faster per frame than Blender Soft Body",
         f"{fmt(sb_ms / tr_ms)}×", sb_ms / tr_ms >= SOFTBODY_SPEEDUP),
        (f"write-back ≤ {WRITEBACK_OVER_FLOOR}× the floor",
         f"{fmt(wb_ms / floor_ms, 1)}× ('position' floor); {fmt(wb_ms / co_ms, 2)}× the 'co' path",
         wb_ms / floor_ms <= WRITEBACK_OVER_FLOOR),
        (f"16k tets ≤ {SCALING_16K_OVER_4K}× the 4k frame (solver.step, ground + contacts)",
         f"{fmt(ratio_16_4, 2)}× (no ground {fmt(ratio_16_4_free, 2)}×; CPU time "
         f"{fmt(ratio_16_4_cpu, 2)}×)",
         None if ratio_16_4 != ratio_16_4 else ratio_16_4 <= SCALING_16K_OVER_4K),
        (f"build + bind of the bunny < {BUILD_BIND_BUDGET_S:.0f} s (engine)",
         f"{fmt(bunny_build.total_s, 3)} s", bunny_build.total_s < BUILD_BIND_BUDGET_S),
    ]
    sections.append((
        "6. Issue-5 targets",
        ["target", "measured", "result"],
        [[name, value, verdict(ok)] for name, value, ok in targets],
        "Reported only: a FAIL never changes the exit status."))

    sections.append((
        f"Profile: one frame of solver.step ({prof.tet_count:,} tets, bunny resting on the ground, "
        f"frame {prof.frame})",
        ["function (top 10 by own time)", "calls", "own ms", "cumulative ms"],
        [[name, str(calls), fmt(tt, 2), fmt(ct, 2)] for name, calls, tt, ct in prof.top[:10]],
        f"One frame: {fmt(prof.total_ms)} ms under cProfile (which inflates Python-level calls), "
        f"{prof.function_calls:,} Python-visible function calls; "
        + (f"{prof.numpy_ops:,} NumPy operations per frame (ufuncs and operators, NumPy functions, "
           "indexing reads/writes, copy/astype; counted top-level only, on a separate unprofiled run "
           "with counting array views)." if prof.numpy_ops is not None
           else "NumPy operation count unavailable.")
        + (f" The model has {prof.colors}." if prof.colors else "")))
    sections.append((
        "Profile: the solver module's functions in that frame",
        ["function", "calls", "own ms", "cumulative ms"],
        [[name, str(calls), fmt(tt, 2), fmt(ct, 2)] for name, calls, tt, ct in prof.solver_functions],
        "Cumulative = the function and everything it calls."))

    # ------------------------------------------------------------------ output
    args.out.mkdir(parents=True, exist_ok=True)
    plot_note = make_plot(args.out / "results.png", blender, scaling, builds, (wb_ms, pos_ms, co_ms))
    total_s = time.perf_counter() - t_start
    env.append(("total runtime", f"{total_s:.0f} s"))
    if hasattr(os, "getloadavg"):
        env.append(("load average at the end", " ".join(f"{x:.2f}" for x in os.getloadavg())))

    text_out = ["", "=" * 100, f"TetRig benchmark results ({mode})", "=" * 100]
    md_out = [f"# TetRig benchmark results ({mode})", "",
              "Written by `benchmarks/run.py` (`make bench`). Ratios are measured side by side in one "
              "run; absolute times depend on the machine and on its load.", ""]
    env_text, env_md = table(["setting", "value"], [[k, v] for k, v in env])
    text_out += [env_text, ""]
    md_out += [env_md, ""]
    for title, header, rows, note in sections:
        t, m = table(header, rows)
        text_out += [title, t, note, ""]
        md_out += [f"## {title}", "", m, "", note, ""]
    for note in blender.notes:
        text_out.append("note: " + note)
        md_out += ["Note: " + note, ""]
    md_out += ["## cProfile output (one frame of solver.step, sorted by own time)", "", "```",
               prof.text.strip(), "```", "",
               "Plot: " + ("![results](results.png)" if plot_note.startswith("plot written") else plot_note), ""]
    text_out += [plot_note, f"results written to {args.out / 'results.md'}", f"total runtime {total_s:.0f} s"]
    (args.out / "results.md").write_text("\n".join(md_out))
    print("\n".join(text_out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
