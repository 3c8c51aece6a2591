"""A bake as an ID property of the cage object: control-point positions per frame, saved in the .blend.

``cage.tetrig["_bake"]`` is an ID-property group inside the cage's TetRig settings (so the Custom
Properties panel, which turns every group it shows into Python lists on each redraw, never lists
it; it shows under the add-on's own ``tetrig`` group only with Developer Extras on):

- ``version`` (int): ``FORMAT_VERSION``;
- ``frame_start``, ``frame_end`` (int): the baked frames, inclusive;
- ``control_point_count`` (int): Q, the cage's vertex count when baked;
- ``bind_id`` (str): the soft body's binding id when baked (a new Build Cage makes a new cage
  anyway, so this only guards against a cage that was reassigned by hand);
- ``fingerprint`` (str): digest of everything the motion depended on
  (the kind's ``motion_key``: ``cage/model``, ``surface/kind``); another current value means the bake is *outdated*;
- ``inputs`` (str, optional): ``scene_inputs.DIGEST_HEX`` hex digits per frame, what the motion
  took from the scene at that frame (``scene_inputs.motion_digest``: the animated world matrix it
  follows, the colliders); playback compares each shown frame's with it to tell a bake outdated
  by an animation or collider edit;
- ``positions`` (float32 array, F·Q·3): control points in the cage's (= the soft body's) object
  space, frame after frame, point after point, x y z.

A Surface body (``runtime/surface``) has no cage: its bake lives on the object itself
(``obj.tetrig["_bake"]``, ``holder``), its "control points" are the mesh's own vertices (each one's
own particle), and a body that tears also stores, per frame, which edges are torn and how far the
face corners of split vertices are from their vertex (``write``'s ``extra``, ``runtime/surface/bake_frames``):

- ``torn_edges`` (int32), ``torn_counts`` (int32 [F]): the torn edges' indices, frame after frame,
  and how many each frame has;
- ``split_corners`` (int32), ``split_offsets`` (float32, ×3), ``split_counts`` (int32 [F]): the face
  corners whose particle is not their vertex's own, their offset in object space, and how many
  each frame has (only those: most corners of a torn sheet are not split).

Why there: the cage's vertices are the control points, so a bake lives and dies with the cage it
belongs to (Build Cage replaces the cage, Remove deletes it). ID-property arrays are stored as
raw binary in the .blend (4 bytes a float32), need no external file, survive save/reload, undo
and Append, and read back without a copy through the buffer protocol, one frame at a time.
float32 is the precision of mesh coordinates and of the ``tetrig_offset`` attribute the frames
are shown with: 759 control points × 120 frames take 1.09 MB. The dense mesh is never stored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np

from . import frames, mesh_io
from .properties import is_surface, object_settings

PROPERTY = "_bake"  # a key inside ``Object.tetrig``; no registered setting starts with "_"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class BakeInfo:
    """The header of a stored bake (everything but the positions)."""

    frame_start: int
    frame_end: int
    control_point_count: int
    bind_id: str
    fingerprint: str
    inputs: str = ""

    @property
    def frame_count(self) -> int:
        return self.frame_end - self.frame_start + 1

    @property
    def nbytes(self) -> int:
        """Size of the stored positions [bytes]."""
        return self.frame_count * self.control_point_count * 3 * 4

    def covers(self, frame: int) -> bool:
        return self.frame_start <= frame <= self.frame_end


@dataclass(frozen=True)
class BakeStatus:
    """What the panel and the render messages show about a soft body's bake."""

    info: BakeInfo
    outdated: bool

    def describe(self) -> str:
        return (f"frames {self.info.frame_start}–{self.info.frame_end}, "
                f"{self.info.nbytes / 1e6:.2f} MB")


def status(obj: bpy.types.Object, current_fingerprint: str | None) -> BakeStatus | None:
    """The bake of a soft body and whether it is outdated (made with other inputs than
    ``current_fingerprint``, or playback showed a baked frame whose scene inputs changed since),
    or ``None`` when it has no valid bake."""
    header = source_bake(obj)
    if header is None:
        return None
    slot = frames.find(obj)
    changed = slot is not None and slot.inputs_changed
    return BakeStatus(info=header, outdated=current_fingerprint != header.fingerprint or changed)


def render_message(obj: bpy.types.Object, scene: bpy.types.Scene, state: BakeStatus | None, prefix: str) -> str:
    """What a render of a soft body says about its bake (``None``: no bake)."""
    if state is None:
        return (f"{prefix}: rendering {obj.name} live (not baked): each frame is simulated before it renders; "
                "baking first is faster")
    info = state.info
    line = f"{prefix}: rendering {obj.name} from its bake (frames {info.frame_start}–{info.frame_end})"
    if state.outdated:
        line += "; the bake is outdated (settings changed since baking): bake again to render the change"
    if scene.frame_start < info.frame_start or scene.frame_end > info.frame_end:
        line += "; frames outside the bake are simulated live"
    return line


def _group(cage: bpy.types.Object) -> Any:
    return object_settings(cage).get(PROPERTY)


def holder(obj: bpy.types.Object) -> bpy.types.Object | None:
    """The object a soft body's bake lives on: its cage, or a Surface body itself."""
    return obj if is_surface(obj) else object_settings(obj).cage


