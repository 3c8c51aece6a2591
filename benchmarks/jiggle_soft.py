"""Jiggle chains on a soft body (issue 21): what a bunny-sized surface costs a rig per frame (not a
test; never fails on speed).

Usage::

    .venv/bin/python benchmarks/jiggle_soft.py [--frames 48]

A tail of 5 bones (4 cm each, Collision Radius 2 cm) sags onto the Stanford bunny
(../shared/meshes/stanford-bunny.obj, 35,947 vertices, 69,451 triangles, Z up), 24 fps, 240 steps a
second. The bunny stands for a soft body: every frame its surface is new (as a soft body's shown
surface is), built again from its vertices. Measured per frame, side by side in one run:

1. no soft body: the rig alone (the compiled kernel when loaded, else NumPy);
2. the bunny as the driver gives it (``colliders.clipped``): the collider of the triangles near
   the tails only, the rig on the NumPy path (as with any mesh collider);
3. the bunny as one whole ``colliders.mesh_collider`` a frame (what the clipped one avoids).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
sys.path.insert(0, os.path.join(REPO, "tests"))

from jiggle_scenes import chain_rig, rig_pose  # noqa: E402
from tetrig_addon import colliders, jiggle  # noqa: E402
from tetrig_addon.body import Control  # noqa: E402
from tetrig_addon.colliders import clipped  # noqa: E402
from tetrig_addon.jiggle import backend  # noqa: E402

FPS = 24
BUNNY = os.path.join(REPO, "..", "shared", "meshes", "stanford-bunny.obj")


def bunny() -> tuple[np.ndarray, np.ndarray]:
    """The bunny's vertices float64 [V, 3] [m] (Y up turned Z up) and triangles int32 [T, 3]."""
    verts, tris = [], []
    with open(BUNNY) as handle:
        for line in handle:
            parts = line.split()
            if parts and parts[0] == "v":
                verts.append([float(x) for x in parts[1:4]])
            elif parts and parts[0] == "f":
                tris.append([int(p.split("/")[0]) - 1 for p in parts[1:4]])
    v = np.array(verts)
    return np.stack([v[:, 0], -v[:, 2], v[:, 1]], axis=1), np.array(tris, dtype=np.int32)


def run(kind: str, frames: int, verts: np.ndarray, tris: np.ndarray, edge: float) -> tuple[float, np.ndarray]:
    """ms per frame of the rig's steps with the bunny as ``kind``, and the last tails [5, 3]."""
    model, _, offsets = chain_rig(1, 5, length=0.04, stiffness=4.0, damping=12.0, radius=0.02)
    settings = jiggle.JiggleSettings(frame_dt=1.0 / FPS, substeps=jiggle.substeps_for(240.0, 1.0 / FPS),
                                     gravity=(0.0, 0.0, -9.81))
    body = jiggle.RigBody(model, settings)
    root = np.array([-0.03, -0.06, 0.24])  # over the bunny, the chain along +y
    pose = rig_pose(model, offsets, root)
    state = body.rest_state(Control(settings.frame_dt, settings.gravity, (pose, pose)))
    start = time.perf_counter()
    for _ in range(frames):
        moved = verts + 0.0  # a soft body's surface is new every frame
        if kind == "clipped":  # as the driver gives it: built around the tails at the frame's start
            soft: tuple = (clipped.clipped_surface(moved, tris, edge),)
            clipped.around(soft[0], state.chain.positions, 0.02)
        elif kind == "whole":
            soft = (colliders.mesh_collider(moved, tris, thickness_outer=0.0),)
        else:
            soft = ()
        state = body.step(state, Control(settings.frame_dt, settings.gravity, (pose, pose), soft))
    return (time.perf_counter() - start) / frames * 1000, state.chain.positions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=48)
    args = parser.parse_args()
    backend.warm_up()
    verts, tris = bunny()
    corners = verts[tris]
    edge = 2.0 * float(np.linalg.norm(corners - np.roll(corners, 1, axis=1), axis=2).max())
    alone, free = run("none", args.frames, verts, tris, edge)
    ms, tails = run("clipped", args.frames, verts, tris, edge)
    whole, _ = run("whole", max(args.frames // 8, 2), verts, tris, edge)
    surface = colliders.mesh_collider(verts, tris, thickness_outer=0.0)
    gap = colliders.signed_distance(surface, tails)[0] - 0.02
    print(f"bunny {len(verts)} vertices, {len(tris)} triangles; {args.frames} frames, tail of 5 bones")
    print(f"no soft body:            {alone:8.2f} ms/frame (kernel: {backend.kernel_ready()})")
    print(f"bunny, clipped collider: {ms:8.2f} ms/frame; closest tail {gap.min() * 1000:.3f} mm outside its radius;"
          f" tip at z = {tails[-1, 2]:.3f} m (without the bunny {free[-1, 2]:.3f} m)")
    print(f"bunny, whole collider:   {whole:8.2f} ms/frame")
    print(f"load average: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
