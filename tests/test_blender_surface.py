"""Surface bodies in real Blender (the bpy module): Set Up Surface Body, the frame handler, pins,
pressure, plasticity (cages too), jump == play, bake == live, save and reload.

The meshes are Blender's own primitives: a UV sphere (32 × 16, r = 0.5 m) and grids; the material
numbers are the engine tests' (tests/test_engine_surface.py), so the same physics is checked
through the Blender layer: the rest shape is never written, the frames show through the offset
modifier.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from blender_helpers import attribute_snapshot, drawn_panel, evaluated_positions, rest_positions, world

FPS = 24
G = 9.81
# Baked frames are float32 object-space positions: playback differs from live by their rounding.
BAKED_VS_LIVE_TOL = 1e-6  # [m] on a 1 m body


def _triangles_volume(points: np.ndarray, obj) -> float:
    """The volume [m³] the faces of ``obj``'s mesh enclose at ``points`` [N, 3] (divergence
    theorem over Blender's triangulation)."""
    mesh = obj.data
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, dtype=np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    p = points.astype(np.float64)[tris.reshape(-1, 3)]
    return float(np.einsum("ij,ij->", p[:, 0], np.cross(p[:, 1], p[:, 2]))) / 6.0


def jelly(bpy, pressure: float, name: str = "Jelly"):
    """A UV sphere (r = 0.5 m) 1.5 m up as a Surface body: 10 kg/m², stretch 3000 N/m, shear
    300 N/m, bending 0.01 N·m, on the ground, damping 0.5/s (the engine test's jelly)."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=0.5, location=(0.0, 0.0, 1.5))
    obj = bpy.context.active_object
    obj.name = name
    s = obj.tetrig
    s.body_type = "SURFACE"
    s.areal_density, s.stretch, s.shear, s.bending, s.pressure = 10.0, 3e3, 3e2, 0.01, pressure
    s.use_ground, s.damping = True, 0.5
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    return obj


def grid(bpy, cells: int = 10, size: float = 1.0, name: str = "Sheet"):
    """A ``cells`` × ``cells`` grid of side ``size`` [m], standing in the xz plane (its rotation in
    the object's transform, the mesh's own coordinates in xy), top edge at z = 2 m."""
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=cells, y_subdivisions=cells, size=size,
                                    location=(0.0, 0.0, 2.0 - size / 2), rotation=(np.pi / 2, 0.0, 0.0))
    obj = bpy.context.active_object
    obj.name = name
    return obj


def _play(bpy, obj, frames) -> np.ndarray:
    """Evaluated local positions of the mesh's own vertices at each frame, shown in order: float32
    [F, N, 3] (a torn mesh's split copies come after them)."""
    out = []
    for frame in frames:
        bpy.context.scene.frame_set(frame)
        out.append(evaluated_positions(obj)[:len(obj.data.vertices)])
    return np.stack(out)


def test_setup_on_a_uv_sphere_shows_the_fall_and_keeps_the_rest_shape(scene):
    """Set Up Surface Body makes the sphere a Surface soft body (no cage, the TetRig modifier, a zero
    offset); at frame 10 it has fallen as gravity says (damping 0.5/s: within 2 % of the damped
    fall, rigidly: its shape within 1 mm), and its own coordinates are untouched."""
    import bpy

    obj = jelly(bpy, 1e5)
    rest = rest_positions(obj).copy()
    s = obj.tetrig
    assert (s.role, s.body_type, s.surface_bound, s.cage) == ("SOURCE", "SURFACE", True, None)
    assert obj.modifiers["TetRig"].type == "NODES"
    assert len(obj.data.vertices) == 482
    assert np.array_equal(evaluated_positions(obj), rest)
    scene.frame_set(10)
    shown = evaluated_positions(obj)
    t = 9 / FPS
    fall = G / 0.5 * (t - (1.0 - np.exp(-0.5 * t)) / 0.5)  # v' = -g - c·v from rest
    drop = (shown - rest)[:, 2]
    assert np.mean(drop) == pytest.approx(-fall, rel=0.02)
    assert np.ptp(drop) < 1e-3
    assert np.array_equal(rest_positions(obj), rest)


def test_pressure_on_an_open_grid_is_refused_and_changes_nothing(scene):
    """An open grid with pressure on: the operator reports the engine's reason (open edges, fill the
    holes or turn Pressure off) and cancels; the object, its mesh and its modifiers are as they
    were. With pressure off the same grid sets up."""
    import bpy

    obj = grid(bpy, 4)
    obj.tetrig.pressure = 1e5
    before = attribute_snapshot(obj.data)
    with pytest.raises(RuntimeError, match=r"Sheet is not closed \(16 open edges\): pressure needs a closed surface"):
        bpy.ops.tetrig.setup_surface()
    assert (obj.tetrig.role, obj.tetrig.surface_bound, len(obj.modifiers)) == ("NONE", False, 0)
    after = attribute_snapshot(obj.data)
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    obj.tetrig.pressure = 0.0
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    assert obj.tetrig.surface_bound


def test_a_pinned_grid_hangs_and_stretches_as_its_springs_predict(scene):
    """Acceptance: a 1 m square grid (10 × 10 cells, 1 kg/m², stretch 100 N/m, no shear or
    bending) hangs from its pinned top row: the top row stays where it is and the bottom row
    comes down by ρ_A·g·L²/(2·stretch) = 4.9 cm (the engine's hanging strip) within 10 %."""
    import bpy

    obj = grid(bpy)
    rest = world(obj, rest_positions(obj))
    top = np.isclose(rest[:, 2], 2.0)
    group = obj.vertex_groups.new(name="Pin")
    group.add(np.flatnonzero(top).tolist(), 1.0, "REPLACE")
    s = obj.tetrig
    s.pin_group, s.stretch, s.shear, s.bending, s.areal_density, s.damping = "Pin", 100.0, 0.0, 0.0, 1.0, 5.0
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    scene.frame_set(100)
    shown = world(obj, evaluated_positions(obj))
    assert np.abs(shown[top] - rest[top]).max() < 1e-6
    bottom = np.isclose(rest[:, 2], 1.0)
    stretch = rest[bottom, 2].mean() - shown[bottom, 2].mean()
    assert stretch == pytest.approx(1.0 * G * 1.0 ** 2 / (2 * 100.0), rel=0.1)


def test_pressure_keeps_a_dropped_sphere_s_volume(scene):
    """Acceptance: dropped on the ground (frames 1–40: it lands at about frame 12 and bounces),
    the sphere with 1e5 Pa keeps its enclosed volume within 5 % in every frame shown; with pressure
    0 it loses more than 30 %."""
    import bpy

    full = jelly(bpy, 1e5, "Full")
    empty = jelly(bpy, 0.0, "Empty")
    empty.location.x = 2.0
    rest = _triangles_volume(rest_positions(full), full)
    kept, lost = [], []
    for frame in range(1, 41):
        scene.frame_set(frame)
        kept.append(_triangles_volume(evaluated_positions(full), full) / rest)
        lost.append(_triangles_volume(evaluated_positions(empty), empty) / rest)
    lowest = world(full, evaluated_positions(full))[:, 2].min()
    assert lowest < 0.01  # it reached the ground
    assert np.abs(np.array(kept) - 1.0).max() < 0.05
    assert min(lost) < 0.7


def _crept(rest_lengths, original) -> float:
    """The largest relative change of a state's rest lengths from the model's (0 when none)."""
    if rest_lengths is None:
        return 0.0
    return float(np.abs(rest_lengths / original - 1.0).max())


def test_plasticity_dents_a_cage_for_good(scene):
    """Acceptance (cage): a ball dropped on the ground with plasticity (yield 0.5 %, rate 50/s)
    keeps a permanent strain: its frame states carry crept rest lengths (more than 1 % off the
    cage's) after landing, still there 20 frames later, the same reached by a jump; without
    plasticity the rest lengths are the cage's."""
    import bpy
    from blender_helpers import ball
    from tetrig.runtime import scene as driver
    from tetrig.runtime.common import frames

    obj = ball(bpy)
    obj.tetrig.youngs_modulus = 2e4
    scene.frame_set(30)
    assert frames.find(obj).cache._states[30].rest_lengths is None
    s = obj.tetrig
    s.use_plasticity, s.plastic_yield, s.plastic_rate = True, 0.005, 50.0
    _play(bpy, obj, range(1, 51))
    original = frames.find(obj).prepared.model.rest_lengths
    states = frames.find(obj).cache._states
    assert _crept(states[30].rest_lengths, original) > 0.01
    assert _crept(states[50].rest_lengths, original) > 0.01
    played = evaluated_positions(obj)
    driver.free(obj)
    scene.frame_set(1)
    scene.frame_set(50)
    assert np.array_equal(evaluated_positions(obj), played)
    assert np.array_equal(frames.find(obj).cache._states[50].rest_lengths, states[50].rest_lengths)


def test_plasticity_stretches_a_hanging_surface_for_good(scene):
    """Acceptance (surface): the pinned grid of the hanging test (strain about 10 % at the top) with
    plasticity (yield 1 %, rate 20/s): its edges' rest lengths creep (their mean more than 1 %
    longer at frame 48, and longer at frame 96), and it hangs lower than the elastic grid."""
    import bpy
    from tetrig.runtime.common import frames

    bodies = []
    for plastic in (False, True):
        obj = grid(bpy, name=f"Sheet{plastic}")
        obj.location.x = 2.0 * plastic
        rest = world(obj, rest_positions(obj))
        obj.vertex_groups.new(name="Pin").add(np.flatnonzero(np.isclose(rest[:, 2], 2.0)).tolist(), 1.0, "REPLACE")
        s = obj.tetrig
        s.pin_group, s.stretch, s.shear, s.bending, s.damping = "Pin", 100.0, 0.0, 0.0, 5.0
        s.use_plasticity, s.plastic_yield, s.plastic_rate = plastic, 0.01, 20.0
        s.use_soft_bodies = False  # each its own frame cache, read below (apart, a set steps them as alone)
        assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
        bodies.append((obj, rest))
    _play(bpy, bodies[1][0], range(1, 97))
    obj = bodies[1][0]
    original = frames.find(obj).prepared.body.model_for(np.zeros(0, dtype=bool)).model.rest_lengths
    states = frames.find(obj).cache._states
    edges = original < 0.11  # the structural springs (0.1 m); the diagonals have no stiffness here
    crept = [float(np.mean(states[f].rest_lengths[edges] / original[edges] - 1.0)) for f in (48, 96)]
    print(f"\nmean creep of the edges: {crept[0]:.4f} at frame 48, {crept[1]:.4f} at frame 96")
    assert 0.01 < crept[0] < crept[1]
    low = [world(o, evaluated_positions(o))[np.isclose(r[:, 2], 1.0), 2].mean() for o, r in bodies]
    assert low[1] < low[0] - 0.01


def test_jumping_shows_what_playing_shows(scene):
    """Acceptance: the jelly with pressure, played frame by frame to 30 or jumped to 30 from the
    start with every cached frame dropped: the same positions, bit for bit."""
    import bpy
    from tetrig.runtime import scene as driver

    obj = jelly(bpy, 1e5)
    played = _play(bpy, obj, range(1, 31))[-1]
    driver.free(obj)
    scene.frame_set(1)
    scene.frame_set(30)
    assert np.array_equal(evaluated_positions(obj), played)
    assert np.abs(played - rest_positions(obj)).max() > 0.3  # it fell


def test_bake_plays_as_live_and_survives_save_and_reload(scene, tmp_path):
    """Acceptance: the jelly baked over frames 1–30 plays back as it played live (float32 rounding),
    without stepping the engine; saved and reopened it plays the same numbers, the bake is
    current, and the mesh's own coordinates are the original ones after all of it."""
    import bpy
    from tetrig.runtime import bake
    from tetrig.runtime.common import bake_store
    from tetrig.runtime import scene as driver
    from tetrig.tetrig_addon.surface import SurfaceBody

    scene.frame_end = 30
    obj = jelly(bpy, 1e5)
    rest = rest_positions(obj).copy()
    live = _play(bpy, obj, range(1, 31))
    driver.free()
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    info = bake_store.source_bake(obj)
    assert info is not None and (info.frame_start, info.frame_end, info.control_point_count) == (1, 30, 482)
    assert obj.tetrig["_bake"]["positions"].typecode == "f"

    def refuse(*_args, **_kwargs):
        raise AssertionError("SurfaceBody.advance called during baked playback")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SurfaceBody, "advance", refuse)
        baked = _play(bpy, obj, range(1, 31))
        assert np.abs(baked - live).max() < BAKED_VS_LIVE_TOL
        path = tmp_path / "jelly.blend"
        bpy.ops.wm.save_as_mainfile(filepath=str(path))
        bpy.ops.wm.open_mainfile(filepath=str(path))
        obj = bpy.data.objects["Jelly"]
        reloaded = _play(bpy, obj, range(1, 31))
    assert np.array_equal(reloaded, baked)
    state = bake.status(obj, bpy.context.scene)
    assert state is not None and not state.outdated
    assert np.array_equal(rest_positions(obj), rest)
    obj.tetrig.youngs_modulus *= 10  # a cage's setting: the surface's motion does not depend on it
    assert not bake.status(obj, bpy.context.scene).outdated
    obj.tetrig.pressure = 5e4
    assert bake.status(obj, bpy.context.scene).outdated


