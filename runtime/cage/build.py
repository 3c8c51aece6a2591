"""Build Cage & Bind: a cage object around the mesh as the modifiers before TetRig make it, the
binding in mesh attributes, the offset modifiers and the settings; and how long it will take.

Operators and the batch script call these; they raise ``TetRigInputError`` with a user-facing
message and change nothing when they refuse.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

import bpy
import numpy as np
from scipy.spatial import ConvexHull, QhullError

from ...tetrig_addon.cage import METHOD_FIT, bind, build_cage, voxelize
from ...tetrig_addon.cage.fit import FIT_MIN_SOLID_SHARE, FIT_VOXELS_PER_SPACING
from ...tetrig_addon.errors import TetRigInputError
from ..common import binding_store, edits, frames, mesh_io, offset_modifier, points_object, stack, versioning
from ..common.properties import BODY_CAGE, ROLE_CAGE, ROLE_SOURCE, object_settings
from ..common.rig import check_source, remove
from . import cage_object, instances


@dataclass(frozen=True)
class BuildReport:
    """What Build Cage made, for the operator's report and the batch summary."""

    vertex_count: int
    control_point_count: int
    tet_count: int
    outside_count: int
    dropped_slivers: int
    seconds: float
    method: str = "FIT"
    note: str = ""

    def message(self, name: str) -> str:
        outside = f", {self.outside_count} bound to the nearest tet" if self.outside_count else ""
        note = f"; {self.note}" if self.note else ""
        return (f"{name}: {self.method.title()} cage, {self.control_point_count} control points, "
                f"{self.tet_count} tets, {self.vertex_count} vertices bound{outside} "
                f"({self.seconds * 1000:.0f} ms){note}")


# Build Cage & Bind time, the operator's whole call (cage, binding, cage object, first frame's
# solver model). Over the cap the engine builds the cage again with larger cells
# (``tetrig_addon.cage.build_cage``), and every attempt costs: at Resolution 30 under the default cap
# of 2,000 points, spot's first attempt has 67,000 tets and takes 80 % of the build. Per attempt,
# HULL_S_PER_TET per tet for the Hull cage (a Delaunay of the lattice), FIT_S_PER_TET per tet and
# FIT_S_PER_VERTEX per mesh vertex for the Fit cage (its inside test, signed distances near the
# surface, refinement); then CAGE_S_PER_TET per tet of the cage made (the cage object, the solver
# model) and BUILD_S_PER_VERTEX per vertex (binding, attributes), plus BUILD_FIXED_S. Fitted to the
# engine's attempts (timed one by one) and the operator's calls on suzanne, spot, cow, teapot,
# woody and the bunny at Resolutions 10-30 on 2 busy cores (benchmarks/build_estimate.py).
# Each build the estimate said would take more than a second sets the speed of the machine
# Blender runs on (``record_build_time``), which the next estimates are scaled by.
BUILD_FIXED_S = 0.3
HULL_S_PER_TET = 100e-6
FIT_S_PER_TET = 400e-6
FIT_S_PER_VERTEX = 75e-6
CAGE_S_PER_TET = 100e-6
BUILD_S_PER_VERTEX = 60e-6
BUILD_S_PER_TET = HULL_S_PER_TET  # (an older name)
ESTIMATE_CALIBRATION_S = 1.0
SPEED_RANGE = (0.25, 4.0)
# Delaunay tets per control point of a cage (measured 5.6-5.9 on the meshes above).
TETS_PER_CONTROL_POINT = 5.8
FIT_POINTS_PER_SURFACE_CELL = 3.0  # Fit cage: margin layer + outer offsets per spacing² of surface
_speed = 1.0  # this machine's build time over the constants' (record_build_time)


@dataclass(frozen=True)
class BuildEstimate:
    """What Build Cage & Bind is expected to make and take, before it runs.

    Attributes:
        work_tets: the tets of every attempt the engine is expected to make (the last is the cage).
    """

    control_point_count: int
    tet_count: int
    seconds: float
    work_tets: int = 0
    base_seconds: float = 0.0  # ``seconds`` at the constants' speed (before ``_speed``)

    def message(self) -> str:
        return (f"About {self.control_point_count:,} control points and {self.tet_count:,} tets: building "
                f"takes about {self.seconds:.0f} s, and Blender does not respond meanwhile.")


