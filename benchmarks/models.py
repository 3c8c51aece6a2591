"""What the material models, goals and colliders cost per frame, side by side in one run.

    .venv/bin/python benchmarks/models.py [--frames N]   (writes benchmarks/models.md)

Engine only (no Blender): the Stanford bunny's default cage (every vertex a contact), substeps from
the default 240 steps per second (10 per 24 fps frame), dropped onto a UV-sphere collider. Each row
steps the same frames from the same start with the compiled kernel and with the NumPy reference,
frame by frame in turn; the table gives the median milliseconds per frame. ``benchmarks/run.py``
(``make bench``) runs ``measure`` too and puts the table in results.md. Set OPENBLAS_NUM_THREADS=1
for steady numbers on a shared machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # alone: the working tree's engine and test helpers (run.py sets its own)
    sys.path[:0] = [str(REPO), str(REPO / "tests")]

from conftest import obj_vertices  # noqa: E402
from test_engine_goals_colliders import uv_sphere  # noqa: E402

from tetrig_addon import colliders, solver  # noqa: E402
from tetrig_addon.cage import bind, build_cage  # noqa: E402
from tetrig_addon.solver import backend  # noqa: E402

FPS = 24


def frame_ms(model: solver.Model, settings: solver.SimSettings, frames: int, **step_args) -> tuple[float, float]:
    """Median wall time of one ``solver.step`` [ms] over ``frames`` frames from rest: (kernel,
    NumPy reference), the two stepped in turn."""
    states = {True: solver.rest_state(model), False: solver.rest_state(model)}
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(frames):
        for use_kernel in (True, False):
            t0 = time.perf_counter()
            states[use_kernel] = solver.step(model, states[use_kernel], settings, 1.0 / FPS,
                                             use_kernel=use_kernel, **step_args)
            times[use_kernel].append(time.perf_counter() - t0)
    return 1000.0 * float(np.median(times[True])), 1000.0 * float(np.median(times[False]))


def measure(frames: int) -> tuple[list[tuple[str, float, float]], str]:
    """([(model, kernel ms/frame, NumPy ms/frame)], a note on the scene). Loads the kernel first."""
    backend.warm_up()
    if not backend.kernel_ready():
        raise backend.BackendUnavailable(backend.status())
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
    substeps = solver.substeps_for(solver.DEFAULT_STEPS_PER_SECOND, 1.0 / FPS)
    springs = solver.SimSettings(substeps=substeps).validated()
    rows = [
        ("Springs + volume (default)", *frame_ms(model, springs, frames)),
        ("Continuum (corotated FEM)",
         *frame_ms(model, solver.SimSettings(mode=solver.MODE_CONTINUUM, substeps=substeps).validated(), frames)),
        ("Springs + goals (weights 0.5/1, moving)", *frame_ms(goal_model, springs, frames, goals=moving)),
        (f"Springs + sphere collider ({len(tris):,} triangles)",
         *frame_ms(model, springs, frames, colliders=[sphere])),
    ]
    note = (f"Bunny cage: {cage.control_point_count:,} control points, {cage.tet_count:,} tets, "
            f"{len(pts):,} contact vertices (the OBJ's own vertices); {substeps} substeps at {FPS} fps, no "
            f"ground, falling from rest onto the sphere. Collider build: {build_ms:.1f} ms (once per frame "
            "when it moves, cached when it does not).")
    return rows, note


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=24)
    args = parser.parse_args(argv)
    backend.configure(tempfile.mkdtemp(prefix="tetrig-models-numba-"))  # compiled afresh: never stale
    rows, note = measure(args.frames)
    base = rows[0][1]
    lines = [f"# Material models, goals and colliders: cost per frame ({args.frames} frames)", "",
             note, "", f"Backends: {backend.status()} and the NumPy reference, on the same frames.", "",
             "| model | Numba ms / frame | × default | NumPy ms / frame | NumPy / Numba |",
             "|---|---:|---:|---:|---:|"]
    lines += [f"| {name} | {k:.1f} | {k / base:.2f} | {n:.1f} | {n / k:.1f} |" for name, k, n in rows]
    text = "\n".join(lines) + "\n"
    (REPO / "benchmarks" / "models.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
