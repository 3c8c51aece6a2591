"""A torn Surface body shown through the TetRig node group (real bpy): the engine tears a pinned
sheet built from a Blender grid, ``tear_display.write`` stores its torn edges and corner offsets,
and the evaluated mesh (and an Alembic file exported from it) is split along the tear, every
corner where the engine shows its particle; untorn, the group gives back input + offset exactly."""

from __future__ import annotations

import numpy as np
import pytest
from blender_helpers import evaluated_positions, rest_positions
from engine_scenes import quad_grid

from tetrig_addon import solver
from tetrig_addon.surface import TearSettings, build_body

FPS = 24
CELLS, SPACING = 10, 0.05  # the pulled sheet of test_engine_tearing: 0.5 m, 10 × 10 quads
GRIP = 0.1  # each pin holds the corner's vertices within 10 cm in x and y
PULL_SPEED = 0.5  # [m/s], each pinned corner, apart along x
FRAMES = 24
SETTINGS = solver.SimSettings(gravity=(0.0, 0.0, 0.0), damping=2.0).validated()
MATERIAL = solver.SurfaceMaterial(stretch=1e3, shear=100.0, bending=1e-3)
TEAR = TearSettings(threshold=0.3)
# The object's placement: the engine works in world space, the attributes in object space.
LOCATION = (0.3, -0.2, 1.0)
ROTATION_Z = 0.4  # [rad]
TOL = 1e-5  # [m], float32 positions of a sheet within 2 m of the origin


@pytest.fixture()
def bpy(scene):
    import bpy as _bpy

    return _bpy


def _grid() -> np.ndarray:
    return quad_grid(CELLS, CELLS, SPACING)[0].astype(np.float32)


def _sheet_object(bpy):
    """The grid of quad_grid as a Blender mesh (same vertex and face order), placed at
    LOCATION turned by ROTATION_Z."""
    verts, corners, _ = quad_grid(CELLS, CELLS, SPACING)
    faces = corners.reshape(-1, 4).tolist()
    mesh = bpy.data.meshes.new("Sheet")
    mesh.from_pydata(verts.tolist(), [], faces)
    mesh.update()
    obj = bpy.data.objects.new("Sheet", mesh)
    bpy.context.collection.objects.link(obj)
    obj.location, obj.rotation_euler = LOCATION, (0.0, 0.0, ROTATION_Z)
    bpy.context.view_layer.update()
    return obj


def _loops(mesh, key):
    out = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get(key, out)
    return out


_ENGINE: dict[str, tuple] = {}  # the torn (body, state), made once: every test's sheet is the same


def _torn_state(obj):
    """Pull the sheet apart from its two bottom corners for FRAMES frames (world space, the
    engine built from the Blender mesh's own vertices, corners and edges): (body, state)."""
    if "sheet" not in _ENGINE:
        _ENGINE["sheet"] = _pull(obj)
    return _ENGINE["sheet"]


