"""The quality pass in real Blender (the bpy module): the Quality subpanel, the same repaired
surface in playback, bake playback, renders and every export (PC2, animation JSON, Alembic), a
posed (armature) mesh repaired against its pose, and the bunny's 5 m/s landing measured with the
pass off and on."""

from __future__ import annotations

import json

import numpy as np
import pytest
from blender_helpers import COARSE_RESOLUTION, evaluated_positions, import_obj, rest_positions

# A jelly ball dropped from 1.27 m lands at 5 m/s (v² = 2gh) on frame 14; IMPACT is the next.
DROP_HEIGHT = 25.0 / (2 * 9.81)
IMPACT = 15
LAST_FRAME = IMPACT + 2


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    scene.frame_end = LAST_FRAME
    return _bpy


# The solver without the global step (Global Iterations 0, implicit Euler), the defaults before issue
# 24: its one sweep per step stretches a body far more on a hard impact, the cases the pass is for.
_HARD = dict(global_iterations=0, integrator="IMPLICIT_EULER")


def jelly_ball(bpy, name: str = "Jelly"):
    """A bound ico sphere of 0.5 m radius whose bottom is DROP_HEIGHT above the ground, with the
    Jelly preset's material (E 10 kPa, K 167 kPa, 1050 kg/m³, damping 0.5 /s)."""
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=3, radius=0.5, location=(0.0, 0.0, 0.5 + DROP_HEIGHT))
    obj = bpy.context.active_object
    obj.name = name
    s = obj.tetrig
    s.resolution, s.use_ground, s.use_quality = COARSE_RESOLUTION, True, True
    s.youngs_modulus, s.volume_stiffness, s.density, s.damping = 1e4, 166667.0, 1050.0, 0.5
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    return obj


def expected_surface(bpy, obj, displacements, settings=None, quality_on=True, posed=None, fixed=None) -> np.ndarray:
    """The vertices the engine's pass gives for control-point displacements [Q, 3], from the mesh
    read here (not through the add-on's glue): float64 [N, 3]. ``posed``: a posed mesh's input
    [N, 3] this frame (the offsets are added to it and the pass keeps its edge lengths);
    ``fixed``: bool [N], pinned vertices."""
    from tetrig.runtime.cage import export
    from tetrig.tetrig_addon import quality
    from tetrig.tetrig_addon.cage import blend_matrix

    mesh = obj.data
    rest = rest_positions(obj).astype(np.float64)
    seed = export.seed_data(obj)
    blend = blend_matrix(seed.vertex_bones, seed.weights, len(seed.bones_rest))
    offsets = blend @ displacements
    base = rest if posed is None else np.asarray(posed, dtype=np.float64)
    if not quality_on:
        return base + offsets
    edges = np.empty(len(mesh.edges) * 2, np.int32)
    mesh.edges.foreach_get("vertices", edges)
    corners, sizes = np.empty(len(mesh.loops), np.int32), np.empty(len(mesh.polygons), np.int32)
    mesh.loops.foreach_get("vertex_index", corners)
    mesh.polygons.foreach_get("loop_total", sizes)
    plan = quality.build_plan(rest, edges.reshape(-1, 2), quality.boundary_vertices(len(rest), corners, sizes), fixed)
    laplacian = quality.affine_laplacian_matrix(plan, seed.bones_rest, seed.vertex_bones)
    result = quality.improve(plan, offsets, settings or quality.QualitySettings(), laplacian @ displacements,
                             rest_positions=posed)
    return base + result.displacements


def shown_displacements(bpy, obj, frame: int) -> np.ndarray:
    from tetrig.runtime.common import bake_store
    from tetrig.runtime.cage import kind as cage_kind

    baked = bake_store.baked_displacements(obj, frame)
    if baked is not None:
        return baked
    scene = bpy.context.scene
    return cage_kind.displacements_at(obj, scene, frame, bpy.context.evaluated_depsgraph_get())


