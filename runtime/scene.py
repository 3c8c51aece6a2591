"""The scene driver: every simulated object of a scene brought to the scene's frame, in one pass.

Per frame and scene (``update``, from the frame-change handler), in order:

1. **Inputs.** For every body: its model (built once, ``frames.Slot``), this frame's inputs (the
   world matrix, colliders, a posed mesh's pose, a rig's bones), its bake if it has this frame.
   Then the inputs of every earlier frame any body needs, read in one visit of each frame for all
   bodies (``frames.sample``): stepping never moves the scene's frame.
2. **States.** Each body's state at the frame: the bake, the frame cache, or steps from the latest
   cached frame. Soft bodies that touch (cage and Surface bodies with Soft Bodies on and the same
   Collision Collection) step together as one set with one frame cache (``common/touching``); a body
   alone steps as it always did.
   Jiggle rigs step last: their tails collide with the soft bodies' surfaces of the frames they
   step through, read from the soft bodies' own frames (``soft_colliders``; one-way).
3. **Writes.** Each body shows its state (``tetrig_offset``, a tear, a rig's target empties).

A body that cannot be simulated (a stale binding, a refused setting, inputs that cannot be read
during a render) shows its rest (or its animation) and warns once in the panel; the others go on.

The kinds of simulated thing are chosen here and nowhere else (``KINDS``): cage soft bodies,
Surface bodies and jiggle rigs (``runtime/cage``, ``runtime/surface``, ``runtime/jiggle``), each a
``frames.BodyKind``. A setting changed in the panel reaches its kind through ``settings_changed``,
the one hook the property groups call (``common/properties.register_settings_hook``).
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

import bpy

from .cage.kind import KIND as CAGE
from ..tetrig_addon.errors import TetRigInputError
from .common import edits, frames, hooks, redraw, scene_inputs, touching
from .jiggle.kind import KIND as JIGGLE
from .jiggle import rig as jiggle_rig
from . import soft_colliders
from .surface.kind import KIND as SURFACE

# The kinds, in the order a frame updates them (soft bodies before the rigs, as before).
KINDS: tuple[Any, ...] = (CAGE, SURFACE, JIGGLE)
# The kinds whose bodies touch each other in sets (issue 21).
touching.use_kinds((CAGE, SURFACE))


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
    and warns once. An error the kind does not expect (``kind.errors`` say what a broken body
    raises) is a fault of TetRig's: the panel says so, and its traceback is printed once, not at
    every frame."""
    slot = frames.slot(obj, kind.name)
    slot.prepared = None
    message = str(exc)
    if not isinstance(exc, kind.errors):
        message = (f"{obj.name}: TetRig could not show this frame ({type(exc).__name__}: {exc}) and shows "
                   "it at rest; the console has the details")
        if slot.warning != message:
            traceback.print_exception(type(exc), exc, exc.__traceback__)
    try:
        kind.show_rest(obj)
    except Exception:  # noqa: BLE001 -- a handler must never raise into Blender at every frame
        traceback.print_exc()
    frames.warn(obj, kind.name, message)


