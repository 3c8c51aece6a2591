"""The seed's JSON format (article 000): the cage and binding as four arrays.

``{"bones_rest": Q×3 floats, "tets": M×4 ints, "vertex_bones": N×4 ints, "weights": N×4 floats}``
— control-point rest positions in the mesh's object (local) space, tets as control-point indices,
and each vertex's 4 control-point indices and barycentric weights, in vertex order.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

import numpy as np

from ..errors import TetRigInputError

KEYS = ("bones_rest", "tets", "vertex_bones", "weights")


@dataclass(frozen=True)
class SeedData:
    """The four arrays of the seed's JSON.

    Attributes:
        bones_rest: float64 [control_point_count, 3] [m], object space.
        tets: int32 [tet_count, 4].
        vertex_bones: int32 [vertex_count, 4].
        weights: float64 [vertex_count, 4].
    """

    bones_rest: np.ndarray
    tets: np.ndarray
    vertex_bones: np.ndarray
    weights: np.ndarray

    def to_dict(self) -> dict:
        """Plain lists, ready for ``json.dump``."""
        return {k: getattr(self, k).tolist() for k in KEYS}


def write(path: str | os.PathLike, data: SeedData) -> None:
    """Write ``data`` as the seed's JSON to ``path`` (UTF-8, compact, floats round-trip exactly).

    Raises:
        OSError: the file cannot be written.
    """
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data.to_dict(), fh, separators=(",", ":"))


def read(path: str | os.PathLike) -> SeedData:
    """Read a seed JSON file.

    Returns:
        ``SeedData`` with the array shapes and dtypes documented there.

    Raises:
        OSError: the file cannot be read.
        TetRigInputError: a key is missing or an array has the wrong shape.
    """
    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    missing = [k for k in KEYS if k not in raw]
    if missing:
        raise TetRigInputError(f"{os.fspath(path)} is missing the keys {missing}.")
    arrays: dict[str, np.ndarray] = {
        "bones_rest": np.asarray(raw["bones_rest"], dtype=np.float64).reshape(-1, 3),
        "tets": np.asarray(raw["tets"], dtype=np.int32).reshape(-1, 4),
        "vertex_bones": np.asarray(raw["vertex_bones"], dtype=np.int32).reshape(-1, 4),
        "weights": np.asarray(raw["weights"], dtype=np.float64).reshape(-1, 4),
    }
    if arrays["vertex_bones"].shape != arrays["weights"].shape:
        raise TetRigInputError(f"{os.fspath(path)}: vertex_bones and weights differ in length.")
    return SeedData(**arrays)