def test_the_panel_shows_a_surface_body_s_material_plasticity_and_tearing(scene):
    """The N-panel of a Surface body: the body type, Set Up Again and what the surface is made of;
    the material (stretch, shear, bending, pressure, density) in Simulation; Plasticity and Tearing
    subpanels; no cage settings and no Quality. A cage body's panel keeps its cage settings and
    gets the body type and Plasticity, not Tearing."""
    import bpy
    from blender_helpers import ball
    from tetrig.panels import main

    obj = jelly(bpy, 0.0)
    context = SimpleNamespace(active_object=obj, region=SimpleNamespace(width=600),
                              preferences=SimpleNamespace(system=SimpleNamespace(ui_scale=1.0)), scene=scene)
    shown = drawn_panel(main.TETRIG_PT_main, context)
    assert shown[:2] == ["body_type", "tetrig.setup_surface"]
    assert "Surface: 482 vertices, 992 edges, 512 faces" in shown and "cage_method" not in shown
    settings = drawn_panel(main.TETRIG_PT_simulation, context)
    assert settings[:5] == ["stretch", "shear", "bending", "pressure", "areal_density"]
    assert "youngs_modulus" not in settings and "pin_group" in settings
    assert drawn_panel(main.TETRIG_PT_plasticity, context) == ["plastic_yield", "plastic_rate", "plastic_max_strain"]
    assert drawn_panel(main.TETRIG_PT_tearing, context) == ["tear_threshold"]
    assert main.TETRIG_PT_tearing.poll(context) and not main.TETRIG_PT_quality.poll(context)
    for cls in (main.TETRIG_PT_plasticity, main.TETRIG_PT_tearing):
        assert hasattr(bpy.types, cls.__name__) and cls.bl_parent_id == "TETRIG_PT_simulation"

    cage_body = ball(bpy)
    context.active_object = cage_body
    shown = drawn_panel(main.TETRIG_PT_main, context)
    assert shown[:3] == ["body_type", "cage_method", "resolution"] and "tetrig.build_cage" in shown
    assert "youngs_modulus" in drawn_panel(main.TETRIG_PT_simulation, context)
    assert main.TETRIG_PT_plasticity.poll(context) and not main.TETRIG_PT_tearing.poll(context)
    assert main.TETRIG_PT_quality.poll(context)


