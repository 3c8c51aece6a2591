"""The animation JSON: control-point positions per frame, beside the seed's JSON.

``{"format": "tetrig-animation", "version": 1, "frame_start": int, "frame_end": int, "fps": float,
"control_points": F×Q×3 floats}`` — F = frame_end − frame_start + 1 frames, Q control points in
the order of the seed's ``bones_rest``, in the mesh's object space (the same space as
``bones_rest``), so that a vertex at frame f is Σₖ weights[v][k] · control_points[f][vertex_bones[v][k]].
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from .errors import TetRigInputError

FORMAT = "tetrig-animation"
VERSION = 1


@dataclass(frozen=True)
class AnimationData:
    """Per-frame control points of one soft body.

    Attributes:
        frame_start: first frame (int).
        fps: frames per second (scene fps / fps base).
        control_points: float [frame_count, control_point_count, 3] [m], object space.
    """

    frame_start: int
    fps: float
    control_points: np.ndarray

    @property
    def frame_end(self) -> int:
        return self.frame_start + int(self.control_points.shape[0]) - 1

    def to_dict(self) -> dict:
        """Plain values, ready for ``json.dump`` (float32 data is widened exactly to float64)."""
        return {"format": FORMAT, "version": VERSION, "frame_start": int(self.frame_start),
                "frame_end": self.frame_end, "fps": float(self.fps),
                "control_points": np.asarray(self.control_points, dtype=np.float64).tolist()}


def write(path: str | os.PathLike, data: AnimationData) -> None:
    """Write ``data`` as JSON (UTF-8, compact).

    Raises:
        TetRigInputError: the array is not [F, Q, 3] with F ≥ 1, or is not finite.
        OSError: the file cannot be written.
    """
    cps = np.asarray(data.control_points)
    if cps.ndim != 3 or cps.shape[2] != 3 or cps.shape[0] == 0:
        raise TetRigInputError(f"control_points must be [frames, points, 3], got {cps.shape}.")
    if not np.all(np.isfinite(cps)):
        raise TetRigInputError("control_points must be finite.")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data.to_dict(), fh, separators=(",", ":"))


def read(path: str | os.PathLike) -> AnimationData:
    """Read an animation JSON file.

    Raises:
        TetRigInputError: another format or version, a missing key, or inconsistent frame counts.
        OSError: the file cannot be read.
    """
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    name = os.fspath(path)
    if raw.get("format") != FORMAT or raw.get("version") != VERSION:
        raise TetRigInputError(f"{name} is not a {FORMAT} file of version {VERSION}.")
    missing = [k for k in ("frame_start", "frame_end", "fps", "control_points") if k not in raw]
    if missing:
        raise TetRigInputError(f"{name} is missing the keys {missing}.")
    cps = np.asarray(raw["control_points"], dtype=np.float64)
    if cps.ndim != 3 or cps.shape[2] != 3:
        raise TetRigInputError(f"{name}: control_points must be [frames, points, 3].")
    data = AnimationData(frame_start=int(raw["frame_start"]), fps=float(raw["fps"]), control_points=cps)
    if data.frame_end != int(raw["frame_end"]):
        raise TetRigInputError(f"{name}: frame_end {raw['frame_end']} does not match "
                               f"{cps.shape[0]} frames from {data.frame_start}.")
    return data
