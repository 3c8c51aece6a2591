"""Tearing (no Blender): a sheet pulled apart by two animated pins tears, the broken springs stay
broken, the vertices along the tear split, and the result is the same played or jumped to."""

import numpy as np
import pytest
from engine_scenes import quad_grid
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from tetrig_addon import solver, timeline
from tetrig_addon.errors import TetRigInputError
from tetrig_addon.surface import SurfaceBody, TearSettings, surface_mesh
from tetrig_addon.surface.tearing import corner_particles

FPS = 24
CELLS, SPACING = 10, 0.05  # a 0.5 m square sheet of 10 × 10 quads
GRIP = 0.1  # each pin holds the corner's vertices within 10 cm in x and y (3 × 3 vertices)
PULL_SPEED = 0.5  # [m/s], each pinned corner
FRAMES = 24
# The tear stays near the line between the pins (the sheet's bottom side, y = 0): within this [m].
TEAR_BAND = 0.2


def pulled_sheet():
    """(body, a vertex of each pin int [2], the goals of frame f) of a sheet in the xy plane
    pinned (goal weight 1) at its corners (0, 0) and (0.5, 0), pulled apart along x (no
    gravity)."""
    verts, corners, sizes = quad_grid(CELLS, CELLS, SPACING)
    size = CELLS * SPACING
    left = (verts[:, 0] <= GRIP + 1e-9) & (verts[:, 1] <= GRIP + 1e-9)
    right = (verts[:, 0] >= size - GRIP - 1e-9) & (verts[:, 1] <= GRIP + 1e-9)
    sheet = SurfaceBody(surface_mesh(verts, corners, sizes), verts, 1.0, goal_weights=(left | right) * 1.0)
    direction = np.zeros_like(verts)
    direction[left, 0], direction[right, 0] = -1.0, 1.0
    ends = np.array([np.flatnonzero(left)[0], np.flatnonzero(right)[0]])

    def goals(frame):
        return (verts + direction * PULL_SPEED * frame / FPS, verts + direction * PULL_SPEED * (frame + 1) / FPS)

    return sheet, ends, goals


SETTINGS = solver.SimSettings(gravity=(0.0, 0.0, 0.0), damping=2.0).validated()
MATERIAL = solver.SurfaceMaterial(stretch=1e3, shear=100.0, bending=1e-3)
TEAR = TearSettings(threshold=0.3)


def frame_cache(sheet, goals):
    return timeline.FrameCache(0, sheet.rest_state(), key="sheet"), (
        lambda state, f: sheet.advance(state, SETTINGS, MATERIAL, 1 / FPS, goals=goals(f), tear=TEAR))


def test_pulled_sheet_tears_between_its_pins_and_grows_vertices():
    """Acceptance: pulled apart at 1 m/s, the sheet tears along the line between its pins (every
    torn edge within ``TEAR_BAND`` of the bottom side; measured: 29 edges, all below 0.18 m), the
    pins end on different pieces, torn edges never heal, and the shown mesh has more vertices than
    the sheet (measured 153 for 121: those along the tear split)."""
    sheet, ends, goals = pulled_sheet()
    cache, advance = frame_cache(sheet, goals)
    torn_before = np.zeros(sheet.mesh.edge_count, dtype=bool)
    for frame in range(1, FRAMES + 1):
        state = cache.state_at(frame, advance)
        assert np.all(state.torn >= torn_before)  # a torn edge never heals
        torn_before = state.torn
    assert state.torn.sum() >= CELLS
    middles = sheet.mesh.vertices[sheet.mesh.edges[state.torn]].mean(1)
    assert middles[:, 1].max() < TEAR_BAND
    shown = sheet.split_mesh(state)
    assert shown.positions.shape[0] > sheet.mesh.vertex_count
    assert shown.corner_vertices.shape == sheet.mesh.corner_vertices.shape
    assert np.array_equal(shown.source_vertices[shown.corner_vertices], sheet.mesh.corner_vertices)
    model = sheet.model_for(state.torn, state.broken).model
    graph = coo_matrix((np.ones(model.edge_count), tuple(model.edges.T)), shape=(model.particle_count,) * 2)
    _, piece = connected_components(graph, directed=False)
    assert piece[ends[0]] != piece[ends[1]]
    # the pins moved apart as animated
    gap = shown.positions[ends[1], 0] - shown.positions[ends[0], 0]
    assert gap == pytest.approx(CELLS * SPACING - GRIP + 2 * PULL_SPEED * FRAMES / FPS)


def test_playing_and_jumping_tear_the_same():
    """Acceptance: frame by frame from the start, or straight to the last frame, or to the middle
    first: the same torn edges and the same positions (the torn set is frame state)."""
    sheet, _, goals = pulled_sheet()
    played, advance = frame_cache(sheet, goals)
    for frame in range(1, FRAMES + 1):
        play = played.state_at(frame, advance)
    jumped, advance = frame_cache(SurfaceBody(sheet.mesh, sheet.rest_positions, 1.0,
                                              goal_weights=sheet.goal_weights), goals)
    jump = jumped.state_at(FRAMES, advance)
    middle, advance = frame_cache(sheet, goals)
    middle.state_at(FRAMES // 2, advance)
    split = middle.state_at(FRAMES, advance)
    assert play.torn.any()
    for other in (jump, split):
        assert np.array_equal(play.torn, other.torn) and np.array_equal(play.broken, other.broken)
        assert np.array_equal(play.positions, other.positions)


def test_corners_split_into_one_particle_per_fan():
    """A 2 × 2 grid torn along the middle row's two edges: the middle vertex and the left and right
    border vertices of the cut split (3 new particles), the rest keep their own."""
    verts, corners, sizes = quad_grid(2, 2, 1.0)
    mesh = surface_mesh(verts, corners, sizes)
    middle_row = np.flatnonzero(np.all(verts[mesh.edges][:, :, 1] == 1.0, axis=1))
    torn = np.zeros(mesh.edge_count, dtype=bool)
    torn[middle_row] = True
    particles, vertices = corner_particles(mesh, torn)
    assert vertices.shape[0] == verts.shape[0] + 3
    assert np.array_equal(vertices[particles], mesh.corner_vertices)
    assert sorted(vertices[verts.shape[0]:].tolist()) == [3, 4, 5]


def test_bad_tear_settings_are_refused():
    with pytest.raises(TetRigInputError, match="tear"):
        TearSettings(threshold=0.0).validated()


def test_plastic_rest_data_follow_the_tear():
    """With plasticity too, the crept rest lengths and angles are carried onto each new split:
    one per spring and hinge of the torn model, every frame."""
    sheet, _, goals = pulled_sheet()
    plastic = solver.PlasticSettings(yield_strain=0.05, rate=10.0, max_strain=0.5)
    state = sheet.rest_state()
    for frame in range(FRAMES):
        state = sheet.advance(state, SETTINGS, MATERIAL, 1 / FPS, goals=goals(frame), plastic=plastic, tear=TEAR)
        model = sheet.model_for(state.torn, state.broken).model
        assert state.rest_lengths.shape == (model.edge_count,)
        assert state.rest_angles.shape == (model.hinges.shape[0],)
        assert np.all(np.isfinite(state.positions))
    assert state.torn.any()
    assert np.abs(state.rest_lengths - model.rest_lengths).max() > 0.01  # they crept