PULL_FRAMES = 24  # frames 1-25: each hook moves 0.5 m/s apart (the engine's tearing scene)


def pulled_sheet(bpy, scene):
    """The engine's tearing scene in Blender: a 0.5 m sheet of 10 × 10 quads in the xy plane (no
    gravity; 1 kg/m², stretch 1000 N/m, shear 100 N/m, bending 0.001 N·m, damping 2/s, tearing
    at 30 % stretch), its 3 × 3 corner vertices at (0, 0) and (0.5, 0) pinned and hooked to two
    empties that move apart along x at 0.5 m/s each (Hook modifiers before TetRig: the pins
    follow the posed input)."""
    scene.use_gravity = False
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=0.5, location=(0.0, 0.0, 0.0))
    sheet = bpy.context.active_object
    sheet.name = "Torn"
    rest = rest_positions(sheet) + 0.25  # the sheet from (0, 0) to (0.5, 0.5) in the engine's terms
    left = (rest[:, 0] <= 0.1 + 1e-6) & (rest[:, 1] <= 0.1 + 1e-6)
    right = (rest[:, 0] >= 0.4 - 1e-6) & (rest[:, 1] <= 0.1 + 1e-6)
    sheet.vertex_groups.new(name="Pin").add(np.flatnonzero(left | right).tolist(), 1.0, "REPLACE")
    for name, grip, direction in (("Left", left, -1.0), ("Right", right, 1.0)):
        sheet.vertex_groups.new(name=name).add(np.flatnonzero(grip).tolist(), 1.0, "REPLACE")
        empty = bpy.data.objects.new(name + "Hook", None)
        scene.collection.objects.link(empty)
        empty.keyframe_insert("location", frame=1)
        empty.location.x = direction * 0.5 * PULL_FRAMES / FPS
        empty.keyframe_insert("location", frame=1 + PULL_FRAMES)
        for curve in _fcurves(empty):
            for key in curve.keyframe_points:
                key.interpolation = "LINEAR"
        hook = sheet.modifiers.new(name, "HOOK")
        hook.object, hook.vertex_group = empty, name
    s = sheet.tetrig
    s.pin_group, s.areal_density, s.stretch, s.shear, s.bending, s.damping = "Pin", 1.0, 1e3, 100.0, 1e-3, 2.0
    s.use_tearing, s.tear_threshold = True, 0.3
    bpy.context.view_layer.objects.active = sheet
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    assert [m.type for m in sheet.modifiers] == ["HOOK", "HOOK", "NODES"]
    return sheet, left, right