def test_the_quality_subpanel_is_closed_at_first_and_holds_the_settings(bpy, addon):
    from tetrig.panels.main import TETRIG_PT_quality

    assert TETRIG_PT_quality.bl_parent_id == "TETRIG_PT_main"
    assert TETRIG_PT_quality.bl_options == {"DEFAULT_CLOSED"}
    assert TETRIG_PT_quality.header_toggle == "use_quality"
    assert hasattr(bpy.types, "TETRIG_PT_quality")
    bpy.ops.mesh.primitive_cube_add()
    assert not bpy.context.active_object.tetrig.use_quality  # off until asked for
    obj = jelly_ball(bpy)
    s = obj.tetrig
    assert (s.use_quality, s.quality_max_stretch, s.quality_max_compression, s.quality_clamp_iterations,
            s.quality_smoothing, s.quality_smoothing_iterations) == pytest.approx((True, 1.35, 0.70, 4, 0.45, 2))

    class Recorder:
        def __init__(self):
            self.props = []

        def column(self, align=False):
            return self

        def prop(self, data, name, **_):
            self.props.append(name)

    col = Recorder()
    TETRIG_PT_quality.draw_settings(None, obj, s, col)
    assert col.props == ["quality_max_stretch", "quality_max_compression", "quality_clamp_iterations",
                         "quality_smoothing", "quality_smoothing_iterations"]


def test_playback_shows_the_pass_and_a_changed_setting_shows_at_once(bpy, addon):
    from tetrig.tetrig_addon import quality

    obj = jelly_ball(bpy)
    scene = bpy.context.scene
    scene.frame_set(IMPACT)
    displacements = shown_displacements(bpy, obj, IMPACT)
    shown = evaluated_positions(obj)
    expected = expected_surface(bpy, obj, displacements)
    raw = expected_surface(bpy, obj, displacements, quality_on=False)
    assert np.abs(shown - expected).max() <= 1e-6
    change = np.linalg.norm(expected - raw, axis=1).max()
    print(f"\njelly ball landing at 5 m/s, frame {IMPACT}: the pass moves vertices by up to {change * 1e3:.2f} mm")
    assert change > 0.02  # the pass did repair something
    obj.tetrig.use_quality = False  # shown again at once, no frame change needed
    assert scene.frame_current == IMPACT
    assert np.abs(evaluated_positions(obj) - raw).max() <= 1e-6
    obj.tetrig.use_quality = True
    obj.tetrig.quality_max_stretch, obj.tetrig.quality_smoothing = 1.1, 0.9
    tighter = quality.QualitySettings(max_stretch=1.1, smoothing_weight=0.9)
    assert np.abs(evaluated_positions(obj) - expected_surface(bpy, obj, displacements, tighter)).max() <= 1e-6