def _pull(obj):
    mesh = obj.data
    matrix = np.array(obj.matrix_world)
    local = rest_positions(obj).astype(np.float64)
    world = local @ matrix[:3, :3].T + matrix[:3, 3]
    edges = np.empty(len(mesh.edges) * 2, dtype=np.int32)
    mesh.edges.foreach_get("vertices", edges)
    sizes = np.empty(len(mesh.polygons), dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    size = CELLS * SPACING
    left = (local[:, 0] <= GRIP + 1e-9) & (local[:, 1] <= GRIP + 1e-9)
    right = (local[:, 0] >= size - GRIP - 1e-9) & (local[:, 1] <= GRIP + 1e-9)
    body = build_body(world, _loops(mesh, "vertex_index"), sizes, 1.0, goal_weights=(left | right) * 1.0,
                      edges=edges.reshape(-1, 2), corner_edges=_loops(mesh, "edge_index"), name="Sheet")
    direction = np.zeros_like(world)
    direction[left], direction[right] = -matrix[:3, 0], matrix[:3, 0]  # along the sheet's own x
    state = body.rest_state()
    for f in range(FRAMES):
        goals = (world + direction * PULL_SPEED * f / FPS, world + direction * PULL_SPEED * (f + 1) / FPS)
        state = body.advance(state, SETTINGS, MATERIAL, 1 / FPS, goals=goals, tear=TEAR)
    return body, state


def _to_local(obj, world: np.ndarray) -> np.ndarray:
    matrix = np.linalg.inv(np.array(obj.matrix_world))
    return world @ matrix[:3, :3].T + matrix[:3, 3]


def _show(obj, body, state):
    """Write the state as the Surface layer does: each vertex's own particle's displacement in
    ``tetrig_offset``, the tear in ``tear_display``. Returns the shown positions in object space
    (float64 [particle_count, 3]) and each corner's particle."""
    from tetrig.runtime.common import mesh_io, offset_modifier
    from tetrig.runtime.surface import tear_display

    shown = body.split_mesh(state)
    rest_local = mesh_io.vertex_positions(obj.data)
    shown_local = _to_local(obj, shown.positions)
    displacement = shown_local - rest_local[shown.source_vertices]
    n = len(obj.data.vertices)
    mesh_io.write_attribute(obj.data, "tetrig_offset", "FLOAT_VECTOR", displacement[:n])
    offset_modifier.ensure(obj)
    tear_display.write(obj, state.torn, tear_display.corner_offsets(
        displacement, shown.corner_vertices, _loops(obj.data, "vertex_index")))
    return shown_local, shown.corner_vertices


def _evaluated(bpy, obj):
    """(positions float32 [V, 3], corner vertices int32 [C], stored input index int32 [V],
    stored input positions float32 [V, 3], edge count) of the evaluated mesh."""
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    mesh = evaluated.to_mesh()
    try:
        count = len(mesh.vertices)
        co = np.empty(count * 3, dtype=np.float32)
        mesh.vertices.foreach_get("co", co)
        index = np.empty(count, dtype=np.int32)
        mesh.attributes[".tetrig_index"].data.foreach_get("value", index)
        stored = np.empty(count * 3, dtype=np.float32)
        mesh.attributes[".tetrig_input"].data.foreach_get("vector", stored)
        return co.reshape(-1, 3), _loops(mesh, "vertex_index"), index, stored.reshape(-1, 3), len(mesh.edges)
    finally:
        evaluated.to_mesh_clear()


@pytest.fixture()
def torn_sheet(bpy, addon):
    obj = _sheet_object(bpy)
    body, state = _torn_state(obj)
    return obj, body, state


def test_a_torn_sheet_evaluates_split_where_the_engine_shows_it(bpy, torn_sheet):
    """The evaluated mesh has one vertex per engine particle (measured 139 for the sheet's 121: 14 edges tore),
    every corner sits on its particle's shown position, the split copies carry the input index
    and position of the vertex they copy, and ``stack.read_input`` still reads the rest shape."""
    from tetrig.runtime.common import stack

    obj, body, state = torn_sheet
    n = len(obj.data.vertices)
    rest = rest_positions(obj)
    assert state.torn.any()
    shown, corner_particles = _show(obj, body, state)
    particles = shown.shape[0]
    assert particles > n  # the tear split vertices

    positions, corners, index, stored, _ = _evaluated(bpy, obj)
    assert positions.shape[0] == particles
    assert corners.shape[0] == len(obj.data.loops)
    assert np.abs(positions[corners] - shown[corner_particles]).max() <= TOL
    # the mesh's own vertices first, in order; each copy remembers the vertex it copies
    original = _loops(obj.data, "vertex_index")
    assert np.array_equal(index[:n], np.arange(n))
    assert np.array_equal(index[corners], original)
    assert np.array_equal(stored, rest[index])
    assert np.array_equal(rest_positions(obj), _grid())  # the mesh's coordinates were not written
    read = stack.read_input(obj, bpy.context.evaluated_depsgraph_get(), n)
    assert np.array_equal(read, rest.astype(np.float64))


def test_an_older_saved_group_is_rebuilt_in_place_and_splits(bpy, torn_sheet):
    """A node group saved by TetRig before tearing (version 2: no Split Edges) is rebuilt in
    place on the next ``ensure``: the modifier keeps the same group, which now splits."""
    from tetrig.runtime.common import offset_modifier

    obj, body, state = torn_sheet
    mod = offset_modifier.ensure(obj)
    group = mod.node_group
    for node in [nd for nd in group.nodes if nd.bl_idname == "GeometryNodeSplitEdges"]:
        group.nodes.remove(node)  # the old layout: stored input straight into Set Position
    store = next(nd for nd in group.nodes if nd.bl_idname == "GeometryNodeStoreNamedAttribute"
                 and nd.inputs["Name"].default_value == offset_modifier.INDEX_ATTRIBUTE)
    set_pos = next(nd for nd in group.nodes if nd.bl_idname == "GeometryNodeSetPosition")
    group.links.new(store.outputs[0], set_pos.inputs["Geometry"])
    group[offset_modifier.VERSION_KEY] = 2
    shown, _ = _show(obj, body, state)  # calls ensure
    assert obj.modifiers[offset_modifier.MODIFIER_NAME].node_group == group
    assert group[offset_modifier.VERSION_KEY] == offset_modifier.NODE_GROUP_VERSION == 3
    assert [nd.bl_idname for nd in group.nodes].count("GeometryNodeSplitEdges") == 1
    assert len(bpy.data.node_groups) == 1
    assert _evaluated(bpy, obj)[0].shape[0] == shown.shape[0]


def test_untorn_the_group_gives_input_plus_offset_bit_for_bit(bpy, torn_sheet):
    """Cleared (None, None: the attributes removed) or all false and zero, the group adds exactly
    ``tetrig_offset`` to the input and splits nothing."""
    from tetrig.runtime.common import mesh_io
    from tetrig.runtime.surface import tear_display

    obj, body, state = torn_sheet
    _show(obj, body, state)
    mesh = obj.data
    n, edges = len(mesh.vertices), len(mesh.edges)
    offset = np.linspace(-0.1, 0.1, n * 3, dtype=np.float32).reshape(-1, 3)
    mesh_io.write_attribute(mesh, "tetrig_offset", "FLOAT_VECTOR", offset)
    expected = rest_positions(obj) + offset  # float32 sums, as Set Position adds them

    tear_display.write(obj, None, None)
    assert tear_display.TORN_ATTRIBUTE not in mesh.attributes
    assert tear_display.TEAR_OFFSET_ATTRIBUTE not in mesh.attributes
    positions, corners, index, _, edge_count = _evaluated(bpy, obj)
    assert np.array_equal(positions, expected)
    assert np.array_equal(corners, _loops(mesh, "vertex_index")) and edge_count == edges
    assert np.array_equal(index, np.arange(n))

    tear_display.write(obj, np.zeros(edges, dtype=bool), np.zeros((len(mesh.loops), 3), dtype=np.float32))
    positions, corners, _, _, edge_count = _evaluated(bpy, obj)
    assert np.array_equal(positions, expected)
    assert np.array_equal(corners, _loops(mesh, "vertex_index")) and edge_count == edges


def test_write_refuses_arrays_of_another_mesh(bpy, torn_sheet):
    from tetrig.runtime.surface import tear_display

    obj, _, state = torn_sheet
    corners = np.zeros((len(obj.data.loops), 3), dtype=np.float32)
    with pytest.raises(ValueError, match="edges"):
        tear_display.write(obj, state.torn[:-1], corners)
    with pytest.raises(ValueError, match="corners"):
        tear_display.write(obj, state.torn, corners[:-1])
    with pytest.raises(ValueError, match="together"):
        tear_display.write(obj, state.torn, None)
    assert tear_display.TORN_ATTRIBUTE not in obj.data.attributes


def test_alembic_export_carries_the_split_mesh_and_its_gap(bpy, torn_sheet, tmp_path):
    """Blender's Alembic exporter writes the evaluated mesh: read back, it has the engine's
    particle count, every vertex where the evaluated mesh has it, and the crack open: the split
    copies stand apart from the vertex they copy as in the evaluated mesh, by more than a cell (the
    engine's widest gap is more than a cell too)."""
    obj, body, state = torn_sheet
    _show(obj, body, state)
    positions, _, index, _, _ = _evaluated(bpy, obj)
    n = len(obj.data.vertices)
    matrix = np.array(obj.matrix_world)
    world = positions @ matrix[:3, :3].T + matrix[:3, 3]
    # the engine's widest gap between a split copy and its vertex's own particle
    shown = body.split_mesh(state)
    gap = np.linalg.norm(shown.positions[n:] - shown.positions[shown.source_vertices[n:]], axis=1).max()
    assert gap > SPACING

    bpy.ops.object.select_all(action="DESELECT")
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    abc = tmp_path / "sheet.abc"
    frame = bpy.context.scene.frame_current
    assert bpy.ops.wm.alembic_export(filepath=str(abc), start=frame, end=frame, selected=True,
                                     normals=False, as_background_job=False) == {"FINISHED"}
    bpy.ops.wm.read_factory_settings(use_empty=True)
    assert bpy.ops.wm.alembic_import(filepath=str(abc), as_background_job=False) == {"FINISHED"}
    imported = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(imported) == 1
    back = evaluated_positions(imported[0])
    m = np.array(imported[0].matrix_world)
    back_world = back @ m[:3, :3].T + m[:3, 3]
    assert back.shape[0] == shown.positions.shape[0]
    assert np.abs(back_world - world).max() <= TOL
    # which of a split vertex's corner fans keeps the vertex and which get the copies is Blender's
    # choice (Split Edges), not always the engine's: the corners sit where the engine shows them
    # (test_a_torn_sheet_evaluates_split_where_the_engine_shows_it), and the file keeps every
    # copy's distance to the vertex it copies, the crack open by more than a cell
    copies = np.linalg.norm(back_world[n:] - back_world[index[n:]], axis=1)
    before = np.linalg.norm(world[n:] - world[index[n:]], axis=1)
    assert np.abs(copies - before).max() <= 2 * TOL
    assert copies.max() > SPACING