def _fcurves(obj):
    """The F-curves of an object's action (Blender 5 keeps them in the action's layered channelbag)."""
    action = obj.animation_data.action
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    from bpy_extras import anim_utils

    return list(anim_utils.action_get_channelbag_for_slot(action, obj.animation_data.action_slot).fcurves)


def _torn_edges(obj) -> np.ndarray:
    from tetrig.runtime.surface import tear_display

    attr = obj.data.attributes.get(tear_display.TORN_ATTRIBUTE)
    if attr is None:
        return np.zeros(len(obj.data.edges), dtype=bool)
    out = np.empty(len(obj.data.edges), dtype=bool)
    attr.data.foreach_get("value", out)
    return out


def test_a_pulled_sheet_tears_between_its_pins(scene):
    """Acceptance: pulled apart by its hooked pins, the sheet tears along the line between them
    (at least 10 torn edges, all within 0.2 m of that side), the pins follow the hooks exactly,
    and the tear is frame state: jumped to, the same torn edges and positions."""
    import bpy
    from tetrig.runtime import scene as driver
    from tetrig.runtime.common import frames

    sheet, left, right = pulled_sheet(bpy, scene)
    played = _play(bpy, sheet, range(1, 2 + PULL_FRAMES))[-1]
    torn = _torn_edges(sheet)
    assert torn.sum() >= 10
    rest = rest_positions(sheet) + 0.25
    ends = np.array([e.vertices[:] for e in sheet.data.edges])
    assert rest[ends[torn]].mean(1)[:, 1].max() < 0.2
    pull = 0.5 * PULL_FRAMES / FPS
    assert np.abs(played[left] - (rest[left] - 0.25 - [pull, 0.0, 0.0])).max() < 1e-5
    assert np.abs(played[right] - (rest[right] - 0.25 + [pull, 0.0, 0.0])).max() < 1e-5
    # the shown mesh is the engine's split mesh: a vertex for each of its particles, where they are
    shown = evaluated_positions(sheet)
    prepared = frames.find(sheet).prepared
    split = prepared.body.split_mesh(frames.find(sheet).cache._states[1 + PULL_FRAMES])
    print(f"\n{torn.sum()} torn edges; {len(shown)} vertices shown for {len(rest)}")
    assert len(shown) == len(split.positions) > len(rest) + 10
    nearest = np.linalg.norm(shown[:, None] - split.positions[None], axis=2).min(1)
    assert nearest.max() < 1e-5
    driver.free(sheet)
    scene.frame_set(1)
    assert len(evaluated_positions(sheet)) == len(rest)  # back at rest: nothing torn
    scene.frame_set(1 + PULL_FRAMES)
    assert np.array_equal(_torn_edges(sheet), torn)
    assert np.array_equal(evaluated_positions(sheet), shown)