def test_bake_playback_renders_and_every_export_carry_the_pass(bpy, addon, tmp_path):
    from tetrig.tetrig_addon.formats import animation_json, pc2, seed_json

    obj = jelly_ball(bpy)
    scene = bpy.context.scene
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    scene.frame_set(IMPACT)
    shown = evaluated_positions(obj)
    displacements = shown_displacements(bpy, obj, IMPACT)
    raw = expected_surface(bpy, obj, displacements, quality_on=False)
    assert np.abs(shown - expected_surface(bpy, obj, displacements)).max() <= 1e-6  # bake playback
    assert np.abs(shown - raw).max() > 0.02

    # PC2: the repaired vertices
    assert bpy.ops.tetrig.export_pc2(filepath=str(tmp_path / "ball.pc2")) == {"FINISHED"}
    assert np.abs(pc2.read(tmp_path / "ball.pc2").positions[IMPACT - 1] - shown).max() <= 1e-6

    # animation JSON: control points + the pass's settings and edges, which the reader applies
    assert bpy.ops.tetrig.export_json(filepath=str(tmp_path / "seed.json")) == {"FINISHED"}
    assert bpy.ops.tetrig.export_animation_json(filepath=str(tmp_path / "anim.json")) == {"FINISHED"}
    seed, anim = seed_json.read(tmp_path / "seed.json"), animation_json.read(tmp_path / "anim.json")
    assert anim.quality is not None and anim.quality.settings.max_stretch == pytest.approx(1.35)
    assert len(anim.quality.edges) == len(obj.data.edges)
    read_back = animation_json.vertex_positions(seed, anim, rest_positions(obj))
    assert np.abs(read_back[IMPACT - 1] - shown).max() <= 1e-6
    # without the rest positions the reader blends bones_rest: the same to the weights' rounding
    assert np.abs(animation_json.vertex_positions(seed, anim)[IMPACT - 1] - shown).max() <= 1e-5

    # Alembic: Blender's exporter reads the evaluated mesh, so the pass is in the file
    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    abc = tmp_path / "ball.abc"
    assert bpy.ops.wm.alembic_export(filepath=str(abc), start=IMPACT, end=IMPACT, selected=True,
                                     normals=False, as_background_job=False) == {"FINISHED"}

    # a render of the impact frame: the pass changes the picture, and a cold render repeats it
    def render(name: str) -> np.ndarray:
        scene.render.filepath = str(tmp_path / name)
        assert bpy.ops.render.render(write_still=True) == {"FINISHED"}
        image = bpy.data.images.load(str(tmp_path / name))
        pixels = np.empty(image.size[0] * image.size[1] * image.channels, np.float32)
        image.pixels.foreach_get(pixels)
        bpy.data.images.remove(image)
        return pixels

    bpy.ops.object.camera_add(location=(0.0, -1.6, 0.25), rotation=(1.5708, 0.0, 0.0))
    scene.camera = bpy.context.active_object
    bpy.ops.object.light_add(type="SUN", location=(0.0, 0.0, 5.0))
    # Cycles on the CPU, as test_blender_render: Workbench would start the GPU module in this
    # process, and test_blender_ui checks that drawing has no GPU in background mode
    scene.render.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples, scene.cycles.use_denoising, scene.cycles.seed = "CPU", 4, False, 0
    scene.render.resolution_x, scene.render.resolution_y, scene.render.resolution_percentage = 160, 120, 100
    scene.render.image_settings.file_format = "PNG"
    with_pass = render("on.png")
    obj.tetrig.use_quality = False
    without = render("off.png")
    assert np.abs(with_pass - without).max() > 0.02
    obj.tetrig.use_quality = True
    from tetrig.runtime import scene as driver
    driver.free()
    assert np.array_equal(render("on_again.png"), with_pass)

    # the animation JSON without the pass has no quality block, and its blend is the raw surface
    obj.tetrig.use_quality = False
    bpy.context.view_layer.objects.active = obj
    assert bpy.ops.tetrig.export_animation_json(filepath=str(tmp_path / "raw.json")) == {"FINISHED"}
    assert "quality" not in json.loads((tmp_path / "raw.json").read_text())
    raw_back = animation_json.vertex_positions(seed, animation_json.read(tmp_path / "raw.json"), rest_positions(obj))
    assert np.abs(raw_back[IMPACT - 1] - raw).max() <= 1e-6

    # the Alembic file read back: frame IMPACT is the repaired surface
    world = np.array(obj.matrix_world)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.wm.alembic_import(filepath=str(abc), as_background_job=False) == {"FINISHED"}
    imported = [o for o in bpy.context.scene.objects if o.type == "MESH"][0]
    bpy.context.scene.frame_set(IMPACT)
    m = np.array(imported.matrix_world)
    got = evaluated_positions(imported) @ m[:3, :3].T + m[:3, 3]
    assert np.abs(got - (shown @ world[:3, :3].T + world[:3, 3])).max() <= 1e-5


