"""A jiggle bake as an ID property of the armature: each jiggle bone's turn per frame, in the .blend.

``armature.tetrig_jiggle["_bake"]`` (inside the add-on's own settings group, so the Custom
Properties panel never lists it):

- ``version`` (int): ``FORMAT_VERSION``;
- ``frame_start``, ``frame_end`` (int): the baked frames, inclusive;
- ``bones`` (str): the jiggle bones' names when baked, one a line, in the stored order;
- ``fingerprint`` (str): digest of what the motion depended on (``kind.motion_key``);
  another current value means the bake is *outdated* (it still plays, as a soft body's bake does);
- ``turns`` (float64 array, F·n·9): what each bone's jiggle constraint applies, frame after
  frame, bone after bone, a 3×3 matrix row by row.

float64, so a baked frame shows exactly what the live frame showed (100 bones × 250 frames: 1.8 MB).
Playback of a baked frame writes the stored matrices and simulates nothing. A bone renamed since
baking no longer matches: the bake is kept but not played (the panel says so) until it is baked
again or freed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import bpy
import numpy as np

from .properties import rig_settings

PROPERTY = "_bake"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class BakeInfo:
    """The header of a stored jiggle bake."""

    frame_start: int
    frame_end: int
    bones: tuple[str, ...]
    fingerprint: str

    @property
    def frame_count(self) -> int:
        return self.frame_end - self.frame_start + 1

    @property
    def nbytes(self) -> int:
        return self.frame_count * len(self.bones) * 9 * 8

    def describe(self) -> str:
        return f"frames {self.frame_start}–{self.frame_end}, {len(self.bones)} bones, {self.nbytes / 1e6:.2f} MB"


def _group(obj: bpy.types.Object) -> Any:
    return rig_settings(obj).get(PROPERTY)


def write(obj: bpy.types.Object, info: BakeInfo, turns: np.ndarray) -> None:
    """Store a bake on the armature ``obj``, replacing any earlier one.

    Args:
        turns: float [frame_count, bone_count, 3, 3].
    """
    data = np.ascontiguousarray(turns, dtype=np.float64)
    expected = (info.frame_count, len(info.bones), 3, 3)
    if data.shape != expected:
        raise ValueError(f"jiggle bake has the shape {data.shape}, expected {expected}")
    rig_settings(obj)[PROPERTY] = {
        "version": FORMAT_VERSION, "frame_start": int(info.frame_start), "frame_end": int(info.frame_end),
        "bones": "\n".join(info.bones), "fingerprint": info.fingerprint, "turns": data.ravel(),
    }


def info(obj: bpy.types.Object) -> BakeInfo | None:
    """The header of the rig's bake, or ``None`` (none, or malformed)."""
    group = _group(obj)
    if group is None or not hasattr(group, "keys"):
        return None
    try:
        if int(group["version"]) != FORMAT_VERSION:
            return None
        header = BakeInfo(int(group["frame_start"]), int(group["frame_end"]),
                          tuple(str(group["bones"]).split("\n")) if group["bones"] else (),
                          str(group["fingerprint"]))
        turns = group["turns"]
    except (KeyError, TypeError, ValueError):
        return None
    if getattr(turns, "typecode", None) != "d" or len(turns) != header.frame_count * len(header.bones) * 9:
        return None
    return header


def frame(obj: bpy.types.Object, bones: tuple[str, ...], frame_number: int) -> np.ndarray | None:
    """The baked turns at a frame, float64 [n, 3, 3] in the order of ``bones``, or ``None`` when
    that frame is not baked or the bake was made for other bones (renamed, added, removed)."""
    header = info(obj)
    if header is None or header.bones != tuple(bones) or not header.frame_start <= frame_number <= header.frame_end:
        return None
    size = len(bones) * 9
    start = (frame_number - header.frame_start) * size
    flat = np.frombuffer(_group(obj)["turns"], dtype=np.float64)
    return flat[start:start + size].reshape(-1, 3, 3).copy()


def clear(obj: bpy.types.Object) -> bool:
    """Remove the bake; returns whether there was one."""
    if _group(obj) is None:
        return False
    del rig_settings(obj)[PROPERTY]
    return True