def _tear_offsets(obj) -> np.ndarray:
    from tetrig.runtime.surface import tear_display

    attr = obj.data.attributes.get(tear_display.TEAR_OFFSET_ATTRIBUTE)
    if attr is None:
        return np.zeros((len(obj.data.loops), 3), dtype=np.float32)
    out = np.empty(len(obj.data.loops) * 3, dtype=np.float32)
    attr.data.foreach_get("vector", out)
    return out.reshape(-1, 3)


def test_a_torn_sheet_bakes_saves_and_reloads_as_it_played(scene, tmp_path):
    """Acceptance: the pulled sheet baked (frames 1-25) shows the live tear from the bake (torn
    edges, corner offsets, positions to float32 rounding); saved and reopened, the same."""
    import bpy
    from tetrig.runtime import scene as driver

    scene.frame_end = 1 + PULL_FRAMES
    sheet, _, _ = pulled_sheet(bpy, scene)
    live = _play(bpy, sheet, range(1, 2 + PULL_FRAMES))
    live_torn, live_offsets = _torn_edges(sheet), _tear_offsets(sheet)
    live_count = len(evaluated_positions(sheet))
    assert live_count > len(sheet.data.vertices)
    assert live_torn.sum() >= 10 and np.abs(live_offsets).max() > 0.01
    driver.free()
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    assert len(sheet.tetrig["_bake"]["torn_counts"]) == 1 + PULL_FRAMES
    baked = _play(bpy, sheet, range(1, 2 + PULL_FRAMES))
    assert np.abs(baked - live).max() < BAKED_VS_LIVE_TOL
    assert np.array_equal(_torn_edges(sheet), live_torn)
    assert np.abs(_tear_offsets(sheet) - live_offsets).max() < BAKED_VS_LIVE_TOL
    path = tmp_path / "torn.blend"
    bpy.ops.wm.save_as_mainfile(filepath=str(path))
    bpy.ops.wm.open_mainfile(filepath=str(path))
    sheet = bpy.data.objects["Torn"]
    scene = bpy.context.scene
    scene.frame_set(1)
    assert not _torn_edges(sheet).any()
    reloaded = _play(bpy, sheet, range(1, 2 + PULL_FRAMES))
    assert np.array_equal(reloaded, baked)
    assert len(evaluated_positions(sheet)) == live_count
    assert np.array_equal(_torn_edges(sheet), live_torn)
    assert np.abs(_tear_offsets(sheet) - live_offsets).max() < BAKED_VS_LIVE_TOL