def test_a_posed_mesh_keeps_its_pose_and_is_repaired_against_it(bpy, addon):
    """An armature stretches the body's middle to 160 % (past Max Stretch): the pass leaves the
    pose alone (at rest it shows the posed input exactly) and repairs the simulation against it:
    the body walks 1 m in 8 frames, each shown frame is the posed input plus the pass's offsets, no
    edge past 1.35× its posed length (1.44× with the pass off), the pinned spine exactly on the
    skinning. (Jelly walking twice as fast keeps 1.85× from 2.58×: its bottom ring is stretched all
    round, and moving a ring's vertices along its edges hardly shrinks it; more Clamp Iterations.)
    Stepped without the global step, as the pass's hard cases above: at today's defaults the free
    belly swings further (1.70× with the pass off, 1.59× on: the same limit as Jelly's)."""
    from test_blender_characters import posed_positions, skinned_body

    from tetrig.tetrig_addon.quality import metrics as surface_metrics

    scene = bpy.context.scene
    obj, arm, belly, spine = skinned_body(bpy)
    obj.tetrig.use_quality = True
    for name, value in _HARD.items():
        setattr(obj.tetrig, name, value)
    root, middle = arm.pose.bones["Bone0"], arm.pose.bones["Bone1"]
    middle.scale = (1.0, 1.6, 1.0)  # the bone's axis is z: the middle third 1.6 × taller
    for frame, x in [(1, 0.0), (9, 1.0)]:
        root.location = (x, 0.0, 0.0)
        root.keyframe_insert("location", frame=frame)
    edges = np.array([e.vertices[:] for e in obj.data.edges])
    rest = rest_positions(obj).astype(np.float64)
    fixed = np.zeros(len(rest), bool)
    fixed[spine] = True
    scene.frame_set(1)
    posed = posed_positions(obj).astype(np.float64)
    assert surface_metrics.edge_length_ratios(rest, posed, edges).max() > 1.55  # the pose stretches
    assert np.abs(evaluated_positions(obj) - posed).max() <= 1e-6  # and the pass keeps it
    moved = []
    for f in range(2, 13):
        scene.frame_set(f)
        shown = evaluated_positions(obj).astype(np.float64)
        posed = posed_positions(obj).astype(np.float64)
        displacements = shown_displacements(bpy, obj, f)
        expected = expected_surface(bpy, obj, displacements, posed=posed, fixed=fixed)
        raw = expected_surface(bpy, obj, displacements, quality_on=False, posed=posed)
        assert np.abs(shown - expected).max() <= 1e-5
        np.testing.assert_allclose(shown[spine], posed[spine], atol=1e-5)
        ratios = surface_metrics.edge_length_ratios(posed, shown, edges)
        moved.append((float(np.linalg.norm(shown - raw, axis=1).max()),
                      float(surface_metrics.edge_length_ratios(posed, raw, edges).max()), float(ratios.max())))
    print(f"\nposed body walking 1 m in 8 frames: edges up to {max(m[1] for m in moved):.3f}× their posed "
          f"length with the pass off, {max(m[2] for m in moved):.3f}× on; the pass moves vertices by up to "
          f"{max(m[0] for m in moved) * 1e3:.2f} mm")
    assert max(m[2] for m in moved) <= 1.35 + 1e-5 and max(m[1] for m in moved) > 1.4


# The bunny falls from DROP_HEIGHT onto the TetRig ground: 5 m/s at impact (frame 13 at 24 fps).
BUNNY_FRAMES = 24


# TetRig's default material, and the Jelly preset (E 10 kPa, K 167 kPa, 1050 kg/m³, damping 0.5 /s),
# each landing as the solver stepped it without the global step (Global Iterations 0, implicit Euler):
# one sweep per step stretches the bottom far more on impact, so the pass has work. "jelly today":
# the Jelly bunny at today's defaults (Global Iterations 3, BDF2), whose landing stays near the limits.
_JELLY = dict(youngs_modulus=1e4, volume_stiffness=166667.0, density=1050.0, damping=0.5)
BUNNY_MATERIALS = {"default": _HARD, "jelly": {**_JELLY, **_HARD}, "jelly today": _JELLY}


