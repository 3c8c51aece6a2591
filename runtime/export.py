"""Reading a rig back out of the .blend: the seed's four arrays, exactly as stored."""

from __future__ import annotations

import os

import bpy
import numpy as np

from ..tetrig_addon import seed_json
from .properties import object_settings
from .mesh_io import mesh_of
from . import binding_store, cage_object


class ExportError(RuntimeError):
    """The object's rig cannot be exported (missing cage or stale binding)."""


def seed_data(obj: bpy.types.Object) -> seed_json.SeedData:
    """The seed's arrays of a bound object, read from its cage mesh and binding attributes.

    Raises:
        ExportError: no cage, an edited cage, or a binding that no longer matches the mesh.
    """
    cage = object_settings(obj).cage
    if cage is None:
        raise ExportError(f"{obj.name} has no cage")
    cage_data = cage_object.read(cage)
    bound = binding_store.load(mesh_of(obj))
    if cage_data is None or bound is None:
        raise ExportError(f"{obj.name}: the binding is stale; build the cage again")
    control_points, tets = cage_data
    indices, weights = bound
    return seed_json.SeedData(bones_rest=control_points, tets=tets,
                              vertex_bones=indices, weights=weights.astype(np.float64))


def write_seed_json(obj: bpy.types.Object, path: str | os.PathLike) -> seed_json.SeedData:
    """Write the seed JSON of ``obj`` to ``path`` and return what was written."""
    data = seed_data(obj)
    seed_json.write(bpy.path.abspath(os.fspath(path)), data)
    return data
