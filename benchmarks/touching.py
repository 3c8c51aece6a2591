"""Bodies that touch (issue 21): what stepping cage soft bodies together costs against stepping one
alone, side by side in one run (not a test; never fails on speed).

Usage::

    .venv/bin/python benchmarks/touching.py [--frames 72] [--quick] [--out benchmarks/touching.md]

Cases, each at the defaults (24 fps, Fit cages, the compiled kernel warmed up first):

1. **Two bunnies.** The Stanford bunny (35,947 vertices, ~8k tets at the Fit default) twice, the
   upper one 3 cm above the lower, dropped onto the ground: every frame of the pair
   (``TouchingBodies.step``) is timed beside a frame of one bunny alone (``CageBody.step``), frame
   for frame in the same run, A B A B. The issue's target: the pair costs at most 2.5× one alone.
   The deepest any shown vertex is inside the other bunny (exact signed distance) is recorded
   every ``--check`` frames.
2. **A pile of Jelly cubes.** Ten 0.3 m cubes (6 × 6 quads a side, cages of about 1k tets, the
   Jelly preset) dropped in layers of 2 × 2 (4, 4 and 2) onto the ground: the set's frame time,
   in the Springs mode (the preset leaves the mode alone, and Springs is the default: what a user
   gets) and in the Continuum mode (in which a stack of Jelly cubes stands), beside one cube alone.
   The issue's target is 50 ms a frame in Blender; this is the engine's part of it.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from conftest import obj_triangles, obj_vertices  # noqa: E402
from engine_scenes import box_polygons, fan_triangles, touching_body  # noqa: E402
from tetrig_addon import colliders, solver  # noqa: E402
from tetrig_addon.body import Control  # noqa: E402
from tetrig_addon.cage import CageBody, METHOD_FIT, bind, blend, build_cage  # noqa: E402
from tetrig_addon.solver import backend, pairs  # noqa: E402
from tetrig_addon.touching import TouchingBodies  # noqa: E402

FALL = Control(1.0 / 24.0, (0.0, 0.0, -9.81))
JELLY = dict(youngs_modulus=1e4, volume_stiffness=1.67e5, damping=0.5)
NAMES = {solver.MODE_SPRINGS: "Springs", solver.MODE_CONTINUUM: "Continuum"}
# The cubes' cage resolution: about 1k tets each (the issue's pile).
PILE_RESOLUTION = 5


def bunny_pair() -> tuple[TouchingBodies, CageBody, list, np.ndarray]:
    """(the pair, one bunny alone (the lower one's twin), the bindings, the triangles)."""
    points = obj_vertices("stanford-bunny")[:, [0, 2, 1]] * [1, -1, 1]  # Y-up to Z-up
    tris = obj_triangles("stanford-bunny")[:, [0, 2, 1]].astype(np.int32)
    points[:, 2] += 0.005 - points[:, 2].min()
    height = float(np.ptp(points[:, 2]))
    settings = solver.SimSettings(ground_height=0.0).validated()
    bodies, bindings = [], []
    for k in range(3):  # the lower, the upper, and the lower's twin that steps alone
        p = points + [0.0, 0.0, (height + 0.03) * (k % 2)]
        cage = build_cage(p, triangles=tris, method=METHOD_FIT)
        b = bind(p, cage.control_points, cage.tets)
        model = solver.build_model(cage.control_points, cage.tets, contacts=(b.control_point_indices, b.weights))
        bodies.append(CageBody(model, settings, triangles=tris))
        bindings.append(b)
    return TouchingBodies(tuple(bodies[:2])), bodies[2], bindings[:2], tris


def deepest(shown: list[np.ndarray], tris: np.ndarray) -> float:
    """[m] the deepest a shown vertex of one bunny is inside the other (0: none)."""
    worst = 0.0
    for a in range(2):
        other = colliders.mesh_collider(shown[1 - a], tris[:, [0, 2, 1]])  # the file's winding is inward
        near = colliders.near(other, shown[a], 0.0)
        if near.any():
            worst = max(worst, -float(colliders.signed_distance(other, shown[a][near])[0].min()))
    return worst


def run_bunnies(frames: int, check: int) -> dict:
    pair, alone, bindings, tris = bunny_pair()
    state = pair.rest_state([FALL, FALL])
    single = alone.rest_state(FALL)
    pair_s, alone_s, worst = [], [], 0.0
    for f in range(1, frames + 1):
        t = time.perf_counter()
        state = pair.step(state, [FALL, FALL])
        pair_s.append(time.perf_counter() - t)
        t = time.perf_counter()
        single = alone.step(single, FALL)
        alone_s.append(time.perf_counter() - t)
        if f % check == 0 or f == frames:
            shown = [blend(s.shown(), b.control_point_indices, b.weights) for s, b in zip(state.states, bindings)]
            worst = max(worst, deepest(shown, tris))
    shown = [blend(s.shown(), b.control_point_indices, b.weights) for s, b in zip(state.states, bindings)]
    return {"pair_ms": 1000 * float(np.mean(pair_s)), "alone_ms": 1000 * float(np.mean(alone_s)),
            "pair_median_ms": 1000 * float(np.median(pair_s)), "alone_median_ms": 1000 * float(np.median(alone_s)),
            "deepest_mm": 1000 * worst, "upper_lowest_z": float(shown[1][:, 2].min()),
            "tets": int(pair.members[0].model.tets.shape[0])}


def pile_offsets(count: int) -> list[list[float]]:
    """Where the cubes start: layers of 2 × 2 cubes 2 cm apart, one on another, the last layer
    what is left (10: 4, 4 and 2)."""
    spots = [[0.32 * (k % 2), 0.32 * ((k // 2) % 2), 0.16 + 0.32 * (k // 4)] for k in range(count)]
    return spots


def run_pile(frames: int, count: int, mode: str) -> dict:
    vertices, corners, sizes = box_polygons(0.3, 6)
    triangles = fan_triangles(corners, sizes)
    settings = solver.SimSettings(ground_height=0.0, mode=mode, **JELLY).validated()
    made = [touching_body(vertices + offset, triangles, settings, resolution=PILE_RESOLUTION)
            for offset in pile_offsets(count)]
    pile = TouchingBodies(tuple(body for body, _ in made))
    controls = [FALL] * count
    state = pile.rest_state(controls)
    one, alone = made[0][0], made[0][0].rest_state(FALL)  # the lowest cube's twin, stepped alone
    times, alone_times = [], []
    for _ in range(frames):
        t = time.perf_counter()
        state = pile.step(state, controls)
        times.append(time.perf_counter() - t)
        t = time.perf_counter()
        alone = one.step(alone, FALL)
        alone_times.append(time.perf_counter() - t)
    tops = [float(blend(s.shown(), b.control_point_indices, b.weights)[:, 2].max()) for s, (_, b) in
            zip(state.states, made)]
    return {"ms": 1000 * float(np.mean(times)), "median_ms": 1000 * float(np.median(times)),
            "alone_ms": 1000 * float(np.mean(alone_times)), "alone_median_ms": 1000 * float(np.median(alone_times)),
            "tets": int(made[0][0].model.tets.shape[0]), "top_m": max(tops), "count": count}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=72)
    parser.add_argument("--check", type=int, default=6, help="frames between penetration checks")
    parser.add_argument("--cubes", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="24 frames, 4 cubes")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "touching.md"))
    args = parser.parse_args()
    frames, cubes = (24, 4) if args.quick else (args.frames, args.cubes)
    backend.warm_up()
    backend.wait_for_global_step()
    pairs._SEARCH.module()  # the compiled search between bodies: loaded after the kernel, waited for here
    bunnies = run_bunnies(frames, args.check)
    piles = {mode: run_pile(frames, cubes, mode) for mode in (solver.MODE_SPRINGS, solver.MODE_CONTINUUM)}
    ratio = bunnies["pair_ms"] / bunnies["alone_ms"]
    lines = [
        "# Bodies that touch: the cost of stepping together (benchmarks/touching.py)",
        "",
        f"{time.strftime('%Y-%m-%d')}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, NumPy {np.__version__}, {frames} frames at 24 fps"
        + (" (--quick)" if args.quick else "") + ".",
        "",
        "| case | ms a frame (mean) | median | against | target | deepest inside |",
        "|---|---|---|---|---|---|",
        f"| one bunny alone ({bunnies['tets']} tets) | {bunnies['alone_ms']:.1f} | {bunnies['alone_median_ms']:.1f} "
        "| | | |",
        f"| two bunnies dropped onto each other | {bunnies['pair_ms']:.1f} | {bunnies['pair_median_ms']:.1f} "
        f"| {ratio:.2f}× one alone | ≤ 2.5× | {bunnies['deepest_mm']:.2f} mm |",
        *(row for mode, pile in piles.items() for row in (
            f"| one Jelly cube alone, {NAMES[mode]} | {pile['alone_ms']:.1f} | {pile['alone_median_ms']:.1f} | | | |",
            f"| a pile of {pile['count']} Jelly cubes ({pile['tets']} tets each), {NAMES[mode]} | {pile['ms']:.1f} "
            f"| {pile['median_ms']:.1f} | {pile['ms'] / pile['alone_ms']:.1f}× one alone | ≤ 50 ms (in Blender) | |")),
        "",
        f"The upper bunny's lowest vertex ends at z = {bunnies['upper_lowest_z']:.4f} m (the lower bunny's top "
        "is about 0.155 m); the piles' tops end at "
        + ", ".join(f"{pile['top_m']:.3f} m ({NAMES[mode]})" for mode, pile in piles.items())
        + " (three layers of 0.3 m cubes).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
