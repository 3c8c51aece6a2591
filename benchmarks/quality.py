"""What the quality pass (seed 003) costs per frame, against the seed's budget of 7 ms at 100k
vertices, and what it repairs on a 5 m/s bunny landing.

    .venv/bin/python benchmarks/quality.py [--repeats N]   (writes benchmarks/quality.md)

Engine only (no Blender). Meshes: the Stanford bunny (35,947 vertices, 104,288 edges) and the
bunny with every triangle split in four (140,235 vertices, 416,867 edges), both on the bunny's
default cage. Frames: the bunny landing at 5 m/s (Jelly preset); "impact" is the landing frame
(the clamp runs its 4 + 4 sweeps), "typical" a frame ten later (1 + 1 sweeps), and the impact
with the seed's fallback settings (3 sweeps, 1 smoothing iteration). The per-frame cost
is the pass (``quality.improve``) plus the product that feeds its smoothing (the affine Laplacian,
``M @ D``); the blend (``B @ D``) is paid with the pass off as well and is listed apart. The
median and the fastest of ``--repeats`` runs (on a shared machine the slow ones measure its
neighbours), with the load average beside them. Run with OMP_WAIT_POLICY=PASSIVE: after each solver step Numba's OpenMP
threads otherwise spin for a while and take a core from the pass being timed.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from test_engine_quality import MATERIALS, bunny_rig, landing_frames, measures  # noqa: E402

from tetrig_addon import quality  # noqa: E402
from tetrig_addon.quality import backend as quality_backend  # noqa: E402

BUDGET_MS_PER_100K = 7.0  # seed 003: 7 ms for 100k vertices (60 fps)
TYPICAL_FRAME = 10
# The seed's "降级策略" (fallback when over budget): 3 clamp sweeps, 1 smoothing iteration.
FALLBACK = quality.QualitySettings(constraint_iterations=3, smoothing_iterations=1)


def timed_ms(fn, repeats: int) -> tuple[float, float]:
    """(median, fastest) of ``repeats`` calls [ms]."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000.0 * float(np.median(times)), 1000.0 * min(times)


def speed_rows(repeats: int) -> list[str]:
    quality_backend.warm_up()
    rows = []
    for subdivisions in (0, 1):
        t0 = time.perf_counter()
        rig = bunny_rig(subdivisions)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        quality.build_plan(rig.pts, rig.edges)
        plan_ms = 1000.0 * (time.perf_counter() - t0)
        frames = landing_frames(rig, "jelly", frames=TYPICAL_FRAME + 1)
        n = rig.plan.vertex_count
        for label, index, settings in (("impact", 0, quality.QualitySettings()),
                                       ("typical", TYPICAL_FRAME, quality.QualitySettings()),
                                       ("impact, the seed's fallback", 0, FALLBACK)):
            displacements, d, result = frames[index]
            if settings is FALLBACK:
                result = quality.improve(rig.plan, d, settings, rig.laplacian @ displacements, True)
            cost = {}
            for backend, use_kernel, runs in (("Numba", True, repeats), ("NumPy", False, 3)):
                cost[backend] = timed_ms(lambda: quality.improve(
                    rig.plan, d, settings, rig.laplacian @ displacements, use_kernel), runs)
            blend_ms = timed_ms(lambda: rig.blend @ displacements, repeats)[0]
            per_100k = cost["Numba"][0] * 1e5 / n
            rows.append(f"| {n:,} | {rig.plan.edge_count:,} | {label} | {result.sweeps[0]} + {result.sweeps[1]} "
                        f"| {cost['Numba'][0]:.2f} | {cost['Numba'][1]:.2f} | {per_100k:.2f} "
                        f"| {cost['NumPy'][0]:.1f} | {blend_ms:.2f} | {plan_ms:.0f} | {os.getloadavg()[0]:.1f} |")
            print(rows[-1], f"(rig built in {build_s:.1f} s)", flush=True)
    return rows


def landing_rows() -> list[str]:
    rig = bunny_rig()
    rows = []
    for material in MATERIALS:
        frames = landing_frames(rig, material)
        off = [measures(rig, d) for _, d, _ in frames]
        on = [measures(rig, r.displacements) for _, _, r in frames]
        worst = int(np.argmax([m["beyond"] for m in off]))
        for name, series in (("off", off), ("on", on)):
            m = series[worst]
            rows.append(f"| {material} | {name} | {worst + 1} | {100 * m['beyond']:.4f} % | {m['max']:.3f} "
                        f"| {m['min']:.3f} | {m['flipped']} | {max(s['max'] for s in series):.4f} "
                        f"| {min(s['min'] for s in series):.4f} | {sum(s['flipped'] for s in series)} |")
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args(argv)
    speed = speed_rows(args.repeats)
    landing = landing_rows()
    text = "\n".join([
        "# Quality pass: cost per frame and what it repairs", "",
        f"Seed 003's budget: {BUDGET_MS_PER_100K:.0f} ms per frame at 100k vertices. Median and fastest of "
        f"{args.repeats} runs (NumPy: median of 3) on {os.cpu_count()} cores shared with other work (1-minute "
        "load average in the last column), `benchmarks/quality.py`; sweeps: the clamp's before and after the "
        "smoothing; ms per 100k: the median scaled to 100,000 vertices.", "",
        "| vertices | edges | frame | sweeps | Numba median ms | Numba fastest ms | median ms per 100k "
        "| NumPy ms | blend B @ D ms | plan build ms | load |",
        "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|", *speed, "",
        "## Against the budget", "",
        "Not met on this machine: the kernel runs on one core. What would meet 7 ms at 100k "
        "vertices, in the order we would try it: (1) the clamp's blocks share no vertex, so the "
        "edges inside blocks can be fixed block-parallel (Numba `prange` over blocks, then the few "
        "edges between blocks), up to the core count; (2) the smoothing is a Jacobi step, parallel "
        "per vertex; (3) float32 work arrays halve the memory traffic; (4) the seed's own fallback "
        "(3 sweeps, 1 smoothing iteration: the rows above) and its dirty flags, which already skip "
        "settled blocks on typical frames. (1) and (2) on 2 cores would give at most about half the "
        "single-core figures.", "",
        "## The bunny landing at 5 m/s (36 frames)", "",
        "Worst frame = the one with the most edges over 135 % of their rest length with the pass off. "
        "Flips: triangles whose normal points against their rest normal.", "",
        "| material | pass | worst frame | edges > 135 % | max stretch | min | flipped | max stretch, all frames "
        "| min, all frames | flips, all frames |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|", *landing, ""])
    (REPO / "benchmarks" / "quality.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
