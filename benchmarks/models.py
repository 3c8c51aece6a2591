"""What the material models, goals and colliders cost per frame, side by side in one run.

    .venv/bin/python benchmarks/models.py [--frames N]   (writes benchmarks/models.md)

Engine only (no Blender): the Stanford bunny's default cage (every vertex a contact), 10 substeps
of a 24 fps frame, dropped onto a UV-sphere collider. Each row steps the same number of frames from
the same start; the table gives the median milliseconds per frame and the ratio to the first row.
Set OPENBLAS_NUM_THREADS=1 for steady numbers on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from conftest import obj_vertices  # noqa: E402
from test_engine_goals_colliders import uv_sphere  # noqa: E402

from tetrig_addon import colliders, solver  # noqa: E402
from tetrig_addon.binding import bind  # noqa: E402
from tetrig_addon.cage import build_cage  # noqa: E402

FPS = 24


def frame_ms(model: solver.Model, settings: solver.SimSettings, frames: int, **step_args) -> float:
    """Median wall time of one ``solver.step`` [ms] over ``frames`` frames from rest."""
    state = solver.rest_state(model)
    times = []
    for _ in range(frames):
        t0 = time.perf_counter()
        state = solver.step(model, state, settings, 1.0 / FPS, **step_args)
        times.append(time.perf_counter() - t0)
    return 1000.0 * float(np.median(times))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=24)
    args = parser.parse_args(argv)
    pts = obj_vertices("stanford-bunny")[:, [0, 2, 1]] * [1, -1, 1]  # Y-up → Z-up
    pts = pts - [pts[:, 0].mean(), pts[:, 1].mean(), pts[:, 2].min() - 0.02]  # 2 cm above z = 0
    cage = build_cage(pts)
    b = bind(pts, cage.control_points, cage.tets)
    contacts = (b.control_point_indices, b.weights)
    model = solver.build_model(cage.control_points, cage.tets, contacts=contacts)
    top = cage.control_points[:, 2] > np.percentile(cage.control_points[:, 2], 80)
    goal_model = solver.build_model(cage.control_points, cage.tets, contacts=contacts,
                                    goal_weights=np.where(top, 1.0, 0.5))
    verts, tris = uv_sphere(0.5)
    t0 = time.perf_counter()
    sphere = colliders.mesh_collider(verts - [0.0, 0.0, 0.5], tris)  # its top touches the bunny
    build_ms = 1000.0 * (time.perf_counter() - t0)
    moving = (goal_model.rest_positions, goal_model.rest_positions + [0.01, 0.0, 0.0])
    rows = [
        ("XPBD springs + volume (default)", frame_ms(model, solver.SimSettings(), args.frames)),
        ("Continuum (corotated FEM)",
         frame_ms(model, solver.SimSettings(mode=solver.MODE_CONTINUUM), args.frames)),
        ("XPBD + goals (weights 0.5/1, moving)", frame_ms(goal_model, solver.SimSettings(), args.frames, goals=moving)),
        (f"XPBD + sphere collider ({len(tris):,} triangles)",
         frame_ms(model, solver.SimSettings(), args.frames, colliders=[sphere])),
    ]
    base = rows[0][1]
    lines = [f"# Material models, goals and colliders: cost per frame ({args.frames} frames)", "",
             f"Bunny cage: {cage.control_point_count:,} control points, {cage.tet_count:,} tets, "
             f"{len(pts):,} contact vertices; 10 substeps at {FPS} fps. Collider build: {build_ms:.1f} ms "
             "(once per frame when it moves, cached when it does not).", "",
             "| model | ms / frame | × default |", "|---|---:|---:|"]
    lines += [f"| {name} | {value:.1f} | {value / base:.2f} |" for name, value in rows]
    text = "\n".join(lines) + "\n"
    (REPO / "benchmarks" / "models.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