def test_pins_and_goals_follow_the_object_s_animation(scene):
    """A grid hanging from its pinned top row, its object animated 1 m along +x over frames 1-13:
    the pinned row follows the animation exactly, the free bottom row lags behind (it hangs off to
    −x in the object's frame while it accelerates) and swings after it."""
    import bpy

    obj = grid(bpy, 6)
    rest = rest_positions(obj).copy()
    top = np.isclose(world(obj, rest)[:, 2], 2.0)
    obj.vertex_groups.new(name="Pin").add(np.flatnonzero(top).tolist(), 1.0, "REPLACE")
    s = obj.tetrig
    s.pin_group, s.stretch, s.shear, s.bending, s.damping = "Pin", 1e3, 100.0, 1e-3, 1.0
    obj.keyframe_insert("location", frame=1)
    obj.location.x += 1.0
    obj.keyframe_insert("location", frame=13)
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    frames = _play(bpy, obj, range(1, 14))
    assert np.abs(frames[:, top] - rest[top]).max() < 1e-5  # object space: the pins ride along
    bottom = np.isclose(world(obj, rest)[:, 2], 1.0)
    lag = (frames[:, bottom] - rest[bottom])[:, :, 0].mean(1)  # object x of the free bottom row
    assert lag[6] < -0.05  # behind the accelerating top
    assert np.array_equal(rest_positions(obj), rest)


