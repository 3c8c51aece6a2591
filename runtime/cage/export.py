"""Reading a rig back out of the .blend: the seed's four arrays, exactly as stored."""

from __future__ import annotations

import os
import tempfile

import bpy
import numpy as np

from ...tetrig_addon.formats import seed_json
from ..common.properties import object_settings
from ..common import binding_store
from ..common.soft_body import StaleBindingError
from . import cage_object
from .model import check_binding


class ExportError(RuntimeError):
    """The object's rig cannot be exported (missing cage or stale binding)."""


def output_path(path: str | os.PathLike) -> str:
    """The absolute path an export will write (Blender's ``//`` resolved), checked before anything
    is computed: a name is given, its folder exists and a file can be created there, and an
    existing file there can be overwritten.

    Raises:
        ExportError: with the reason, naming the folder or file.
    """
    raw = os.fspath(path)
    if not raw.strip():
        raise ExportError("no file name given")
    target = os.path.abspath(bpy.path.abspath(raw))
    folder = os.path.dirname(target)
    if os.path.isdir(target):
        raise ExportError(f"{target} is a folder; give a file name")
    if not os.path.isdir(folder):
        raise ExportError(f"the folder {folder} does not exist")
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise ExportError(f"{target} is read-only")
    try:  # os.access cannot see read-only file systems and ACLs: create a file and delete it
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".tetrig-probe-"):
            pass
    except OSError as exc:
        raise ExportError(f"cannot write in the folder {folder}: {exc.strerror or exc}") from exc
    return target


def seed_data(obj: bpy.types.Object) -> seed_json.SeedData:
    """The seed's arrays of a bound object, read from its cage mesh and binding attributes.

    Raises:
        ExportError: no cage, an edited cage, or a binding that no longer matches the mesh (the
            mesh changed since binding).
    """
    cage = object_settings(obj).cage
    if cage is None:
        raise ExportError(f"{obj.name} has no cage")
    try:
        check_binding(obj, fresh=True)
    except StaleBindingError as exc:
        raise ExportError(str(exc)) from exc
    cage_data = cage_object.read(cage)
    bound = binding_store.load(binding_store.holder(obj))
    if cage_data is None or bound is None:
        raise ExportError(f"{obj.name}: the binding is stale; build the cage again")
    control_points, tets = cage_data
    indices, weights = bound
    return seed_json.SeedData(bones_rest=control_points, tets=tets,
                              vertex_bones=indices, weights=weights.astype(np.float64))


def write_seed_json(obj: bpy.types.Object, path: str | os.PathLike) -> seed_json.SeedData:
    """Write the seed JSON of ``obj`` to ``path`` and return what was written."""
    target = output_path(path)
    data = seed_data(obj)
    seed_json.write(target, data)
    return data