def estimate(obj: bpy.types.Object) -> BuildEstimate:
    """Estimate the cage of ``obj`` from its settings: a BCC lattice has two points per cubic cell
    inside the hull (less a half-cell boundary layer), plus about one hull point per cell of
    surface; a Fit cage has two per cell inside the mesh itself plus about three per cell of its
    surface (its margin layer and outer offsets, fitted on the test meshes). Over the cap the cells
    grow as the engine grows them (within 25 % on the test meshes), and each attempt's tets count
    in the time. Takes a convex hull of the vertices, or the mesh's volume and area (tens of ms)."""
    settings = object_settings(obj)
    vertices = mesh_io.vertex_positions(mesh_io.mesh_of(obj))
    if len(vertices) < 4:
        return BuildEstimate(0, 0, BUILD_FIXED_S)
    extent = np.ptp(vertices, axis=0)
    spacing = max(float(extent.max()), 1e-12) / max(settings.resolution, 1)
    fit = _closed_volume_and_area(obj, vertices) if settings.cage_method == METHOD_FIT else None
    if fit is not None and _shell(obj, vertices, spacing, fit):
        fit = None  # the engine finds no inside to fit (an open shell): it builds the hull
    if fit is not None:
        volume, area = fit
    else:
        try:
            hull = ConvexHull(vertices)
            volume, area = float(hull.volume), float(hull.area)
        except (QhullError, ValueError):  # flat or degenerate: TetRig pads it to two cells thick
            volume = float(np.prod(np.maximum(extent, 2.0 * spacing))) / 2.0
            area = 2.0 * float(np.sort(extent)[1:].prod())

    def count(h: float) -> float:
        if fit is not None:
            return 2.0 * volume / h ** 3 + FIT_POINTS_PER_SURFACE_CELL * area / h ** 2
        return 2.0 * max(volume - 0.5 * h * area, 0.0) / h ** 3 + area / h ** 2

    cap = settings.max_control_points
    work, attempts = 0.0, 1
    for _ in range(32):  # over the cap, the spacing grows as tetrig_addon.cage.build_cage grows it
        if count(spacing) <= cap:
            break
        work += TETS_PER_CONTROL_POINT * count(spacing)  # an attempt over the cap, built and dropped
        attempts += 1
        spacing *= 1.1 * (count(spacing) / cap) ** (1.0 / 3.0)
    control_points = int(min(count(spacing), cap))
    tets = int(TETS_PER_CONTROL_POINT * control_points)
    work_tets = int(work) + tets
    count_v = len(vertices)
    attempt_s = (FIT_S_PER_TET * work_tets + FIT_S_PER_VERTEX * count_v * attempts if fit is not None
                 else HULL_S_PER_TET * work_tets)
    base = BUILD_FIXED_S + attempt_s + CAGE_S_PER_TET * tets + BUILD_S_PER_VERTEX * count_v
    return BuildEstimate(control_points, tets, base * _speed, work_tets, base)


# A Fit estimate above this [s] checks first whether the engine will fall back to the hull (its
# inside test at the build's voxel size: up to a second on the bunny at Resolution 30, worth it only
# before a build that asks first).
SHELL_CHECK_ABOVE_S = 2.0


def _shell(obj: bpy.types.Object, vertices: np.ndarray, spacing: float, fit: tuple[float, float]) -> bool:
    """Whether the Fit cage of a mesh that would take long falls back to the hull (an open shell:
    Woody), as ``tetrig_addon.cage.build_cage`` decides it: the share of solid voxels."""
    volume, area = fit
    if (BUILD_FIXED_S + FIT_S_PER_TET * TETS_PER_CONTROL_POINT * 2.0 * volume / spacing ** 3) * _speed < SHELL_CHECK_ABOVE_S:
        return False
    try:
        solid = voxelize(vertices, mesh_io.triangles(mesh_io.mesh_of(obj)), spacing / FIT_VOXELS_PER_SPACING)
    except (TetRigInputError, ValueError, MemoryError):
        return False
    return solid.solid_share < FIT_MIN_SOLID_SHARE


