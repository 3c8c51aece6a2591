"""One body's frames in the Blender layer: what the scene driver keeps per body, and the one way a
body gets its state at a frame, whatever its kind.

Every simulated object (a cage soft body, a Surface body, a jiggle rig) has a ``Slot``, keyed by
its ``session_uid`` (never a ``bpy`` reference: undo and file loads invalidate those). A slot holds
the kind's prepared model (built once from the rest data, reused while its key holds), the frame
cache (``timeline.FrameCache``, keyed by everything the motion depends on), the scene inputs read
at each frame, and the last warning for the panel.

The state at frame F is a function of the scene and F alone (``tetrig_addon.timeline``'s rule):
``state_at`` reads the current frame's inputs first (``read_current``: an edit since the last
visit drops every record and so the cache), then the inputs of every earlier frame the steps need
(``plan``, ``sample``: the scene visits the frames never seen, ``scene_inputs.sample_frames``), and
only then steps with those records (``state``): stepping never moves the scene's frame. ``runtime/scene.py`` does the same for every body
of a scene at once, in three passes (inputs, states, writes).

What differs between kinds is the kind's ``BodyKind`` (``runtime/cage``, ``runtime/surface``,
``runtime/jiggle``); ``runtime/scene.py`` chooses it, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import bpy

from ...tetrig_addon.body import Body, Control
from ...tetrig_addon.timeline import FrameCache
from . import redraw, scene_inputs

P = TypeVar("P")  # a kind's prepared model
I = TypeVar("I")  # a kind's inputs of one frame


class BodyKind(Protocol[P, I]):
    """How one kind of simulated object is read, stepped and shown (the only part that differs).

    Attributes:
        name: "cage", "surface" or "jiggle".
        errors: the exceptions a broken body raises (stale binding, refused settings, inputs that
            cannot be read now): the driver shows such a body at rest and warns, once.
    """

    name: str
    errors: tuple[type[Exception], ...]

    def prepare(self, obj: bpy.types.Object, scene: bpy.types.Scene, depsgraph: bpy.types.Depsgraph,
                slot: "Slot") -> P:
        """The model of ``obj`` (``slot.prepared`` while its key holds, else built anew)."""

    def read(self, obj: bpy.types.Object, prepared: P, scene: bpy.types.Scene,
             depsgraph: bpy.types.Depsgraph) -> I:
        """The inputs of the frame the depsgraph is at."""

    def same(self, a: I, b: I) -> bool:
        """Whether two readings of one frame are the same inputs."""

    def inputs_animated(self, obj: bpy.types.Object, scene: bpy.types.Scene, prepared: P) -> bool:
        """Whether the inputs can differ between frames (else one reading serves every frame)."""

    def motion_key(self, obj: bpy.types.Object, scene: bpy.types.Scene, prepared: P) -> tuple:
        """Everything the frames depend on besides the inputs: the frame cache's key is this
        followed by the slot's version (which counts this session's drops of recorded inputs)."""

    def body(self, prepared: P, key: tuple) -> Body:
        """The engine's body (``tetrig_addon.body.Body``) of the model with the settings of the
        motion key: what steps the frames."""

    def control(self, prepared: P, key: tuple, begin: I, end: I) -> Control:
        """The ``tetrig_addon.body.Control`` of the step from a frame read as ``begin`` to the next
        read as ``end`` (for the start frame's rest state: its inputs twice)."""

    def unstable(self, obj: bpy.types.Object, frame: int) -> str:
        """The warning when the steps went non-finite at ``frame``."""

    def blend(self, a: Any, b: Any, t: float) -> Any:
        """What a subframe F + t shows, from what frames F (``a``) and F + 1 (``b``) show."""

    # Optional: ``input_layout(prepared)`` (what a frame's inputs are read for: another layout drops
    # the records, ``prepare``), ``refreshed(known, current)`` (``read_current``) and
    # ``among(prepared, control, state, frame)``: the control of the step to ``frame`` from
    # ``state`` with what other bodies show at ``frame`` (a jiggle rig: the soft bodies' surfaces,
    # ``soft_surfaces``; what they depend on is in its motion key).


@dataclass
class Slot(Generic[P, I]):
    """One simulated object as the driver keeps it between frames."""

    kind: str
    prepared: Any = None  # P: the kind's model, with its key
    cache: FrameCache | None = None  # of the kind's body's states
    records: dict[int, Any] = field(default_factory=dict)  # frame -> I
    version: int = 0  # changes whenever the records are dropped: part of the cache key
    warning: str = ""  # the last warning, for the panel (``status``)
    inputs_changed: bool = False  # a baked frame was shown whose scene inputs changed since baking
    layout: Any = None  # how the model read the records (``BodyKind.input_layout``): others are dropped
    # the frame cache of the set of touching bodies it steps in (``runtime/common/touching``), which
    # every member's slot holds; ``None`` while it steps alone
    shared: FrameCache | None = None


_slots: dict[int, Slot] = {}


def slot(obj: bpy.types.Object, kind: str) -> Slot:
    """The slot of ``obj`` (made, or made again when it held another kind)."""
    found = _slots.get(obj.session_uid)
    if found is None or found.kind != kind:
        found = _slots[obj.session_uid] = Slot(kind)
    return found


def find(obj: bpy.types.Object) -> Slot | None:
    """The slot of ``obj`` if it has one."""
    return _slots.get(obj.session_uid)


def free(obj: bpy.types.Object | None = None) -> None:
    """Forget the models, frames and inputs of one object, or of all (a new file, an undo)."""
    if obj is None:
        _slots.clear()
        scene_inputs.forget_colliders()
    else:
        _slots.pop(obj.session_uid, None)


def drop_model(obj: bpy.types.Object) -> None:
    """Build the model of ``obj`` again at its next frame (a setting it is built from changed); its
    records and warning stay."""
    found = _slots.get(obj.session_uid)
    if found is not None:
        found.prepared = None
        found.cache = None
        found.shared = None


def status(obj: bpy.types.Object) -> str:
    """The last warning about ``obj`` from the frame handler, or ''."""
    found = _slots.get(obj.session_uid)
    return found.warning if found is not None else ""


def warn(obj: bpy.types.Object, kind: str, message: str) -> None:
    """Record a warning about ``obj`` for the panel, printed once."""
    found = slot(obj, kind)
    if found.warning != message:
        found.warning = message
        print("TetRig:", message)
        redraw.sidebars()  # the panel's status line changed outside a redraw


def prepare(kind: BodyKind, slot_: Slot, obj: bpy.types.Object, scene: bpy.types.Scene,
            depsgraph: bpy.types.Depsgraph) -> Any:
    """The kind's model of ``obj`` (``kind.prepare``). A model that reads its inputs differently
    from the one the slot's records were read with (a jiggle rig with a bone added, deleted or
    renamed: each frame's inputs have one row per bone) drops every record, so no frame is stepped
    with inputs of another shape; the version changes, so the frame cache starts over."""
    prepared = kind.prepare(obj, scene, depsgraph, slot_)
    layout = kind.input_layout(prepared) if hasattr(kind, "input_layout") else None
    if layout != slot_.layout:
        if slot_.records:
            slot_.records.clear()
            slot_.version += 1
        slot_.layout = layout
    return prepared


def read_current(kind: BodyKind, slot_: Slot, obj: bpy.types.Object, prepared: Any, scene: bpy.types.Scene,
                 depsgraph: bpy.types.Depsgraph) -> Any:
    """Read the current frame's inputs and record them. When they differ from what was recorded for
    this frame (a keyframe or a collider was edited), every record is dropped and the version
    changes, so the frame cache starts over. A kind with ``refreshed`` keeps the record but takes
    from the new reading what only changes what is shown."""
    frame = scene.frame_current
    current = kind.read(obj, prepared, scene, depsgraph)
    known = slot_.records.get(frame)
    if known is not None and not kind.same(known, current):
        slot_.records.clear()
        slot_.version += 1
        known = None
    if known is None:
        slot_.records[frame] = current
    elif hasattr(kind, "refreshed"):  # what only changes what is shown (a jiggle rig's influence)
        slot_.records[frame] = kind.refreshed(known, current)
    return slot_.records[frame]


def plan(kind: BodyKind, slot_: Slot, obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Any,
         frame: int) -> list[int]:
    """The frames whose inputs must be sampled before ``frame`` can be stepped to: those from the
    nearest cached frame (the start frame when the motion key changed) to ``frame`` not read yet;
    none when the inputs cannot change between frames (one reading serves them all)."""
    key = (*kind.motion_key(obj, scene, prepared), slot_.version)
    cache = slot_.cache
    frame = max(frame, scene.frame_start)
    base = scene.frame_start
    if cache is not None and cache.key == key:
        base = max(f for f in cache.cached_frames() if f <= frame)
    wanted = [f for f in range(base, frame + 1) if f not in slot_.records]
    if not wanted or not kind.inputs_animated(obj, scene, prepared):
        return []
    return wanted


def inputs(kind: BodyKind, slot_: Slot, obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Any,
           frame: int) -> Any:
    """The recorded inputs of ``frame``; for a body whose inputs never change, the current frame's
    (``read_current`` recorded them). Frames of animated inputs must have been sampled (``sample``).

    Raises:
        scene_inputs.InputsUnavailable: an animated body's frame that was never read.
    """
    found = slot_.records.get(frame)
    if found is not None:
        return found
    current = slot_.records.get(scene.frame_current)
    if current is None or kind.inputs_animated(obj, scene, prepared):
        raise scene_inputs.InputsUnavailable(unplayed_message(obj))
    return slot_.records.setdefault(frame, current)


def sample(scene: bpy.types.Scene, wanted: list[tuple[BodyKind, Slot, bpy.types.Object, Any, list[int]]]) -> None:
    """Read the inputs of every listed body at each of its frames, setting the scene to each frame
    once for all of them and back (``scene_inputs.sample_frames``).

    Raises:
        scene_inputs.InputsUnavailable: the frames cannot be visited now (a render runs); the
            message names the first body that needed them.
    """
    frames = sorted({f for *_, fs in wanted for f in fs})
    if not frames:
        return
    first = next(obj for _, _, obj, _, fs in wanted if fs)
    for f, graph in scene_inputs.sample_frames(scene, frames, unplayed_message(first)):
        for kind, slot_, obj, prepared, fs in wanted:
            if f in fs:
                slot_.records[f] = kind.read(obj, prepared, scene, graph)


def unplayed_message(obj: bpy.types.Object) -> str:
    """Why earlier frames cannot be read now (a UI render job runs)."""
    return (f"{obj.name}: it follows animation or moving colliders, and frames before this one were "
            "never played; play the animation from the start (or bake) before rendering.")


def state(kind: BodyKind, slot_: Slot, obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Any,
          frame: int) -> Any:
    """The state at ``frame`` from the slot's frame cache (a new one, from the start frame's rest,
    when anything the frames depend on changed), stepping with the recorded inputs (``plan`` and
    ``sample`` first). A step that goes non-finite freezes the body there and warns once.

    Raises:
        scene_inputs.InputsUnavailable: a frame's inputs were never read.
    """
    slot_.shared = None  # stepping alone: the set it stepped in is gone (its partners start theirs anew)
    motion = kind.motion_key(obj, scene, prepared)
    key = (*motion, slot_.version)  # flat: a bake's fingerprint digests the same parts but the version
    body = kind.body(prepared, motion)
    cache = slot_.cache
    if cache is None or cache.key != key:
        start = inputs(kind, slot_, obj, scene, prepared, scene.frame_start)
        cache = slot_.cache = FrameCache(scene.frame_start, body.rest_state(kind.control(prepared, motion, start, start)),
                                         key)

    def step(state_: Any, f: int) -> Any:
        begin = inputs(kind, slot_, obj, scene, prepared, f)
        end = inputs(kind, slot_, obj, scene, prepared, f + 1)
        control = kind.control(prepared, motion, begin, end)
        if hasattr(kind, "among"):  # what other bodies show at f + 1 (a rig: the soft bodies it sees)
            control = kind.among(prepared, control, state_, f + 1)
        return body.step(state_, control)

    result = cache.state_at(frame, step)
    if cache.first_bad_frame is not None and not slot_.warning:
        warn(obj, kind.name, kind.unstable(obj, cache.first_bad_frame))
    return result


def state_at(kind: BodyKind, obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
             depsgraph: bpy.types.Depsgraph) -> tuple[Slot, Any, Any]:
    """(slot, state at ``frame``, that frame's inputs) of one body, for bakes and exports: its
    model, its current frame's inputs, the earlier frames' (sampled), then its steps.

    Raises:
        kind.errors: a broken body; scene_inputs.InputsUnavailable: frames to sample during a render.
    """
    slot_ = slot(obj, kind.name)
    prepared = prepare(kind, slot_, obj, scene, depsgraph)
    read_current(kind, slot_, obj, prepared, scene, depsgraph)
    sample(scene, [(kind, slot_, obj, prepared, plan(kind, slot_, obj, scene, prepared, frame))])
    found = state(kind, slot_, obj, scene, prepared, frame)
    return slot_, found, inputs(kind, slot_, obj, scene, prepared, max(frame, scene.frame_start))