def test_a_sheet_drapes_over_a_collision_box(scene):
    """A 1 m sheet (10 × 10 quads) dropped 0.25 m onto a 0.5 m box with Collision physics
    (thickness 0.02 m) drapes over it: after 2 s the vertices above the box rest on its top (within
    the thickness), the corners hang below the top."""
    import bpy

    bpy.ops.mesh.primitive_cube_add(size=0.5, location=(0.0, 0.0, 0.0))
    box = bpy.context.active_object
    bpy.ops.object.modifier_add(type="COLLISION")
    box.collision.thickness_outer = 0.02
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=1.0, location=(0.0, 0.0, 0.5))
    sheet = bpy.context.active_object
    s = sheet.tetrig
    s.stretch, s.shear, s.bending, s.damping, s.use_colliders = 1e3, 100.0, 1e-4, 2.0, True
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    scene.frame_set(49)
    shown = world(sheet, evaluated_positions(sheet))
    rest = world(sheet, rest_positions(sheet))
    above = (np.abs(rest[:, 0]) < 0.2) & (np.abs(rest[:, 1]) < 0.2)
    assert shown[above, 2].min() > 0.25 - 0.005 and shown[above, 2].max() < 0.25 + 0.03
    corners = (np.abs(rest[:, 0]) > 0.45) & (np.abs(rest[:, 1]) > 0.45)
    assert shown[corners, 2].max() < 0.2


def test_a_surface_bake_s_fingerprint_follows_the_frame_cache_key(scene):
    """``surface.kind.motion_key`` (the bake's fingerprint) holds every input of the live frame
    cache's key but the per-session scene-inputs version, with tearing and plasticity on too."""
    import bpy
    from tetrig.runtime.common import frames, animation
    from tetrig.runtime.surface import kind as surface_kind

    obj = jelly(bpy, 1e5)
    for frame, plastic in ((3, False), (4, True)):
        obj.tetrig.use_plasticity = obj.tetrig.use_tearing = plastic
        scene.frame_set(frame)
        world_matrix = animation.rest_world_matrix(obj, bpy.context.evaluated_depsgraph_get())
        key = frames.find(obj).cache.key
        assert key[-1] == frames.find(obj).version
        assert surface_kind.motion_key(obj, scene, world_matrix) == ("SURFACE", *key[0], *key[1:-1])
        assert (key[3] is not None) == plastic and (key[4] is not None) == plastic