@pytest.mark.parametrize("material", list(BUNNY_MATERIALS))
def test_the_bunny_landing_at_5_m_s_with_the_pass_off_and_on(bpy, addon, material):
    """The Stanford bunny (Fit cage) hits the ground at 5 m/s: measured in
    what Blender shows, frame by frame, with the pass off and on: the share of edges beyond 135 %
    of their rest length, the longest and shortest edge, and flipped triangles (normal against
    the rest normal; slivers counted apart). The default material: with the pass on every frame
    is within 1.35× and 0.70× and nothing flips. Jelly: its spikes (3.3×) come down to the limit
    on the impact frame; the seed's 4 + 4 sweeps leave a residue on the frames after (up to 1.54×,
    2 slivers turned over; more Clamp Iterations clear more). Both as landed without the global step;
    Jelly at today's defaults lands within 1.82× with the pass off and within the limits with it on."""
    from tetrig.tetrig_addon.quality import metrics as surface_metrics

    scene = bpy.context.scene
    scene.frame_end = BUNNY_FRAMES
    obj = import_obj("stanford-bunny")
    bpy.context.view_layer.update()
    lowest = (rest_positions(obj).astype(np.float64) @ np.array(obj.matrix_world)[:3, :3].T)[:, 2].min()
    obj.location.z = DROP_HEIGHT - lowest - obj.tetrig.ground_height
    obj.tetrig.use_ground = True
    for name, value in BUNNY_MATERIALS[material].items():
        setattr(obj.tetrig, name, value)
    assert bpy.ops.tetrig.build_cage() == {"FINISHED"}
    assert bpy.ops.tetrig.bake() == {"FINISHED"}
    mesh = obj.data
    mesh.calc_loop_triangles()
    tris = np.empty(len(mesh.loop_triangles) * 3, np.int32)
    mesh.loop_triangles.foreach_get("vertices", tris)
    tris = tris.reshape(-1, 3)
    edges = np.empty(len(mesh.edges) * 2, np.int32)
    mesh.edges.foreach_get("vertices", edges)
    edges = edges.reshape(-1, 2)
    rest = rest_positions(obj).astype(np.float64)
    slivers = surface_metrics.sliver_triangles(rest, tris)
    figures = {}
    for on in (False, True):
        obj.tetrig.use_quality = on
        rows = []
        for f in range(1, BUNNY_FRAMES + 1):
            scene.frame_set(f)
            shown = evaluated_positions(obj).astype(np.float64)
            ratios = surface_metrics.edge_length_ratios(rest, shown, edges)
            flipped = surface_metrics.flipped_triangles(rest, shown, tris)
            rows.append((float(np.mean(ratios > 1.35)), float(ratios.max()), float(ratios.min()),
                         int(flipped.sum()), int((flipped & ~slivers).sum())))
        figures[on] = rows
    worst = int(np.argmax([r[1] for r in figures[False]]))
    print(f"\nbunny ({material}) landing at 5 m/s, {len(rest)} vertices, {len(edges)} edges, {len(tris)} "
          f"triangles; impact frame {worst + 1} (the longest edge with the pass off):")
    for on in (False, True):
        r, rows = figures[on][worst], figures[on]
        print(f"  pass {'on ' if on else 'off'}: {r[0] * 100:.4f} % of edges beyond 135 % "
              f"({round(r[0] * len(edges))} edges), max {r[1]:.3f}, min {r[2]:.3f}, {r[3]} flipped; "
              f"all frames: max {max(x[1] for x in rows):.4f}, min {min(x[2] for x in rows):.4f}, "
              f"{sum(x[3] for x in rows)} flips ({sum(x[4] for x in rows)} not slivers)")
    off, on_rows = figures[False], figures[True]
    assert sum(x[4] for x in on_rows) == 0  # no triangle flips (but for slivers, below)
    if material == "default":  # the pass off stays within 1.32× / 0.72×; on, within the limits
        assert max(x[1] for x in off) > 1.3
        assert max(x[1] for x in on_rows) <= 1.35 + 1e-5 and min(x[2] for x in on_rows) >= 0.70 - 1e-5
        assert sum(x[3] for x in on_rows) == 0
    elif material == "jelly today":  # 1.82× off (one edge beyond 1.35); on, within the limits (1 %)
        assert max(x[1] for x in off) > 1.5
        assert max(x[1] for x in on_rows) <= 1.35 * 1.01 and min(x[2] for x in on_rows) >= 0.70 * 0.99
        assert sum(x[3] for x in on_rows) == 0
    else:  # jelly spikes to 3.3×; the seed's 4 + 4 sweeps leave 1.54× on a later frame, 2 slivers
        assert max(x[1] for x in off) > 3.0 and on_rows[worst][0] < 0.6 * off[worst][0]
        assert max(x[1] for x in on_rows) < 1.6 and min(x[2] for x in on_rows) > 0.6
        assert sum(x[3] for x in on_rows) <= 2
