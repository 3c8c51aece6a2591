"""The bunny kicked sideways (issue 24): its first swings at default rate against the same cage at
100 times the steps (not a test; prints and writes a table into ``bending.md``, never fails).

Usage::

    .venv/bin/python benchmarks/kick.py [--out benchmarks/bending.md]

The Stanford bunny (``../shared/meshes``), 0.3 m tall, z up, its default Hull cage; the control
points in its lowest tenth pinned; Springs, E = 1e5 Pa, density 1000 kg/m³, damping 1/s, no gravity;
every free point kicked at 1 m/s along x. It steps 12 frames at 24 fps and records the mean x
displacement of the top fifth of the cage: the first swing (its largest in frames 1-3) and the
swing back (its smallest in frames 1-6). Runs: integrator and Global Iterations at 240 steps/s;
references: the same at 24,000 steps/s. Time: milliseconds a frame at the default rate (engine only).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

from bending import write_table  # noqa: E402
from tetrig_addon import solver  # noqa: E402
from tetrig_addon.cage import build_cage  # noqa: E402

MESH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "shared", "meshes", "stanford-bunny.obj")
START, END = "<!-- kick.py table -->", "<!-- end of kick.py table -->"
RUNS = (("IMPLICIT_EULER", 0), ("IMPLICIT_EULER", 1), ("BDF2", 1), ("BDF2", 3))
REFERENCES = (("IMPLICIT_EULER", 0), ("BDF2", 1))


def bunny() -> tuple[solver.Model, np.ndarray]:
    """The pinned bunny's model and its top fifth (bool [points])."""
    with open(MESH, encoding="utf-8") as handle:
        v = np.array([[float(t) for t in line.split()[1:4]] for line in handle if line.startswith("v ")])
    v = v[:, [0, 2, 1]] * np.array([1.0, -1.0, 1.0])  # y up → z up
    v = (v - v.min(0)) * (0.3 / np.ptp(v[:, 2]))
    cage = build_cage(v)
    x0 = cage.control_points
    z = x0[:, 2]
    pinned = z < z.min() + 0.1 * np.ptp(z)
    return solver.build_model(x0, cage.tets, density=1000.0, pinned=pinned), z > z.max() - 0.2 * np.ptp(z)


def swing(model: solver.Model, top: np.ndarray, rate: float, integrator: str, count: int) -> tuple[np.ndarray, float]:
    """The top's mean x displacement [m] after each of 12 frames, and seconds a frame."""
    settings = solver.SimSettings(youngs_modulus=1e5, gravity=(0.0, 0.0, 0.0),
                                  substeps=solver.substeps_for(rate, 1 / 24), global_iterations=count,
                                  integrator=integrator).validated()
    rest = solver.rest_state(model)
    kick = np.zeros_like(rest.positions)
    kick[model.inverse_masses > 0.0, 0] = 1.0
    state = solver.State(rest.positions, kick, rest.rotations)
    out = []
    start = time.perf_counter()
    for _ in range(12):
        state = solver.step(model, state, settings, 1 / 24, use_kernel=True)
        out.append(float((state.positions[top, 0] - model.rest_positions[top, 0]).mean()))
    return np.array(out), (time.perf_counter() - start) / 12


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(HERE, "bending.md"))
    args = parser.parse_args()
    solver.backend.warm_up()
    solver.backend.wait_for_global_step()
    model, top = bunny()
    refs = [swing(model, top, 100 * solver.DEFAULT_STEPS_PER_SECOND, i, c)[0] for i, c in REFERENCES]
    lines = [f"`benchmarks/kick.py`, {time.strftime('%Y-%m-%d')}, {platform.machine()}, compiled kernel: the bunny's "
             f"Hull cage ({model.particle_count} points, {model.tet_count} tets) pinned at its base and kicked "
             "sideways at "
             "1 m/s (Springs, E = 1e5 Pa, no gravity); the top's mean sideways displacement. First swing = its largest "
             "in frames 1-3, swing back = its smallest in frames 1-6; references at 24,000 steps/s: A "
             f"{REFERENCES[0][0]} with {REFERENCES[0][1]} global iterations, B {REFERENCES[1][0]} with "
             f"{REFERENCES[1][1]}. Issue 24 asks for the first swing within 15 %.", "",
             "| integrator, global iterations | frames 1-12 (mm) | first swing, swing back | error A | error B "
             "| ms a frame |",
             "|---|---|---|---|---|---|"]

    def figures(x: np.ndarray) -> tuple[float, float]:
        return float(x[:3].max()), float(x[:6].min())

    for name, (integrator, count) in [("reference A", REFERENCES[0]), ("reference B", REFERENCES[1])]:
        x = refs[0] if name.endswith("A") else refs[1]
        lines.append(f"| {name}: {integrator}, {count} | " + " ".join(f"{1000 * a:.1f}" for a in x)
                     + " | {:.1f}, {:.1f} mm | | | |".format(*(1000 * f for f in figures(x))))
    for integrator, count in RUNS:
        x, seconds = swing(model, top, solver.DEFAULT_STEPS_PER_SECOND, integrator, count)
        f = figures(x)
        errors = [" / ".join(f"{100 * (a - b) / abs(b):+.0f} %" for a, b in zip(f, figures(r))) for r in refs]
        lines.append(f"| {integrator}, {count} | " + " ".join(f"{1000 * a:.1f}" for a in x)
                     + f" | {1000 * f[0]:.1f}, {1000 * f[1]:.1f} mm | {errors[0]} | {errors[1]} "
                     f"| {1000 * seconds:.1f} |")
        print(lines[-1], flush=True)
    write_table(args.out, "\n".join(lines) + "\n", START, END)
    print("written", args.out)


if __name__ == "__main__":
    main()
