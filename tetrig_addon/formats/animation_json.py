"""The animation JSON: control-point positions per frame, beside the seed's JSON.

``{"format": "tetrig-animation", "version": 1, "frame_start": int, "frame_end": int, "fps": float,
"control_points": F×Q×3 floats}`` — F = frame_end − frame_start + 1 frames, Q control points in
the order of the seed's ``bones_rest``, in the mesh's object space (the same space as
``bones_rest``), so that a vertex at frame f is Σₖ weights[v][k] · control_points[f][vertex_bones[v][k]].

When the soft body's quality pass is on (``quality``, seed 003), the file also holds
``"quality": {"max_stretch", "max_compression", "constraint_iterations", "smoothing_weight",
"smoothing_iterations", "edges": E×2 ints, "boundary_vertices": ints, "fixed_vertices": ints}``:
the pass's settings and the mesh's edges, open-border and fixed vertices, all a reader needs to
apply the pass after the blend as TetRig showed it (``vertex_positions`` does both). A reader that
applies the blend alone gets the surface without the pass.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from .. import quality
from ..cage import blend_matrix
from ..errors import TetRigInputError
from .seed_json import SeedData

FORMAT = "tetrig-animation"
VERSION = 1
QUALITY_SETTINGS = ("max_stretch", "max_compression", "constraint_iterations", "smoothing_weight",
                    "smoothing_iterations")


@dataclass(frozen=True)
class QualityBlock:
    """The quality pass the frames were shown with.

    Attributes:
        settings: ``quality.QualitySettings``.
        edges: int [edge_count, 2], the mesh's edges (vertex indices).
        boundary_vertices: int [k], vertices on an edge of one face (smoothed at half weight).
        fixed_vertices: int [m], vertices the pass leaves alone (pinned, goal weight 1).
    """

    settings: quality.QualitySettings
    edges: np.ndarray
    boundary_vertices: np.ndarray
    fixed_vertices: np.ndarray

    def to_dict(self) -> dict:
        out: dict = {k: getattr(self.settings, k) for k in QUALITY_SETTINGS}
        out.update(edges=np.asarray(self.edges).tolist(), boundary_vertices=np.asarray(self.boundary_vertices).tolist(),
                   fixed_vertices=np.asarray(self.fixed_vertices).tolist())
        return out

    @staticmethod
    def from_dict(raw: dict, name: str) -> "QualityBlock":
        """Raises TetRigInputError: a key is missing or a setting is out of range."""
        missing = [k for k in (*QUALITY_SETTINGS, "edges", "boundary_vertices", "fixed_vertices") if k not in raw]
        if missing:
            raise TetRigInputError(f"{name}: its quality block is missing the keys {missing}.")
        settings = quality.QualitySettings(**{k: raw[k] for k in QUALITY_SETTINGS}).validated()
        return QualityBlock(settings, np.asarray(raw["edges"], dtype=np.int64).reshape(-1, 2),
                            np.asarray(raw["boundary_vertices"], dtype=np.int64),
                            np.asarray(raw["fixed_vertices"], dtype=np.int64))


@dataclass(frozen=True)
class AnimationData:
    """Per-frame control points of one soft body.

    Attributes:
        frame_start: first frame (int).
        fps: frames per second (scene fps / fps base).
        control_points: float [frame_count, control_point_count, 3] [m], object space.
        quality: the quality pass the frames were shown with, or ``None`` (it was off).
    """

    frame_start: int
    fps: float
    control_points: np.ndarray
    quality: QualityBlock | None = None

    @property
    def frame_end(self) -> int:
        return self.frame_start + int(self.control_points.shape[0]) - 1

    def to_dict(self) -> dict:
        """Plain values, ready for ``json.dump`` (float32 data is widened exactly to float64)."""
        out = {"format": FORMAT, "version": VERSION, "frame_start": int(self.frame_start),
               "frame_end": self.frame_end, "fps": float(self.fps),
               "control_points": np.asarray(self.control_points, dtype=np.float64).tolist()}
        if self.quality is not None:
            out["quality"] = self.quality.to_dict()
        return out


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
    block = QualityBlock.from_dict(raw["quality"], name) if "quality" in raw else None
    data = AnimationData(frame_start=int(raw["frame_start"]), fps=float(raw["fps"]), control_points=cps,
                         quality=block)
    if data.frame_end != int(raw["frame_end"]):
        raise TetRigInputError(f"{name}: frame_end {raw['frame_end']} does not match "
                               f"{cps.shape[0]} frames from {data.frame_start}.")
    return data


def vertex_positions(seed: SeedData, data: AnimationData, rest_positions: np.ndarray | None = None) -> np.ndarray:
    """The mesh of every frame as TetRig showed it: the seed's blend of the frame's control points,
    then the quality pass when the file has one.

    Args:
        seed: the soft body's seed JSON (``seed_json.read``).
        rest_positions: float [N, 3], the mesh's own vertices; default the blend of ``bones_rest``
            (the same up to the float32 rounding of the weights).

    Returns:
        float64 [frame_count, N, 3], object space.

    Raises:
        TetRigInputError: the files do not belong together (another control-point count, an edge
            or vertex index outside the mesh).
    """
    cps = np.asarray(data.control_points, dtype=np.float64)
    bones = np.asarray(seed.bones_rest, dtype=np.float64)
    if cps.shape[1] != bones.shape[0]:
        raise TetRigInputError(f"The animation has {cps.shape[1]} control points, the rig {bones.shape[0]}.")
    blend = blend_matrix(seed.vertex_bones, seed.weights, bones.shape[0])
    rest = blend @ bones if rest_positions is None else np.asarray(rest_positions, dtype=np.float64)
    plan = laplacian = None
    if data.quality is not None:
        count = rest.shape[0]
        masks = [np.zeros(count, dtype=bool) for _ in range(2)]
        for mask, listed in zip(masks, (data.quality.boundary_vertices, data.quality.fixed_vertices)):
            if listed.size and (listed.min() < 0 or listed.max() >= count):
                raise TetRigInputError(f"The quality block names a vertex outside the mesh's {count}.")
            mask[listed] = True
        plan = quality.build_plan(rest, data.quality.edges, masks[0], masks[1])
        laplacian = quality.affine_laplacian_matrix(plan, bones, seed.vertex_bones)
    out = np.empty((cps.shape[0], rest.shape[0], 3))
    for f in range(cps.shape[0]):
        displacements = cps[f] - bones
        offsets = blend @ displacements
        if plan is not None and data.quality is not None:
            offsets = quality.improve(plan, offsets, data.quality.settings, laplacian @ displacements).displacements
        out[f] = rest + offsets
    return out
