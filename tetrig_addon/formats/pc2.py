"""PC2 point caches (the format of Blender's Mesh Cache modifier, 3ds Max and most DCCs).

Layout, little-endian, no padding::

    char[12]  signature   b"POINTCACHE2\\0"
    int32     version     1
    int32     point_count
    float32   start_frame
    float32   sample_rate  frames between samples (1.0: one sample per frame)
    int32     sample_count
    float32   [sample_count, point_count, 3] positions, sample after sample

Blender's Mesh Cache modifier (type PC2, time mode "Frame") reads sample ``scene frame − Frame
Start`` and ignores ``start_frame``; set the modifier's Frame Start to the first baked frame.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass

import numpy as np

from ..errors import TetRigInputError

SIGNATURE = b"POINTCACHE2\0"
VERSION = 1
_HEADER = struct.Struct("<12siiffi")
HEADER_SIZE = _HEADER.size  # 32 bytes


@dataclass(frozen=True)
class PointCache:
    """A PC2 file's contents.

    Attributes:
        positions: float32 [sample_count, point_count, 3], in the mesh's object space.
        start_frame: frame of the first sample.
        sample_rate: frames between two samples.
    """

    positions: np.ndarray
    start_frame: float
    sample_rate: float = 1.0

    @property
    def sample_count(self) -> int:
        return int(self.positions.shape[0])

    @property
    def point_count(self) -> int:
        return int(self.positions.shape[1])


def write(path: str | os.PathLike, positions: np.ndarray, start_frame: float,
          sample_rate: float = 1.0) -> None:
    """Write a PC2 file.

    Args:
        positions: float [sample_count, point_count, 3]; stored as float32.
        start_frame: frame of the first sample.
        sample_rate: frames between samples (> 0).

    Raises:
        TetRigInputError: bad shape, no samples, non-finite positions or a bad sample rate.
        OSError: the file cannot be written.
    """
    data = np.asarray(positions)
    if data.ndim != 3 or data.shape[2] != 3 or data.shape[0] == 0:
        raise TetRigInputError(f"PC2 positions must be [samples, points, 3] with at least one "
                               f"sample, got the shape {data.shape}.")
    if not np.all(np.isfinite(data)):
        raise TetRigInputError("PC2 positions must be finite.")
    if not sample_rate > 0.0:
        raise TetRigInputError("The PC2 sample rate must be positive.")
    header = _HEADER.pack(SIGNATURE, VERSION, data.shape[1], float(start_frame), float(sample_rate),
                          data.shape[0])
    with open(path, "wb") as fh:
        fh.write(header)
        fh.write(np.ascontiguousarray(data, dtype="<f4").tobytes())


def read(path: str | os.PathLike) -> PointCache:
    """Read a PC2 file.

    Raises:
        TetRigInputError: not a PC2 file, an unknown version, or a truncated file.
        OSError: the file cannot be read.
    """
    with open(path, "rb") as fh:
        head = fh.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE or not head.startswith(SIGNATURE):
            raise TetRigInputError(f"{os.fspath(path)} is not a PC2 point cache.")
        _, version, point_count, start_frame, sample_rate, sample_count = _HEADER.unpack(head)
        if version != VERSION:
            raise TetRigInputError(f"{os.fspath(path)}: PC2 version {version} is not supported.")
        body = fh.read()
    expected = sample_count * point_count * 3 * 4
    if point_count < 0 or sample_count < 0 or len(body) < expected:
        raise TetRigInputError(f"{os.fspath(path)} is truncated: {len(body)} of {expected} bytes.")
    positions = np.frombuffer(body[:expected], dtype="<f4").reshape(sample_count, point_count, 3)
    return PointCache(positions.astype(np.float32), float(start_frame), float(sample_rate))
