"""Soft bodies that touch each other (issue 21): the sets the scene driver steps as one body.

**Sets.** Soft bodies (cage soft bodies and Surface bodies) of one scene with *Soft Bodies* on
(``use_soft_bodies``) and the same
*Collision Collection* (``soft_body_collection``: none, or one they are all in) form one set
(``groups``): they are stepped together as one ``tetrig_addon.touching.TouchingBodies``, members
ordered by object name, and so collide, whatever their kinds. The relation is an equivalence (same switch, same
collection), so a set never makes two bodies touch that one of them excludes. A body whose group
has no other member steps alone, exactly as before sets existed (``frames.state``), and so does
every body with Soft Bodies off. Bodies of different scenes never share a set: the driver groups
one scene's bodies at a time.

**Frames.** A set has one frame cache (``timeline.FrameCache`` of ``TouchingState``), held by the
slot of every member (``frames.Slot.shared``), keyed by every member's cache key (its motion key and
records version, in member order) and the contact settings (``contact``): any change to any member
starts the set over from the start frame, so a jump, playback, scrubbing back and a bake give the
same numbers. Each member's inputs stay its own (``frames.read_current``, ``plan``, ``sample``).

**Bakes.** A set is baked whole: baking one member bakes its partners too (``runtime/bake``), each
member's frames read from the set's cache, and each member's fingerprint includes its partners'
(``set_key``), so changing a partner outdates the bakes of the set. A member with this frame
baked shows its bake; the set steps live (every member, baked ones included) whenever one member
needs a live frame, so an unbaked member moves as it did when the set was baked.

The kinds that can be members are given by the scene driver (``use_kinds``), which chooses the kinds
in one place; each member carries its own (``Member.kind``), so a set mixes them.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Sequence

import bpy

from ...tetrig_addon.cage import CageBody
from ...tetrig_addon.solver.pairs import ContactSettings
from ...tetrig_addon.timeline import FrameCache
from ...tetrig_addon.touching import TouchingBodies, TouchingState, overlapping
from . import frames
from .animation import recorded_rest_matrix
from .properties import object_settings

# The kinds whose bodies can be members (``use_kinds``): the cage soft bodies' and the Surface bodies'.
_kinds: list[Any] = []
# Per member (its name_full), the members it was placed inside at the start frame of its set's
# frame cache (``overlapping``), for the panel; set whenever a set starts over.
_placed_inside: dict[str, list[str]] = {}


def use_kinds(kinds: Sequence[Any]) -> None:
    """The ``frames.BodyKind`` s whose bodies can touch (the scene driver's, at import)."""
    _kinds[:] = kinds


def kind_of(obj: bpy.types.Object) -> Any | None:
    """The kind of a body that can be a member (``use_kinds``), or ``None``."""
    return next((kind for kind in _kinds if kind.owns(obj)), None)


@dataclass(frozen=True)
class Member:
    """One body of a set in one pass of the driver: its object, kind, slot and prepared model (the
    kind's, e.g. ``cage.model.Prepared``)."""

    obj: bpy.types.Object
    kind: Any
    slot: frames.Slot
    prepared: Any


def group_key(obj: bpy.types.Object) -> tuple | None:
    """Which set ``obj`` may join: ``("scene",)`` without a Collision Collection, ``("collection",
    name)`` with one it is in; ``None`` when it touches no soft body (Soft Bodies off, or not in its
    own Collision Collection: none of the bodies that collection allows has it)."""
    s = object_settings(obj)
    if not s.use_soft_bodies:
        return None
    collection = s.soft_body_collection
    if collection is None:
        return ("scene",)
    if collection.all_objects.get(obj.name) != obj:
        return None
    return ("collection", collection.name_full)


def groups(objects: Sequence[bpy.types.Object]) -> list[list[bpy.types.Object]]:
    """The sets among the soft bodies ``objects`` of one scene: those of one ``group_key``, two
    or more, each ordered by object name (the members' order in ``TouchingBodies``)."""
    found: dict[tuple, list[bpy.types.Object]] = {}
    for obj in objects:
        key = group_key(obj)
        if key is not None:
            found.setdefault(key, []).append(obj)
    return [sorted(members, key=lambda o: o.name_full) for members in found.values() if len(members) > 1]


def partners(obj: bpy.types.Object, objects: Sequence[bpy.types.Object]) -> list[bpy.types.Object]:
    """The set of ``obj`` among ``objects`` (itself included, in member order), or [] when it steps
    alone."""
    return next((members for members in groups(objects) if obj in members), [])


def contact(objects: Sequence[bpy.types.Object], scene: bpy.types.Scene) -> ContactSettings:
    """How a set's bodies touch: the largest Distance among them (× the scene's unit scale, [m]);
    Coulomb friction between bodies is the engine's default (``ContactSettings``)."""
    distance = max(object_settings(o).soft_body_distance for o in objects)
    return ContactSettings(thickness=distance * scene.unit_settings.scale_length)


def set_key(objects: Sequence[bpy.types.Object], scene: bpy.types.Scene, motion_key: Any) -> tuple:
    """What a bake of one member depends on beyond its own motion key: the contact settings and
    every member's motion key (``motion_key(obj)``), in member order."""
    return ("touching", contact(objects, scene), tuple(motion_key(o) for o in objects))


def candidates(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """The soft bodies of ``scene`` that can be members now (of the kinds ``use_kinds`` gave, in their
    order; not in Edit Mode: the driver leaves those as they are)."""
    return [o for kind in _kinds for o in kind.objects(scene) if not kind.editing(o)]


def bake_key(obj: bpy.types.Object, scene: bpy.types.Scene, own: tuple, fresh: bool = False) -> tuple | None:
    """What a bake of ``obj`` depends on beyond its own motion key ``own`` (the kind's ``saved_key``):
    its set's (``set_key``, the partners' saved keys at their recorded rest), or ``None`` when it steps
    alone. ``fresh``: digest the partners' rest shapes again."""
    objects = partners(obj, candidates(scene))
    if not objects:
        return None

    def saved(o: bpy.types.Object) -> tuple:
        kind = kind_of(o)
        assert kind is not None  # a member
        return kind.saved_key(o, scene, recorded_rest_matrix(o), fresh)

    return set_key(objects, scene, lambda o: own if o == obj else saved(o))


def with_partners(scene: bpy.types.Scene, objects: Sequence[bpy.types.Object]) -> list[bpy.types.Object]:
    """``objects`` followed by the partners of each (``partners``) not among them: what a bake of
    ``objects`` bakes, so that a set is baked whole."""
    result = list(objects)
    found = candidates(scene)
    for obj in objects:
        result += [o for o in partners(obj, found) if o not in result]
    return result


def _key(members: Sequence[Member], scene: bpy.types.Scene) -> tuple:
    """The set's frame cache key: every member's (motion key, records version), and the contact."""
    return (tuple((*m.kind.motion_key(m.obj, scene, m.prepared), m.slot.version) for m in members),
            contact([m.obj for m in members], scene))


def _cache(members: Sequence[Member], scene: bpy.types.Scene) -> FrameCache | None:
    """The set's frame cache if every member's slot holds it and its key holds, else ``None``."""
    shared = members[0].slot.shared
    if shared is None or any(m.slot.shared is not shared for m in members):
        return None
    return shared if shared.key == _key(members, scene) else None


def plan(members: Sequence[Member], scene: bpy.types.Scene, frame: int) -> list[list[int]]:
    """Per member, the frames whose inputs must be sampled before the set can be stepped to
    ``frame`` (as ``frames.plan``, from the set's nearest cached frame)."""
    frame = max(frame, scene.frame_start)
    cache = _cache(members, scene)
    base = scene.frame_start if cache is None else max(f for f in cache.cached_frames() if f <= frame)
    wanted = []
    for m in members:
        missing = [f for f in range(base, frame + 1) if f not in m.slot.records]
        animated = missing and m.kind.inputs_animated(m.obj, scene, m.prepared)
        wanted.append(missing if animated else [])
    return wanted


def state(members: Sequence[Member], scene: bpy.types.Scene, frame: int) -> TouchingState:
    """The set's state at ``frame`` from its frame cache (a new one, from the start frame's rest,
    when any member's key or the contact changed), stepping with each member's recorded inputs
    (``plan`` and ``frames.sample`` first). A step that goes non-finite freezes the set there and
    every member warns once.

    Raises:
        scene_inputs.InputsUnavailable: a member's frame inputs were never read.
    """
    motions = [m.kind.motion_key(m.obj, scene, m.prepared) for m in members]
    bodies = []
    for m, motion in zip(members, motions):
        body = m.kind.body(m.prepared, motion)
        if isinstance(body, CageBody):  # what the others touch: its shown mesh (a Surface body's faces)
            body = dataclasses.replace(body, triangles=m.prepared.triangles)
        bodies.append(body)
    together = TouchingBodies(tuple(bodies), contact([m.obj for m in members], scene))

    def inputs(m: Member, f: int) -> Any:
        return frames.inputs(m.kind, m.slot, m.obj, scene, m.prepared, f)

    def controls(f: int) -> list[Any]:
        return [m.kind.control(m.prepared, motion, inputs(m, f), inputs(m, f + 1))
                for m, motion in zip(members, motions)]

    cache = _cache(members, scene)
    if cache is None:
        rest = together.rest_state([m.kind.control(m.prepared, motion, inputs(m, scene.frame_start),
                                                   inputs(m, scene.frame_start))
                                    for m, motion in zip(members, motions)])
        cache = FrameCache(scene.frame_start, rest, _key(members, scene))
        _note_overlaps(members, together, rest)
        for m in members:
            m.slot.shared = cache
    result = cache.state_at(frame, lambda state_, f: together.step(state_, controls(f)))
    if cache.first_bad_frame is not None:
        for m in members:
            if not m.slot.warning:
                frames.warn(m.obj, m.kind.name, m.kind.unstable(m.obj, cache.first_bad_frame))
    return result


def state_at(obj: bpy.types.Object, scene: bpy.types.Scene, frame: int,
             depsgraph: bpy.types.Depsgraph) -> tuple[frames.Slot, Any, Any] | None:
    """(slot, state at ``frame``, that frame's inputs) of ``obj`` stepped in its set, for bakes and
    exports (as ``frames.state_at``); ``None`` when it steps alone.

    Raises:
        a member kind's errors: a broken member; scene_inputs.InputsUnavailable: frames to sample
        during a render.
    """
    objects = partners(obj, candidates(scene))
    if not objects:
        return None
    members = []
    for o in objects:
        kind = kind_of(o)
        assert kind is not None  # a member
        slot = frames.slot(o, kind.name)
        prepared = frames.prepare(kind, slot, o, scene, depsgraph)
        frames.read_current(kind, slot, o, prepared, scene, depsgraph)
        members.append(Member(o, kind, slot, prepared))
    frames.sample(scene, [(m.kind, m.slot, m.obj, m.prepared, missing)
                          for m, missing in zip(members, plan(members, scene, frame))])
    found = state(members, scene, frame)
    mine = members[objects.index(obj)]
    return (mine.slot, found.states[objects.index(obj)],
            frames.inputs(mine.kind, mine.slot, obj, scene, mine.prepared, max(frame, scene.frame_start)))


def _note_overlaps(members: Sequence[Member], together: TouchingBodies, rest: TouchingState) -> None:
    """Record, for the panel, which members start inside which (deeper than the contact distance:
    ``tetrig_addon.touching.overlapping``, whose vertices the contacts leave alone)."""
    names = [m.obj.name_full for m in members]
    for name in names:
        _placed_inside.pop(name, None)
    for a, b in overlapping(together.members, rest.states, together.contact):
        _placed_inside.setdefault(names[a], []).append(names[b])
        _placed_inside.setdefault(names[b], []).append(names[a])
    for name in names:
        if name in _placed_inside:
            _placed_inside[name] = sorted(set(_placed_inside[name]))


def placed_inside(obj: bpy.types.Object) -> list[str]:
    """The bodies ``obj`` was placed overlapping at its set's start frame, deeper than its Distance
    (names, sorted; [] for none, or before its set has stepped)."""
    return list(_placed_inside.get(obj.name_full, []))