def _closed_volume_and_area(obj: bpy.types.Object, vertices: np.ndarray) -> tuple[float, float] | None:
    """The volume [m³] and surface area [m²] of ``obj``'s mesh (divergence theorem over its
    triangles), or None when it has no inside to fill (no faces, flat): the Fit cage falls back
    to the hull there."""
    tris = mesh_io.triangles(mesh_io.mesh_of(obj))
    if len(tris) == 0:
        return None
    a, b, c = vertices[tris[:, 0]], vertices[tris[:, 1]], vertices[tris[:, 2]]
    area = 0.5 * float(np.linalg.norm(np.cross(b - a, c - a), axis=1).sum())
    volume = abs(float(np.einsum("ij,ij->", a, np.cross(b, c)))) / 6.0
    if volume <= 1e-9 * max(area, 1e-12) ** 1.5:
        return None
    return volume, area


def record_build_time(guess: BuildEstimate, seconds: float) -> None:
    """Calibrate ``estimate`` with a whole Build Cage & Bind call that was measured [s]: ``guess``
    is what ``estimate`` said before it. A build estimated at more than ``ESTIMATE_CALIBRATION_S``
    sets the machine's speed (within ``SPEED_RANGE`` of the constants')."""
    global _speed
    if guess.base_seconds > ESTIMATE_CALIBRATION_S:
        _speed = min(max(seconds / guess.base_seconds, SPEED_RANGE[0]), SPEED_RANGE[1])


def build(obj: bpy.types.Object, collection: bpy.types.Collection) -> BuildReport:
    """Build the cage of ``obj`` around TetRig's input (``stack``: the mesh as the modifiers before
    TetRig make it) and bind every input vertex (replacing any old cage), keeping the settings and
    TetRig's place in the stack. The engine runs before anything is touched, so a refusal changes
    nothing."""
    settings = object_settings(obj)
    group = instances.instances(obj) if settings.role == ROLE_SOURCE and not settings.surface_bound else [obj]
    check_source(obj, len(group))  # the instances of a bound soft body (Alt+D) are rebuilt together
    t0 = time.perf_counter()
    position = stack.tetrig_index(obj)
    if position is None:
        position = stack.insert_index(obj)
    vertices, triangles, source = stack.evaluate_input(obj)
    own = stack.own_vertices(obj)
    cage = build_cage(vertices, settings.resolution, settings.max_control_points,
                      triangles=triangles, method=settings.cage_method)
    binding = bind(vertices, cage.control_points, cage.tets)
    seconds = time.perf_counter() - t0

    shown = settings.show_cage  # a rebuilt cage stays as visible as the old one
    remove(obj)
    cage_obj = cage_object.create(obj, cage, collection, visible=shown)
    object_settings(cage_obj).role = ROLE_CAGE
    object_settings(cage_obj).source = obj
    points = None if own else points_object.create(obj, vertices, source, collection)
    binding_store.store(mesh_io.mesh_of(points if points is not None else obj),
                        binding.control_point_indices, binding.weights)
    mesh_io.write_attribute(mesh_io.mesh_of(cage_obj), binding_store.OFFSET_ATTRIBUTE, "FLOAT_VECTOR",
                            np.zeros((cage.control_point_count, 3)))
    offset_modifier.ensure(obj, position, points)
    offset_modifier.ensure(cage_obj)
    settings.role = ROLE_SOURCE
    settings.body_type = BODY_CAGE
    versioning.stamp(obj)  # its unset settings read today's defaults (``versioning``)
    settings.cage = cage_obj
    settings.points = points
    settings.bind_id = uuid.uuid4().hex
    settings.rest_fingerprint = edits.rest_fingerprint(obj, fresh=True)
    settings.cage_note = cage.note
    settings.has_rest_matrix = False  # the next evaluation records the pose
    settings.bound_vertex_count = binding.vertex_count
    settings.outside_count = binding.outside_count
    frames.free(obj)
    instances.rebuilt(obj)
    return BuildReport(binding.vertex_count, cage.control_point_count, cage.tet_count,
                       binding.outside_count, cage.dropped_slivers, seconds, cage.method, cage.note)