def write(cage: bpy.types.Object, info: BakeInfo, positions: np.ndarray,
          extra: dict[str, np.ndarray] | None = None) -> None:
    """Store a bake on ``cage`` (``holder``), replacing any earlier one.

    Args:
        positions: float [frame_count, control_point_count, 3], object space; stored as float32.
        extra: more arrays to store beside them, by name (a tearing Surface body's tear per
            frame, ``runtime/surface/bake_frames``), or ``None``.
    """
    data = np.ascontiguousarray(positions, dtype=np.float32)
    expected = (info.frame_count, info.control_point_count, 3)
    if data.shape != expected:
        raise ValueError(f"bake positions have the shape {data.shape}, expected {expected}")
    object_settings(cage)[PROPERTY] = {**(extra or {}),
        "version": FORMAT_VERSION,
        "frame_start": int(info.frame_start),
        "frame_end": int(info.frame_end),
        "control_point_count": int(info.control_point_count),
        "bind_id": info.bind_id,
        "fingerprint": info.fingerprint,
        "inputs": info.inputs,
        "positions": data.ravel(),
    }


def info(cage: bpy.types.Object | None) -> BakeInfo | None:
    """The header of the bake on ``cage``, or ``None`` when there is none or it is malformed (an
    unknown version, a wrong array type or length, a cage whose vertex count changed)."""
    if cage is None or cage.type != "MESH":
        return None
    group = _group(cage)
    if group is None or not hasattr(group, "keys"):
        return None
    try:
        if int(group["version"]) != FORMAT_VERSION:
            return None
        result = BakeInfo(frame_start=int(group["frame_start"]), frame_end=int(group["frame_end"]),
                          control_point_count=int(group["control_point_count"]),
                          bind_id=str(group["bind_id"]), fingerprint=str(group["fingerprint"]),
                          inputs=str(group.get("inputs", "")))
        positions = group["positions"]
        typecode = getattr(positions, "typecode", None)
    except (KeyError, TypeError, ValueError):
        return None
    if (typecode != "f" or result.frame_count < 1
            or len(positions) != result.frame_count * result.control_point_count * 3
            or result.control_point_count != len(mesh_io.mesh_of(cage).vertices)):
        return None
    return result


def _positions_buffer(cage: bpy.types.Object) -> np.ndarray:
    """The stored float32 array as a flat NumPy view (valid until the property changes)."""
    return np.frombuffer(_group(cage)["positions"], dtype=np.float32)


def positions_at(cage: bpy.types.Object, frame: int) -> np.ndarray | None:
    """Baked control points at ``frame``: float32 [Q, 3] object space (a copy), or ``None`` when
    the cage has no valid bake of that frame."""
    header = info(cage)
    if header is None or not header.covers(frame):
        return None
    size = header.control_point_count * 3
    start = (frame - header.frame_start) * size
    return _positions_buffer(cage)[start:start + size].reshape(-1, 3).copy()


def all_positions(cage: bpy.types.Object) -> np.ndarray | None:
    """Every baked frame: float32 [frame_count, Q, 3] object space (a copy), or ``None``."""
    header = info(cage)
    if header is None:
        return None
    return _positions_buffer(cage).reshape(header.frame_count, header.control_point_count, 3).copy()


def clear(cage: bpy.types.Object | None) -> bool:
    """Remove the bake from ``cage``; returns whether there was one."""
    if cage is None or _group(cage) is None:
        return False
    del object_settings(cage)[PROPERTY]
    return True


def source_bake(obj: bpy.types.Object) -> BakeInfo | None:
    """The valid bake of a soft body (on its cage, or on a Surface body itself, made with its
    current binding), or ``None``."""
    header = info(holder(obj))
    if header is None or header.bind_id != object_settings(obj).bind_id:
        return None
    return header


def baked_displacements(obj: bpy.types.Object, frame: int) -> np.ndarray | None:
    """Baked control-point displacements of a soft body at ``frame`` in its object space:
    float64 [Q, 3] (what a cage's write-back takes), or ``None`` when ``frame`` is not baked.

    Outdated bakes count: a bake plays back as it was baked until it is freed or baked again.
    """
    if source_bake(obj) is None:
        return None
    cage = holder(obj)
    assert cage is not None  # source_bake found its bake
    positions = positions_at(cage, frame)
    if positions is None:
        return None
    return positions.astype(np.float64) - mesh_io.vertex_positions(mesh_io.mesh_of(cage))


def group(obj: bpy.types.Object) -> Any:
    """The stored bake's ID-property group on ``obj`` (``holder``), or ``None``."""
    return _group(obj)


def frame_slice(group: Any, values: str, counts: str, index: int, width: int, dtype: type) -> np.ndarray | None:
    """Frame ``index``'s rows of a concatenated per-frame array of the bake (``values``, with the
    rows per frame in ``counts``), or ``None`` when it is missing or malformed."""
    if values not in group or counts not in group:
        return None
    per_frame = np.frombuffer(group[counts], dtype=np.int32)
    data: np.ndarray = np.frombuffer(group[values], dtype=dtype)
    if index >= per_frame.shape[0] or data.shape[0] != int(per_frame.sum()) * width:
        return None
    start = int(per_frame[:index].sum())
    return data[start * width:(start + int(per_frame[index])) * width].reshape(-1, width) if width > 1 \
        else data[start:start + int(per_frame[index])]