def test_remove_gives_back_the_mesh_as_it_was(scene):
    """Remove Soft Body on a torn, baked Surface body: the modifier, the offset and tear attributes
    and the bake are gone, and the mesh's data is what it was before Set Up (the settings stay)."""
    import bpy

    scene.frame_end = 1 + PULL_FRAMES
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=10, y_subdivisions=10, size=0.5)
    before = attribute_snapshot(bpy.context.active_object.data)
    bpy.ops.object.delete()
    sheet, _, _ = pulled_sheet(bpy, scene)
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    scene.frame_set(1 + PULL_FRAMES)
    assert _torn_edges(sheet).any() and "_bake" in sheet.tetrig
    assert bpy.ops.tetrig.remove() == {"FINISHED"}
    assert [m.type for m in sheet.modifiers] == ["HOOK", "HOOK"] and "_bake" not in sheet.tetrig
    assert (sheet.tetrig.role, sheet.tetrig.surface_bound, sheet.tetrig.use_tearing) == ("NONE", False, True)
    after = attribute_snapshot(sheet.data)
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)


def test_pins_follow_an_armature(scene):
    """A grid hanging from its top row, which an Armature modifier (before TetRig) carries 0.5 m
    sideways over frames 1-13: the pinned row is where the armature puts it (the posed input),
    the rest of the sheet lags and is dragged after it on its springs."""
    import bpy

    arm = bpy.data.objects.new("Rig", bpy.data.armatures.new("Rig"))
    scene.collection.objects.link(arm)
    bpy.context.view_layer.objects.active = arm
    bpy.ops.object.mode_set(mode="EDIT")
    bone = arm.data.edit_bones.new("Bone")
    bone.head, bone.tail = (0.0, 0.0, 2.0), (0.0, 0.0, 2.5)
    bpy.ops.object.mode_set(mode="OBJECT")
    pose = arm.pose.bones["Bone"]
    pose.keyframe_insert("location", frame=1)
    pose.location = (0.5, 0.0, 0.0)
    pose.keyframe_insert("location", frame=13)
    sheet = grid(bpy, 6)
    rest = world(sheet, rest_positions(sheet))
    top, bottom = np.isclose(rest[:, 2], 2.0), np.isclose(rest[:, 2], 1.0)
    sheet.vertex_groups.new(name="Bone").add(np.flatnonzero(top).tolist(), 1.0, "REPLACE")
    sheet.modifiers.new("Armature", "ARMATURE").object = arm
    s = sheet.tetrig
    s.pin_group, s.stretch, s.shear, s.bending, s.damping = "Bone", 1e3, 100.0, 1e-3, 1.0
    assert bpy.ops.tetrig.setup_surface() == {"FINISHED"}
    assert [m.type for m in sheet.modifiers] == ["ARMATURE", "NODES"]
    frames = _play(bpy, sheet, range(1, 14))
    shown = world(sheet, frames[-1])
    sheet.modifiers["TetRig"].show_viewport = False
    posed = world(sheet, evaluated_positions(sheet))
    sheet.modifiers["TetRig"].show_viewport = True
    moved = (posed - rest)[top, 0]
    assert np.allclose(moved, 0.5, atol=1e-5)  # the armature carries the top row 0.5 m along x
    assert np.abs(shown[top] - posed[top]).max() < 1e-5
    middle = world(sheet, frames[6]) - rest  # frame 7: the bottom lags behind the moving top
    assert middle[bottom, 0].mean() < middle[top, 0].mean() - 0.02
    assert (shown - rest)[bottom, 0].mean() > 0.2  # and is dragged after it
