"""Scrambled and flattened models recover their shape (issue 24; not a test: prints and writes a
table, never fails).

Usage::

    .venv/bin/python benchmarks/scramble.py [--meshes teapot,spot,...] [--modes XPBD,CONTINUUM]
        [--starts scrambled,flattened] [--seconds 10] [--seed 0] [--global-iterations 0]
        [--iterations 1] [--seeds 8] [--numpy] [--out benchmarks/scramble.md]

The stability test of Chen et al. 2024 ("Vertex Block Descent", ACM TOG 43(4)): every control point
of a default cage (``build_cage(points)``) is scattered uniformly at random inside the cage's
bounding box (a fixed seed per mesh), or the cage is flattened onto the plane z = its lowest z,
and it steps with no gravity from rest. Meshes from ``../shared/meshes``, turned Y-up → Z-up,
centred and scaled so the longest side of their bounding box is ``SIZE`` (0.6 m); density
1000 kg/m³, E = 1e5 Pa and the other ``SimSettings`` defaults (K = 1e6 Pa, damping 1/s, 240 steps
per second at 24 fps, 1 sweep), the compiled kernel unless ``--numpy``.

The shape error: after the best rigid fit (Kabsch, no mirror) of the rest control points onto the
current ones, the largest point distance as a share of the rest cage's bounding-box diagonal
(the RMS one at 10 s too). Issue 24 asks for < 1 % within 10 s with no inverted tet at the end.
Which runs recover depends on the scattering: ``--seeds N`` adds a second table, the scrambled
start with seeds 0 to N − 1 (the shape error at the end and the inverted tets of each).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)

from tetrig_addon import solver  # noqa: E402
from tetrig_addon.cage import build_cage  # noqa: E402
from tetrig_addon.geometry import tet_volumes  # noqa: E402

MESHES = os.path.join(os.path.dirname(REPO), "shared", "meshes")
FPS = 24
SIZE = 0.6  # longest side of every mesh's bounding box [m]
MARKS = (1.0, 2.0, 5.0, 10.0)  # seconds at which the shape error is reported
ALL_MESHES = ("teapot", "spot", "stanford-bunny", "cow", "suzanne")
STARTS = ("scrambled", "flattened")
MODE_NAMES = {solver.MODE_SPRINGS: "Springs", solver.MODE_CONTINUUM: "Continuum"}


def mesh_points(name: str) -> np.ndarray:
    """A shared mesh's vertices, Y-up → Z-up, centred, longest side ``SIZE``: float64 [N, 3] [m]."""
    with open(os.path.join(MESHES, f"{name}.obj")) as f:
        rows = [line.split()[1:4] for line in f if line.startswith("v ")]
    p = np.asarray(rows, dtype=np.float64)[:, [0, 2, 1]] * [1.0, -1.0, 1.0]
    p = p - 0.5 * (p.min(0) + p.max(0))
    return p * (SIZE / np.ptp(p, axis=0).max())


def scene(name: str, density: float = 1000.0) -> solver.Model:
    """The default cage's model of mesh ``name`` (no pins)."""
    cage = build_cage(mesh_points(name))
    return solver.build_model(cage.control_points, cage.tets, density=density)


def start_positions(model: solver.Model, start: str, seed: int = 0) -> np.ndarray:
    """float64 [n, 3]: the rest control points scrambled uniformly in their bounding box (``seed``)
    or flattened to z = their lowest z."""
    rest = model.rest_positions
    if start == "scrambled":
        rng = np.random.default_rng(seed)
        return rng.uniform(rest.min(0), rest.max(0), size=rest.shape)
    if start == "flattened":
        flat = rest.copy()
        flat[:, 2] = rest[:, 2].min()
        return flat
    raise ValueError(f"unknown start {start!r}")


def shape_error(rest: np.ndarray, current: np.ndarray) -> tuple[float, float]:
    """(largest, RMS) distance of the current points from the best rigid fit of ``rest`` onto them
    (Kabsch, rotations only), as shares of the rest bounding-box diagonal."""
    rc, cc = rest.mean(0), current.mean(0)
    u, _, vt = np.linalg.svd((rest - rc).T @ (current - cc))
    r = (u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt).T
    d = np.linalg.norm(current - ((rest - rc) @ r.T + cc), axis=1)
    diagonal = float(np.linalg.norm(np.ptp(rest, axis=0)))
    return float(d.max() / diagonal), float(np.sqrt(np.mean(d * d)) / diagonal)


def inverted_tets(model: solver.Model, positions: np.ndarray) -> np.ndarray:
    """int [k]: the tets whose signed volume is not positive."""
    return np.flatnonzero(tet_volumes(positions, model.tets) <= 0.0)


@dataclass
class Run:
    """One mesh, mode and start: shape errors (largest) at ``MARKS``, the RMS one and the
    inverted tets at the end, wall time [s]."""

    errors: list
    rms: float
    inverted: int
    seconds: float
    final: np.ndarray