def update(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph, sample: bool = True) -> None:
    """Bring every simulated object of ``scene`` to its current frame (see the module docstring).
    A mesh in Edit Mode is left as it is (its vertices are the edit's until Edit Mode ends).

    A subframe F + t (motion blur, ``frame_set(F, subframe=t)``) shows what frames F and F + 1 show,
    interpolated (``kind.blend``), live and baked: frame F + 1 is simulated (its inputs read at
    F + 1, never at the subframe) when it can be; where it cannot (its inputs cannot be read during
    a UI render), frame F. ``sample=False``: bodies that would need inputs of frames never read are
    left as they are (a setting changed from a depsgraph update, ``show_changed``)."""
    edits.notice(depsgraph)
    if depsgraph.mode == "VIEWPORT" and not bpy.app.is_job_running("RENDER"):
        for kind in KINDS:  # Alt+D copies made by a script, or saved by an older TetRig
            if hasattr(kind, "adopt"):
                kind.adopt(kind.objects(scene))
    frame, t = scene.frame_current, float(scene.frame_subframe)
    between = t > 0.0
    grouped = {o.session_uid: i for i, members in enumerate(touching.groups(touching.candidates(scene)))
               for o in members}
    sets: dict[int, list[_Body]] = {}
    live: list[list[_Body]] = []  # units stepped together: one body alone, or a set of touching bodies
    shown: list[tuple[bpy.types.Object, Any, frames.Slot, Any]] = []
    for obj, kind in bodies(scene):
        if kind.editing(obj):
            continue
        if not getattr(kind, "enabled", lambda _: True)(obj):
            kind.show_rest(obj)
            continue
        slot = frames.slot(obj, kind.name)
        try:
            prepared = frames.prepare(kind, slot, obj, scene, depsgraph)
            if between and kind.inputs_animated(obj, scene, prepared):
                # the subframe's own inputs: shown (a baked posed mesh's pose), never recorded as F's
                inputs = kind.read(obj, prepared, scene, depsgraph)
            else:
                inputs = frames.read_current(kind, slot, obj, prepared, scene, depsgraph)
            baked = kind.baked(obj, scene, prepared, frame, inputs, slot)
            if baked is not None and between:
                following = kind.baked(obj, scene, prepared, frame + 1, inputs, slot)
                if following is not None:
                    baked = kind.blend(baked, following, t)
        except Exception as exc:  # noqa: BLE001 -- kind.errors, or a fault (_fail)
            _fail(obj, kind, exc)
            continue
        if baked is not None:
            shown.append((obj, kind, slot, baked))
        body = _Body(obj, kind, slot, prepared, inputs, baked is None)
        if obj.session_uid in grouped:
            sets.setdefault(grouped[obj.session_uid], []).append(body)
        elif body.live:
            live.append([body])
    for members in sets.values():  # a set steps when a member needs a live frame (its bake is shown)
        if len(members) > 1 and any(b.live for b in members):
            live.append(sorted(members, key=lambda b: b.obj.name_full))  # in ``touching.groups``' order
        else:  # a partner could not be read this frame: the others step alone
            live += [[b] for b in members if b.live]
    live.sort(key=lambda unit: KINDS.index(unit[0].kind))  # rigs after the soft bodies they collide with
    targets = _sample(scene, live, frame, between, sample)
    for i, unit in enumerate(live):
        target = targets.get(i)
        if target is None or any(b.slot.prepared is None for b in unit):
            continue
        try:
            states = _states(scene, unit, target)
            firsts = _states(scene, unit, frame) if target != frame else states
            for b, state, first in zip(unit, states, firsts):
                if not b.live:
                    continue
                if target == frame:
                    result = b.kind.shown(b.obj, scene, b.prepared, state,
                                          _recorded(b.slot, scene, frame, b.inputs) if between else b.inputs)
                else:  # a subframe: frame F blended with F + 1
                    result = b.kind.blend(
                        b.kind.shown(b.obj, scene, b.prepared, first, _recorded(b.slot, scene, frame, b.inputs)),
                        b.kind.shown(b.obj, scene, b.prepared, state, _recorded(b.slot, scene, target, b.inputs)), t)
                shown.append((b.obj, b.kind, b.slot, result))
        except Exception as exc:  # noqa: BLE001 -- kind.errors, or a fault (_fail)
            for b in unit:
                _fail(b.obj, b.kind, exc)
    for obj, kind, slot, result in shown:
        try:
            kind.write(obj, slot.prepared, result, depsgraph)
        except Exception as exc:  # noqa: BLE001 -- kind.errors, or a fault (_fail)
            _fail(obj, kind, exc)
            continue
        if slot.warning and not kind.keeps_warnings and (slot.cache is None or slot.cache.first_bad_frame is None):
            slot.warning = ""
            redraw.sidebars()


@dataclass(frozen=True)
class _Body:
    """One body in one pass of ``update``: ``live`` when this frame is simulated for it (else its
    bake is shown, and it steps only as a member of a set that has a live member)."""

    obj: bpy.types.Object
    kind: Any
    slot: frames.Slot
    prepared: Any
    inputs: Any
    live: bool


def _members(unit: list[_Body]) -> list[touching.Member]:
    return [touching.Member(b.obj, b.kind, b.slot, b.prepared) for b in unit]


def _plan(scene: bpy.types.Scene, unit: list[_Body], frame: int) -> list[list[int]]:
    """Per body of ``unit``, the frames to sample before it can be stepped to ``frame``."""
    if len(unit) == 1:
        b = unit[0]
        return [frames.plan(b.kind, b.slot, b.obj, scene, b.prepared, frame)]
    return touching.plan(_members(unit), scene, frame)


