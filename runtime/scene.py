"""The scene driver: every simulated object of a scene brought to the scene's frame, in one pass.

Per frame and scene (``update``, from the frame-change handler), in order:

1. **Inputs.** For every body: its model (built once, ``frames.Slot``), this frame's inputs (the
   world matrix, colliders, a posed mesh's pose, a rig's bones), its bake if it has this frame.
   Then the inputs of every earlier frame any body needs, read in one visit of each frame for all
   bodies (``frames.sample``): stepping never moves the scene's frame.
2. **States.** Each body's state at the frame: the bake, the frame cache, or steps from the latest
   cached frame.
3. **Writes.** Each body shows its state (``tetrig_offset``, a tear, a rig's target empties).

A body that cannot be simulated (a stale binding, a refused setting, inputs that cannot be read
during a render) shows its rest (or its animation) and warns once in the panel; the others go on.

The kinds of simulated thing are chosen here and nowhere else (``KINDS``): cage soft bodies,
Surface bodies and jiggle rigs (``runtime/cage``, ``runtime/surface``, ``runtime/jiggle``), each a
``frames.BodyKind``. A setting changed in the panel reaches its kind through ``settings_changed``,
the one hook the property groups call (``common/properties.register_settings_hook``).
"""

from __future__ import annotations

from typing import Any

import bpy

from .cage.kind import KIND as CAGE
from ..tetrig_addon.errors import TetRigInputError
from .common import edits, frames, hooks, scene_inputs
from .jiggle.kind import KIND as JIGGLE
from .jiggle import rig as jiggle_rig
from .surface.kind import KIND as SURFACE

# The kinds, in the order a frame updates them (soft bodies before the rigs, as before).
KINDS: tuple[Any, ...] = (CAGE, SURFACE, JIGGLE)


def kind_of(obj: bpy.types.Object) -> Any | None:
    """The kind of a TetRig object: cage soft body, Surface body or jiggle rig (``None`` for
    anything else)."""
    return next((kind for kind in KINDS if kind.owns(obj)), None)


def bodies(scene: bpy.types.Scene) -> list[tuple[bpy.types.Object, Any]]:
    """(object, kind) of every simulated object of the scene, in update order."""
    return [(obj, kind) for kind in KINDS for obj in kind.objects(scene)]


def simulated(scene: bpy.types.Scene) -> bool:
    """Whether the scene has anything TetRig updates per frame."""
    return any(kind.objects(scene) for kind in KINDS)


def _fail(obj: bpy.types.Object, kind: Any, exc: Exception) -> None:
    """A body that cannot be simulated: its model goes (built again next frame), it shows its rest
    and warns once."""
    slot = frames.slot(obj, kind.name)
    slot.prepared = None
    kind.show_rest(obj)
    frames.warn(obj, kind.name, str(exc))


def update(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> None:
    """Bring every simulated object of ``scene`` to its current frame (see the module docstring).
    A mesh in Edit Mode is left as it is (its vertices are the edit's until Edit Mode ends)."""
    edits.notice(depsgraph)
    frame = scene.frame_current
    live: list[tuple[bpy.types.Object, Any, frames.Slot, Any, Any]] = []
    shown: list[tuple[bpy.types.Object, Any, frames.Slot, Any]] = []
    for obj, kind in bodies(scene):
        if kind.editing(obj):
            continue
        if not getattr(kind, "enabled", lambda _: True)(obj):
            kind.show_rest(obj)
            continue
        slot = frames.slot(obj, kind.name)
        try:
            prepared = kind.prepare(obj, scene, depsgraph, slot)
            inputs = frames.read_current(kind, slot, obj, prepared, scene, depsgraph)
            baked = kind.baked(obj, scene, prepared, frame, inputs, slot)
        except kind.errors as exc:
            _fail(obj, kind, exc)
            continue
        if baked is not None:
            shown.append((obj, kind, slot, baked))
        else:
            live.append((obj, kind, slot, prepared, inputs))
    wanted = []
    for obj, kind, slot, prepared, _ in live:
        try:
            wanted.append((kind, slot, obj, prepared, frames.plan(kind, slot, obj, scene, prepared, frame)))
        except kind.errors as exc:
            _fail(obj, kind, exc)
    failed: set[int] = set()
    try:
        frames.sample(scene, wanted)
    except scene_inputs.InputsUnavailable:  # during a UI render: each body that needed frames says so
        for kind, slot, obj, _, missing in wanted:
            if missing:
                _fail(obj, kind, scene_inputs.InputsUnavailable(frames.unplayed_message(obj)))
                failed.add(obj.session_uid)
    for obj, kind, slot, prepared, inputs in live:
        if obj.session_uid in failed or slot.prepared is None:
            continue
        try:
            state = frames.state(kind, slot, obj, scene, prepared, frame)
            shown.append((obj, kind, slot, kind.shown(obj, scene, prepared, state, inputs)))
        except kind.errors as exc:
            _fail(obj, kind, exc)
    for obj, kind, slot, result in shown:
        try:
            kind.write(obj, slot.prepared, result, depsgraph)
        except kind.errors as exc:
            _fail(obj, kind, exc)
            continue
        if not kind.keeps_warnings and (slot.cache is None or slot.cache.first_bad_frame is None):
            slot.warning = ""


def status(obj: bpy.types.Object) -> str:
    """The last warning about ``obj`` from the frame handler, or '' (the panel's status line)."""
    return frames.status(obj)


def inputs_changed(obj: bpy.types.Object) -> bool:
    """Whether playback showed a baked frame whose animation or colliders changed since baking."""
    slot = frames.find(obj)
    return slot is not None and slot.inputs_changed


def free(obj: bpy.types.Object | None = None) -> None:
    """Forget cached models and frames of one object, or of all objects (then also every digest of
    a rest shape: a new file, an undo)."""
    frames.free(obj)
    if obj is None:
        edits.forget()


def settings_changed(owner: Any, what: str, context: bpy.types.Context | None) -> None:
    """The property groups' hook (``common/hooks``): a setting of ``owner`` changed. ``what``:

    - "jiggle_model": a bone setting the rig's model is built from (built again next frame);
    - "jiggle_enabled": a bone's Jiggle box: the bone gets its constraint (or loses it) at once; a
      rig that cannot have jiggle bones is left as it is (the panel and the handler say why).
    """
    frames.drop_model(owner)
    if what == "jiggle_enabled":
        scene = getattr(context, "scene", None) or bpy.context.scene
        if scene is not None:
            try:
                jiggle_rig.setup(owner, scene)
            except TetRigInputError:
                pass


def register() -> None:
    hooks.register_settings_hook(settings_changed)


def unregister() -> None:
    hooks.register_settings_hook(None)
