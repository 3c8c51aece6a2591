"""Edits of a body's rest shape, noticed without reading every vertex at every frame.

A binding (and a Surface body's rest) is made from the mesh as it was: its vertex positions and
shape keys, digested by ``binding_store.rest_fingerprint`` (milliseconds on a scan, which once was
paid at every frame). The digest is now kept per mesh and made again only when the mesh may have
changed: Blender lists every edited ID in the depsgraph's updates, for an edit in Edit Mode or by an
operator (``depsgraph_update_post``) and for one from Python (the next ``frame_change_post``, the
frame's own evaluation), while TetRig's own writes from the frame handler are evaluated inside the
frame change and listed nowhere (checked in bpy 5.0 and 5.2). Bakes and exports check the digest
afresh (``fresh=True``): the hash stays the check where a stale binding would be written out.
"""

from __future__ import annotations

import bpy

from . import binding_store, mesh_io

_digests: dict[int, str] = {}  # mesh session_uid -> its rest fingerprint
_dirty: set[int] = set()  # meshes that may have changed since their digest was made


def rest_fingerprint(obj: bpy.types.Object, fresh: bool = False) -> str:
    """``binding_store.rest_fingerprint`` of ``obj``'s mesh, made again only when the mesh may have
    changed since the last one (``notice``), or when ``fresh``."""
    uid = mesh_io.mesh_of(obj).session_uid
    digest = _digests.get(uid)
    if fresh or digest is None or uid in _dirty:
        digest = _digests[uid] = binding_store.rest_fingerprint(obj)
        _dirty.discard(uid)
    return digest


def notice(depsgraph: bpy.types.Depsgraph) -> None:
    """Mark the meshes whose data the depsgraph's updates list as changed (their shape keys count
    as their own: an edited key block changes the rest)."""
    for update in depsgraph.updates:
        data = update.id.original
        if isinstance(data, bpy.types.Key):
            data = data.user
        if isinstance(data, bpy.types.Mesh) and update.is_updated_geometry:
            _dirty.add(data.session_uid)


def forget() -> None:
    """Forget every digest (a new file, an undo: session ids may name other meshes now)."""
    _digests.clear()
    _dirty.clear()