def _states(scene: bpy.types.Scene, unit: list[_Body], frame: int) -> list[Any]:
    """The state at ``frame`` of each body of ``unit`` (alone: ``frames.state``; a set: its members')."""
    if len(unit) == 1:
        b = unit[0]
        return [frames.state(b.kind, b.slot, b.obj, scene, b.prepared, frame)]
    return list(touching.state(_members(unit), scene, frame).states)


def _sample(scene: bpy.types.Scene, live: list[list[_Body]], frame: int, between: bool,
            sample: bool) -> dict[int, int]:
    """Read the inputs of the frames the live units (a body alone, or a set) need, in one visit of
    each frame; returns the frame each unit's state is taken at (by its index in ``live``): F, or
    F + 1 at a subframe; units left out could not be read (they warn) or wait (``sample=False``)."""
    wanted, targets = [], {}
    for i, unit in enumerate(live):
        target = frame + 1 if between else frame
        try:
            missing = _plan(scene, unit, target)
        except Exception as exc:  # noqa: BLE001 -- kind.errors, or a fault (_fail)
            for b in unit:
                _fail(b.obj, b.kind, exc)
            continue
        if any(missing) and not sample:
            continue
        wanted.append((i, unit, missing))
        targets[i] = target
    try:
        frames.sample(scene, [(b.kind, b.slot, b.obj, b.prepared, fs) for _, unit, missing in wanted
                              for b, fs in zip(unit, missing)])
    except scene_inputs.InputsUnavailable:  # during a UI render: each unit that needed frames says so
        for i, unit, missing in wanted:
            if not any(missing):
                continue
            targets.pop(i)
            if between and not any(_plan(scene, unit, frame)):
                targets[i] = frame  # F + 1 cannot be read now: frame F, unblended
            else:
                for b in unit:
                    _fail(b.obj, b.kind, scene_inputs.InputsUnavailable(frames.unplayed_message(b.obj)))
    return targets


def _recorded(slot: frames.Slot, scene: bpy.types.Scene, frame: int, current: Any) -> Any:
    """The recorded inputs of ``frame`` (a subframe shows F and F + 1 with their own), else
    ``current``: a body whose inputs never change records one set."""
    found = slot.records.get(max(frame, scene.frame_start))
    return found if found is not None else current


def objects_changed(scene: bpy.types.Scene) -> None:
    """Objects were added to or deleted from the file (the depsgraph update handler): each kind
    takes in what is new (an Alt+D copy of a soft body) and removes what a deleted object leaves
    (its cage, a deleted armature's jiggle targets), after Blender's undo step of the change."""
    if any([kind.objects_changed(scene) for kind in KINDS if hasattr(kind, "objects_changed")]):  # each runs
        _changed.add(scene.session_uid)  # shown again: a new instance, and its original's offsets


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


# Scenes (session uid) whose current frame is shown again at their next depsgraph update
# (``show_changed``): a setting changed, in the panel or from a script.
_changed: set[int] = set()


def settings_changed(owner: Any, what: str, context: bpy.types.Context | None) -> None:
    """The property groups' hook (``common/hooks``): a setting of ``owner`` changed. ``what``:

    - "jiggle_model": a bone setting the rig's model is built from (built again);
    - "jiggle_enabled": a bone's Jiggle box: the bone gets its constraint (or loses it) at once; a
      rig that cannot have jiggle bones is left as it is (the panel and the handler say why);
    - "jiggle_shown": a setting of the rig (Influence, Jiggle Bones, the steps ...).

    Each shows at once, as a keyed value would: the scenes holding ``owner`` show their current
    frame again at their next depsgraph update (``show_changed``), once however many settings a
    script changes before it.
    """
    if what != "jiggle_shown":
        frames.drop_model(owner)
    scene = getattr(context, "scene", None) or bpy.context.scene
    if what == "jiggle_enabled" and scene is not None:
        try:
            jiggle_rig.setup(owner, scene)
        except TetRigInputError:
            pass
    for holder in {*getattr(owner, "users_scene", ()), *((scene,) if scene is not None else ())}:
        _changed.add(holder.session_uid)


def show_changed(scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph) -> bool:
    """Show the current frame of ``scene`` again if a setting changed since (``settings_changed``);
    returns whether it did. The depsgraph update handler calls it."""
    if scene.session_uid not in _changed:
        return False
    _changed.discard(scene.session_uid)
    update(scene, depsgraph, sample=False)  # never move the frame from inside a depsgraph update
    return True


def register() -> None:
    hooks.register_settings_hook(settings_changed)
    soft_colliders.register()


def unregister() -> None:
    soft_colliders.unregister()
    hooks.register_settings_hook(None)