def run(model: solver.Model, settings: solver.SimSettings, start: np.ndarray, seconds: float = 10.0,
        use_kernel: bool = True, step=None) -> Run:
    """Step ``model`` from rest velocities at ``start`` for ``seconds`` at 24 fps; ``step`` replaces
    ``solver.step`` (a prototype's)."""
    step = step or solver.step
    state = solver.rest_state(model)
    state.positions[:] = start
    frames = int(round(seconds * FPS))
    marks = {int(round(m * FPS)) for m in MARKS if m <= seconds}
    errors = []
    t0 = time.perf_counter()
    for frame in range(1, frames + 1):
        state = step(model, state, settings, 1.0 / FPS, use_kernel=use_kernel)
        if frame in marks:
            errors.append(shape_error(model.rest_positions, state.positions)[0])
    wall = time.perf_counter() - t0
    return Run(errors, shape_error(model.rest_positions, state.positions)[1],
               int(inverted_tets(model, state.positions).shape[0]), wall, state.positions)


def settings_for(mode: str, **overrides) -> solver.SimSettings:
    """The defaults with no gravity in ``mode``."""
    overrides.setdefault("substeps", solver.substeps_for(solver.DEFAULT_STEPS_PER_SECOND, 1.0 / FPS))
    return solver.SimSettings(mode=mode, gravity=(0.0, 0.0, 0.0), **overrides).validated()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meshes", default=",".join(ALL_MESHES))
    parser.add_argument("--modes", default=f"{solver.MODE_SPRINGS},{solver.MODE_CONTINUUM}")
    parser.add_argument("--starts", default=",".join(STARTS))
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--global-iterations", type=int, default=0)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=0, help="also the scrambled start with seeds 0..N-1")
    parser.add_argument("--numpy", action="store_true", help="step with the NumPy reference")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "scramble.md"))
    args = parser.parse_args()
    if not args.numpy:
        from tetrig_addon.solver import backend
        backend.warm_up()
        if not backend.kernel_ready():
            raise backend.BackendUnavailable(backend.status())
    marks = [m for m in MARKS if m <= args.seconds]
    header = ("| Mesh | Cage | Mode | Start | " + " | ".join(f"{m:g} s" for m in marks)
              + " | RMS at end | Inverted at end | Wall [s] |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    print(header)
    for name in args.meshes.split(","):
        model = scene(name)
        cage = f"{model.particle_count} pts, {model.tet_count} tets"
        for mode in args.modes.split(","):
            settings = settings_for(mode, global_iterations=args.global_iterations, iterations=args.iterations)
            for start in args.starts.split(","):
                r = run(model, settings, start_positions(model, start, args.seed), args.seconds,
                        use_kernel=not args.numpy)
                row = (f"| {name} | {cage} | {MODE_NAMES.get(mode, mode)} | {start} | "
                       + " | ".join(f"{100 * e:.2f} %" for e in r.errors)
                       + f" | {100 * r.rms:.2f} % | {r.inverted} | {r.seconds:.1f} |")
                lines.append(row)
                print(row, flush=True)
    if args.seeds:
        lines += ["", seed_table(args)]
    note = (f"\n`{' '.join(['benchmarks/scramble.py'] + sys.argv[1:])}` on {platform.node()}, "
            f"{'NumPy reference' if args.numpy else 'compiled kernel'}, seed {args.seed}, "
            f"global iterations {args.global_iterations}, sweeps {args.iterations}. Shape error: the largest "
            f"control-point distance from the best rigid fit of the rest cage, share of its bounding-box "
            f"diagonal; meshes scaled to {SIZE} m on their longest side. Continuum from a scrambled start is "
            f"chaotic (round-off parts the backends within one substep: docs/solver-notes.md, stop 31), so its "
            f"scrambled rows are one draw; Springs and the flattened rows are reproducible.\n")
    with open(args.out, "w") as f:
        f.write("# Scrambled and flattened models recover (issue 24)\n\n" + "\n".join(lines) + "\n" + note)
    print(note)


def seed_table(args: argparse.Namespace) -> str:
    """The markdown table of the scrambled start over seeds 0..``args.seeds`` − 1: per mesh and mode,
    how many recovered (< 1 % with no inverted tet at the end) and each seed's figures."""
    header = ("| Mesh | Mode | Recovered | " + " | ".join(f"seed {s}" for s in range(args.seeds)) + " |")
    lines = [header, "|" + "---|" * (header.count("|") - 1)]
    print(header)
    for name in args.meshes.split(","):
        model = scene(name)
        for mode in args.modes.split(","):
            settings = settings_for(mode, global_iterations=args.global_iterations, iterations=args.iterations)
            runs = [run(model, settings, start_positions(model, "scrambled", seed), args.seconds,
                        use_kernel=not args.numpy) for seed in range(args.seeds)]
            good = sum(r.errors[-1] < 0.01 and r.inverted == 0 for r in runs)
            row = (f"| {name} | {MODE_NAMES.get(mode, mode)} | {good} of {args.seeds} | "
                   + " | ".join(f"{100 * r.errors[-1]:.1f} % / {r.inverted}" for r in runs) + " |")
            lines.append(row)
            print(row, flush=True)
    return "\n".join(lines)


if __name__ == "__main__":
    main()
