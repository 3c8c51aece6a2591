"""Baking: simulate a frame range once and keep the control points in the .blend.

A bake is a stored copy of what live playback computes: the frames come from the same frame cache
(``common/frames.state_at``, through the body's kind), so a baked frame shows what the live frame shows, up to the
float32 rounding of the stored coordinates (measured: 6e-8 m on the 0.25 m Stanford bunny). Playback of a baked
frame reads one array slice and blends it, with no simulation at all, so baked files play, render
and export at the same speed on every machine.

Outdated bakes: the bake stores the fingerprint of its inputs (``motion_key``: binding,
object transform, settings, fps, start frame). When a setting changes afterwards, the bake is
*outdated*: the panel and renders say so, but it **keeps playing back as baked** until it is freed
or baked again, like a baked point cache in Blender. A render farm renders exactly what was baked;
a stray click on a setting never changes a final render silently. Frames outside the baked range
are simulated live, as if there were no bake.

Bodies that touch (``common/touching``) are baked as a set: baking one bakes its partners too, each
from the set's frame cache, and a partner's change outdates the bakes of the whole set.

Jobs run a few frames at a time (``BakeJob.step``) so the modal operator stays responsive, or all
at once (``BakeJob.run``) in background mode and in the batch script.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import bpy
import numpy as np

from . import scene as scene_driver
from .common import bake_store, edits, frames, scene_inputs, touching
from .common.animation import rest_world_matrix
from .common.properties import ROLE_SOURCE, is_surface, object_settings
from .common.soft_body import all_soft_bodies
from .surface import bake_frames

# Frames between progress lines of a bake run without a window.
PROGRESS_EVERY = 10


class BakeError(RuntimeError):
    """A soft body cannot be baked; the message says why and what to do."""


BakeStatus = bake_store.BakeStatus


def _kind(obj: bpy.types.Object) -> Any:
    """The soft body's kind (``scene.kind_of``): a cage or a Surface body.

    Raises:
        BakeError: ``obj`` is not a soft body.
    """
    kind = scene_driver.kind_of(obj)
    if kind is None or not hasattr(kind, "bake_frame"):
        raise BakeError(f"{obj.name} is not a TetRig soft body")
    return kind


def current_fingerprint(obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray,
                        fresh: bool = False) -> str | None:
    """Fingerprint of the current inputs of ``obj``'s motion (``fresh``: its rest shape digested
    again), or ``None`` when its settings are invalid (then no bake can be current)."""
    try:
        return _kind(obj).fingerprint(obj, scene, world, fresh)
    except ValueError:
        return None


def status(obj: bpy.types.Object, scene: bpy.types.Scene,
           world: np.ndarray | None = None) -> BakeStatus | None:
    """The bake of a soft body and whether it is outdated, or ``None`` when it has no valid bake.

    Args:
        world: the object's start-frame world matrix; default the one last recorded.
    """
    kind = scene_driver.kind_of(obj)
    return kind.bake_status(obj, scene, world) if kind is not None and hasattr(kind, "bake_status") else None


def bakeable(obj: bpy.types.Object | None) -> str:
    """Why ``obj`` cannot be baked, or '' when it can."""
    if obj is None:
        return "Select a TetRig soft body or its cage"
    if obj.type != "MESH" or object_settings(obj).role != ROLE_SOURCE:
        return f"{obj.name} is not a TetRig soft body"
    if object_settings(obj).cage is None and not is_surface(obj):
        return f"{obj.name}: its cage object is gone; press Build Cage again"
    if not object_settings(obj).simulate:
        return f"{obj.name} has Simulate turned off"
    return ""


@dataclass
class _ObjectBake:
    """The bake of one object while it is being made."""

    name: str
    frame_start: int
    frame_end: int
    fingerprint: str = ""
    inputs: list[str] = field(default_factory=list)  # scene_inputs.motion_digest per baked frame
    rest_local: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3), dtype=np.float32))
    next_frame: int = 0
    seconds: float = 0.0  # simulating its frames
    started: float = 0.0  # time.perf_counter() when its first frame began
    surface: bool = False  # a Surface body: its vertices are the "control points"
    tears: list[bake_frames.SurfaceFrame] = field(default_factory=list)  # a tearing one's frames


@dataclass(frozen=True)
class BakeResult:
    """One finished bake.

    Attributes:
        seconds: simulating its frames [s].
        elapsed: from its first frame to its last, as the user waited [s]: the simulation, and in
            the UI the viewport's preview and the progress bars (``RedrawBudget``).
    """

    name: str
    info: bake_store.BakeInfo
    seconds: float
    elapsed: float = 0.0

    def message(self) -> str:
        per_frame = self.seconds / self.info.frame_count * 1000
        elapsed = max(self.elapsed, self.seconds)
        return (f"{self.name}: baked frames {self.info.frame_start}–{self.info.frame_end}, "
                f"{self.info.control_point_count} control points, {self.info.nbytes / 1e6:.2f} MB, "
                f"in {elapsed:.1f} s ({self.seconds:.1f} s simulating, {per_frame:.1f} ms/frame)")


# A wait between two steps this much longer than the shortest is the viewport still redrawing [s].
QUIET_MARGIN_S = 0.02


@dataclass
class RedrawBudget:
    """How much a bake in the UI may spend showing itself: the viewport's preview of the frame just
    baked, and the progress bars. A redraw of a dense mesh on a slow display costs more than the
    frames it shows (the bunny: 48 of a bake's 52 s), and the viewport keeps redrawing for several
    event-loop turns after each preview (its anti-aliasing samples: 0.8 s a turn for the bunny in
    the real Blender 4.3 on a virtual display), so a redraw is allowed only while what the redraws
    cost so far, with the next one, stays within ``share`` of the time the bake took.

    What the redraws cost is every wait between two steps beyond the shortest one seen (Blender's
    own turn of its event loop, which a bake that shows nothing also waits): the wait right after a
    redraw and the turns after it alike. A preview waits until the last one's turns are over
    (``quiet``), so each is measured whole before the next is allowed.

    Attributes:
        share: the largest part of the elapsed time the redraws may take (0.2).
        baking: the time spent baking [s]; other: the time between the bake's steps [s].
        idle: the shortest wait between two steps so far [s].
        waits: how many waits there were; last: the last one [s].
        preview: what a preview cost at most, with the turns after it [s]; progress: the last
            progress redraw's wait beyond ``idle`` [s].
    """

    share: float = 0.2
    baking: float = 0.0
    other: float = 0.0
    idle: float = float("inf")
    waits: int = 0
    preview: float = 0.0
    progress: float = 0.0
    last: float = 0.0
    _tail: tuple[float, int] = (0.0, 0)  # the waits since the last preview: their sum [s] and count

    def stepped(self, seconds: float) -> None:
        """The bake ran ``seconds``."""
        self.baking += seconds

    def waited(self, seconds: float, shown: str) -> None:
        """``seconds`` went by between two steps, after a redraw of ``shown`` ("preview",
        "progress" or "" for none)."""
        self.other += seconds
        self.waits += 1
        self.last = seconds
        self.idle = min(self.idle, seconds)
        if shown == "preview":  # a new preview: the last one's tail is complete
            self.preview = max(self.preview, self._cost(self._tail))
            self._tail = (0.0, 0)
        if shown == "preview" or self._tail[1]:
            self._tail = (self._tail[0] + seconds, self._tail[1] + 1)
            self.preview = max(self.preview, self._cost(self._tail))
        if shown == "progress":
            self.progress = max(seconds - self.idle, 0.0)

    def _cost(self, waits: tuple[float, int]) -> float:
        return max(waits[0] - self.idle * waits[1], 0.0)

    @property
    def quiet(self) -> bool:
        """Whether the viewport has stopped redrawing: the last wait was Blender's own turn."""
        return self.last <= self.idle + QUIET_MARGIN_S

    @property
    def redrawing(self) -> float:
        """What the redraws cost so far [s]: every wait beyond ``idle`` (the first ones also the
        viewport settling from what came before the bake, which delays the first preview)."""
        return self._cost((self.other, self.waits))

    def allows(self, cost: float) -> bool:
        """Whether a redraw that costs ``cost`` [s] keeps the redraws within their share."""
        return self.redrawing + cost <= self.share * (self.baking + self.other)

    @property
    def overhead(self) -> float:
        """The part of the elapsed time the redraws took, 0..1."""
        total = self.baking + self.other
        return self.redrawing / total if total > 0.0 else 0.0


class BakeJob:
    """Bake soft bodies of one scene over a frame range, object after object.

    Holds object and scene *names*, never ``bpy`` references (the modal operator keeps a job across
    event-loop iterations). Each object's bake is stored as soon as that object is done.

    Raises (constructor):
        BakeError: no objects, an object that cannot be baked, or an empty frame range.
    """

    def __init__(self, objects: list[bpy.types.Object], scene: bpy.types.Scene,
                 frame_start: int | None = None, frame_end: int | None = None) -> None:
        if not objects:
            raise BakeError("No soft body to bake")
        # a set of touching bodies is baked whole (``common/touching``): its members move together
        objects = touching.with_partners(scene, objects)
        for obj in objects:
            problem = bakeable(obj)
            if problem:
                raise BakeError(problem)
        first = scene.frame_start if frame_start is None else int(frame_start)
        last = scene.frame_end if frame_end is None else int(frame_end)
        if last < first:
            raise BakeError(f"The frame range {first}–{last} is empty")
        self.scene_name = scene.name
        self.frame_start, self.frame_end = first, last
        self._pending = [_ObjectBake(o.name, first, last) for o in objects]
        self._current: _ObjectBake | None = None
        self.results: list[BakeResult] = []

    @property
    def frame_count(self) -> int:
        return self.frame_end - self.frame_start + 1

    @property
    def total_frames(self) -> int:
        """Frames to bake over all objects (the progress bar's range)."""
        return self.frame_count * (len(self.results) + len(self._pending) + (self._current is not None))

    @property
    def frames_done(self) -> int:
        current = 0 if self._current is None else self._current.next_frame - self.frame_start
        return self.frame_count * len(self.results) + current

    @property
    def current_name(self) -> str:
        return self._current.name if self._current is not None else ""

    @property
    def current_frame(self) -> int:
        return self._current.next_frame if self._current is not None else self.frame_start

    @property
    def done(self) -> bool:
        return self._current is None and not self._pending

    @property
    def fraction(self) -> float:
        """Share of the frames baked, 0..1 (the progress bar)."""
        return self.frames_done / max(self.total_frames, 1)

    def latest(self) -> tuple[str, np.ndarray] | None:
        """(object name, control-point displacements float64 [Q, 3] in object space) of the last
        frame baked of the object being baked, to show while baking; ``None`` before its first."""
        job = self._current
        if job is None or job.next_frame <= job.frame_start:
            return None
        return job.name, job.positions[job.next_frame - 1 - job.frame_start] - job.rest_local

    def show_latest(self) -> None:
        """Show the last frame baked of the object being baked, the scene's frame staying where it
        is (the modal operator's preview; a Surface body's tear shows once the bake is done)."""
        latest = self.latest()
        obj = bpy.data.objects.get(latest[0]) if latest is not None else None
        if latest is not None and obj is not None:
            _kind(obj).preview(obj, latest[1])

    def _scene(self) -> bpy.types.Scene:
        scene = bpy.data.scenes.get(self.scene_name)
        if scene is None:
            raise BakeError(f"The scene {self.scene_name!r} is gone")
        return scene

    def _object(self, name: str) -> bpy.types.Object:
        obj = bpy.data.objects.get(name)
        problem = bakeable(obj) if obj is not None else f"{name} is gone"
        if obj is None or problem:
            raise BakeError(problem)
        return obj

    def _begin(self, job: _ObjectBake, depsgraph: bpy.types.Depsgraph) -> None:
        obj, scene = self._object(job.name), self._scene()
        world = rest_world_matrix(obj, depsgraph)
        kind = _kind(obj)
        job.surface = is_surface(obj)
        edits.rest_fingerprint(obj, fresh=True)  # the binding's check: the rest shape digested now
        # raises StaleBindingError, or TetRigInputError on a refused mesh
        kind.prepare(obj, scene, depsgraph, frames.slot(obj, kind.name))
        job.rest_local = kind.bake_rest(obj)
        job.fingerprint = kind.fingerprint(obj, scene, world, fresh=True)
        job.positions = np.empty((self.frame_count, job.rest_local.shape[0], 3), dtype=np.float32)
        job.next_frame = self.frame_start
        job.started = time.perf_counter()

    def _finish(self, job: _ObjectBake) -> None:
        obj = self._object(job.name)
        settings = object_settings(obj)
        header = bake_store.BakeInfo(frame_start=job.frame_start, frame_end=job.frame_end,
                                     control_point_count=job.positions.shape[1],
                                     bind_id=settings.bind_id, fingerprint=job.fingerprint,
                                     inputs="".join(job.inputs))
        tear = bake_frames.tear_arrays(job.tears) if job.tears else None
        target = bake_store.holder(obj)
        assert target is not None  # bakeable: a cage, or the Surface body itself
        bake_store.write(target, header, job.positions, tear)
        frames.slot(obj, _kind(obj).name).inputs_changed = False
        self.results.append(BakeResult(job.name, header, job.seconds, time.perf_counter() - job.started))

    def step(self, depsgraph: bpy.types.Depsgraph, budget_s: float = 0.1,
             progress: Callable[[str, int, int], None] | None = None) -> bool:
        """Bake frames for about ``budget_s`` seconds (at least one frame); returns ``done``.

        Args:
            progress: called as ``progress(name, frame, last_frame)`` after every frame.

        Raises:
            BakeError: an object or the scene went away, or an object's inputs changed mid-bake.
            StaleBindingError: a binding no longer matches its mesh.
            ValueError: invalid settings (``TetRigInputError``).
        """
        t_end = time.perf_counter() + budget_s
        scene = self._scene()
        while not self.done:
            if self._current is None:
                self._current = self._pending.pop(0)
                self._begin(self._current, depsgraph)
            job = self._current
            obj = self._object(job.name)
            world = rest_world_matrix(obj, depsgraph)
            if current_fingerprint(obj, scene, world) != job.fingerprint:
                raise BakeError(f"{obj.name}: its settings changed while baking; bake again")
            while job.next_frame <= job.frame_end:
                t0 = time.perf_counter()
                local, inputs, follows = self._frame(job, obj, scene, world, depsgraph)
                job.inputs.append(scene_inputs.motion_digest(inputs, follows))
                job.positions[job.next_frame - job.frame_start] = local
                job.seconds += time.perf_counter() - t0
                if progress is not None:
                    progress(job.name, job.next_frame, job.frame_end)
                job.next_frame += 1
                if time.perf_counter() >= t_end:
                    break
            if job.next_frame > job.frame_end:
                self._finish(job)
                self._current = None
            if time.perf_counter() >= t_end:
                break
        return self.done

    @staticmethod
    def _frame(job: _ObjectBake, obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray,
               depsgraph: bpy.types.Depsgraph) -> tuple[np.ndarray, scene_inputs.FrameInputs, bool]:
        """The next frame of ``job``: (control points float64 [Q, 3] object space, the frame's
        scene inputs, whether the body follows them); a tearing Surface body's tear is kept."""
        displacements, inputs, follows, tear = _kind(obj).bake_frame(obj, scene, job.next_frame, depsgraph)
        if tear is not None:
            job.tears.append(tear)
        return job.rest_local + displacements, inputs, follows

    def run(self, depsgraph: bpy.types.Depsgraph,
            progress: Callable[[str, int, int], None] | None = None) -> list[BakeResult]:
        """Bake everything now; returns one result per object (see ``step`` for the errors)."""
        while not self.step(depsgraph, budget_s=float("inf"), progress=progress):
            pass
        return self.results


# The bake the modal operator runs in this session, for the panel's and status bar's progress bar.
_running: BakeJob | None = None


def running() -> BakeJob | None:
    """The bake the UI is running now, or ``None``."""
    return _running


def set_running(job: BakeJob | None) -> None:
    global _running
    _running = job


def print_progress(prefix: str = "TetRig bake") -> Callable[[str, int, int], None]:
    """A ``progress`` callback that prints ``<prefix>: <name> frame 40/120`` every
    ``PROGRESS_EVERY`` frames and at the last frame."""
    counts: dict[str, int] = {}

    def report(name: str, frame: int, last: int) -> None:
        counts[name] = counts.get(name, 0) + 1
        if counts[name] % PROGRESS_EVERY == 0 or frame == last:
            print(f"{prefix}: {name} frame {frame}/{last}", flush=True)

    return report


def baked_soft_bodies(scene: bpy.types.Scene) -> list[bpy.types.Object]:
    """The scene's soft bodies (Simulate on or off) that have a bake."""
    return [o for o in all_soft_bodies(scene) if bake_store.source_bake(o) is not None]


def free(obj: bpy.types.Object) -> bool:
    """Remove the bake of a soft body; returns whether there was one. Later frames are live."""
    return bake_store.clear(bake_store.holder(obj))
