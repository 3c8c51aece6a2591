"""Self-contact of Surface bodies (issue 21, no Blender): a cloth that folds onto itself on a cage
ball, and a torn sheet whose pieces crumple, never pass through themselves (an exact test of every
two triangles that are not neighbours, ``intersections``); the compiled search finds the NumPy
reference's pairs, and the NumPy reference steps as the kernel."""

import numpy as np
import pytest
from engine_scenes import fan_triangles, quad_grid, touching_body, uv_sphere_polygons
from intersections import count_intersections

from tetrig_addon import solver
from tetrig_addon.body import Control
from tetrig_addon.errors import TetRigInputError
from tetrig_addon.solver import self_contact, self_rows
from tetrig_addon.solver.self_contact import SelfCollision
from tetrig_addon.surface import SurfaceBody, SurfaceSim, TearSettings, surface_mesh
from tetrig_addon.touching import TouchingBodies
from tetrig_addon.touching_members import frame_member

FPS = 24
FALL = Control(1.0 / FPS, (0.0, 0.0, -9.81))
GROUND = solver.SimSettings(ground_height=0.0).validated()
# A limp cloth (bending 1e-4 N·m), so it folds in creases.
LIMP = solver.SurfaceMaterial(bending=1e-4)


def hanging_cloth(self_collision, cells=40, size=1.0, height=0.95):
    """A ``cells`` × ``cells`` quad cloth ``size`` [m] wide held upright (the xz plane), its lower
    side ``height`` − size/2 above the ground, over a cage ball (r = 0.2 m) resting on the ground:
    dropped, it lands on the ball edge-on and crumples onto itself. (scene, cloth triangles)."""
    vertices, corners, sizes = uv_sphere_polygons(0.2, 24, 12)
    ball, _ = touching_body(vertices + [0.0, 0.0, 0.2], fan_triangles(corners, sizes), GROUND)
    v, c, s = quad_grid(cells, cells, size / cells)
    v = v - [size / 2, size / 2, 0.0]
    v = np.stack([v[:, 0], np.zeros(len(v)), v[:, 1] + height], axis=1)
    cloth = SurfaceSim(SurfaceBody(surface_mesh(v, c, s), v, 0.2), GROUND, LIMP, self_collision=self_collision)
    return TouchingBodies((ball, cloth)), fan_triangles(c, s)


def intersections_per_frame(scene, triangles, frames):
    """The cloth's count of triangle–triangle intersections at each frame."""
    state = scene.rest_state([FALL, FALL])
    counts = []
    for _ in range(frames):
        state = scene.step(state, [FALL, FALL])
        assert state.finite()
        counts.append(count_intersections(state.states[1].shown(), triangles))
    return counts


def test_a_cloth_crumpling_on_a_ball_never_passes_through_itself():
    """Acceptance: a 1 m cloth of 40 × 40 quads dropped edge-on onto a cage ball folds onto itself:
    without self-collision its folds pass through each other (measured: 153 pairs of triangles
    intersecting at frame 30), with it no two triangles that are not neighbours ever meet."""
    scene, triangles = hanging_cloth(None)
    assert max(intersections_per_frame(scene, triangles, 30)) > 5
    scene, triangles = hanging_cloth(SelfCollision())
    assert intersections_per_frame(scene, triangles, 30) == [0] * 30


def crumpled_sheet(seed):
    """Positions (float64 [V, 3] [m]), rest positions and triangles of a 12 × 12 sheet (5 cm quads)
    folded over itself 8 mm apart with 3 mm of noise, so that features of its two layers are within
    the contact distance of each other."""
    v, c, s = quad_grid(12, 12, 0.05)
    rest = v.copy()
    x = v[:, 0]
    fold = 0.3
    folded = np.where(x[:, None] > fold, np.stack([2 * fold - x, v[:, 1], np.full(len(x), 0.008)], 1), v)
    noise = np.random.default_rng(seed).normal(0.0, 0.003, v.shape)
    return folded + noise, rest, np.asarray(fan_triangles(c, s), dtype=np.int64)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_compiled_search_finds_the_references_pairs(seed):
    """On a sheet folded over itself with noise: the same nearest triangle of every particle and
    the same nearest edge of every edge, the same bounds to 1e-15 m (measured: 9e-19, the compiled
    arithmetic's rounding) and closest points to 1e-12."""
    from tetrig_addon.solver import self_contact_kernel

    positions, rest, triangles = crumpled_sheet(seed)
    edges = self_contact.edges_of(triangles)
    reference = self_contact.search(positions, rest, triangles, edges, 0.015, 0.01)
    compiled = self_contact.search(positions, rest, triangles, edges, 0.015, 0.01, self_contact_kernel)
    assert (reference.triangles >= 0).sum() > 50 and (reference.partners >= 0).sum() > 50
    assert np.array_equal(reference.triangles, compiled.triangles)
    assert np.array_equal(reference.partners, compiled.partners)
    assert np.abs(reference.bound - compiled.bound).max() < 1e-15
    assert np.abs(reference.barycentric - compiled.barycentric).max() < 1e-12
    assert np.abs(reference.parameters - compiled.parameters).max() < 1e-12
    assert reference.bound.min() < 0.01  # the layers are within the contact distance somewhere


def test_the_numpy_reference_steps_a_folding_cloth_as_the_kernel():
    """A 16 × 16 cloth dropped edge-on onto the ball, 8 frames, the last 5 in contact with itself:
    the same positions to 1e-9 m."""
    scene, _ = hanging_cloth(SelfCollision(), cells=16, size=0.6, height=0.72)
    kernel = reference = scene.rest_state([FALL, FALL])
    for _ in range(8):
        kernel = scene.step(kernel, [FALL, FALL], use_kernel=True)
        reference = scene.step(reference, [FALL, FALL], use_kernel=False)
        for k, r in zip(kernel.states, reference.states):
            assert np.abs(k.positions - r.positions).max() < 1e-9
    member = frame_member(scene.members[1], kernel.states[1], FALL)
    rows, _ = self_rows.substep(member.model, member.state, member.triangles, member.frame_dt, 1, SelfCollision())
    assert rows is not None and rows.contacts.shape[0] > 50  # folding onto itself (measured: 122 rows)


def test_bad_self_collision_settings_are_refused():
    with pytest.raises(TetRigInputError):
        SelfCollision(distance=0.0)
    with pytest.raises(TetRigInputError):
        SelfCollision(static_friction=0.1, kinetic_friction=0.2)


def torn_sheet(self_collision):
    """A 0.5 m sheet of 10 × 10 quads held upright at its two upper corners (3 × 3 vertices each,
    goal weight 1), one of them pulled sideways at 1 m/s for half a second, tearing beyond 30 %
    stretch: the pieces hang and crumple under gravity. (sim, triangles, the goals of frame f)."""
    cells, spacing, grip = 10, 0.05, 0.1
    v, c, s = quad_grid(cells, cells, spacing)
    v = np.stack([v[:, 0], np.zeros(len(v)), v[:, 1] + 0.6], axis=1)  # upright
    held = (v[:, 0] <= grip + 1e-9) & (v[:, 2] >= 1.1 - grip - 1e-9)
    pulled = (v[:, 0] >= 0.5 - grip - 1e-9) & (v[:, 2] >= 1.1 - grip - 1e-9)
    body = SurfaceBody(surface_mesh(v, c, s), v, 0.5, goal_weights=(held | pulled) * 1.0)
    sim = SurfaceSim(body, solver.SimSettings(ground_height=0.0).validated(),
                     solver.SurfaceMaterial(stretch=1e3, shear=100.0, bending=1e-4),
                     tear=TearSettings(threshold=0.3), self_collision=self_collision)
    move = np.zeros_like(v)
    move[pulled] = [1.0, 0.0, 0.0]

    def goals(frame):  # pulled for half a second, then held
        return v + move * min(frame, 12) / FPS, v + move * min(frame + 1, 12) / FPS

    return sim, fan_triangles(c, s), goals


def test_a_torn_sheet_never_passes_through_itself():
    """Acceptance: a sheet held at its two upper corners, torn by pulling one sideways: without
    self-collision its pieces crumple through each other, with it no two of its triangles meet at
    any frame but neighbours (triangles with a vertex of the mesh in common: across a tear they
    are two copies of it; measured: 33 edges torn)."""
    counts = {}
    for self_collision in (None, SelfCollision()):
        sim, triangles, goals = torn_sheet(self_collision)
        state = sim.rest_state(FALL)
        counts[self_collision] = []
        for frame in range(36):
            state = sim.step(state, Control(1.0 / FPS, (0.0, 0.0, -9.81), goals=goals(frame)))
            assert state.finite()
            shown = sim.shown(state)
            counts[self_collision].append(count_intersections(shown.positions, _shown_triangles(sim, shown),
                                                              shown.source_vertices))
        assert state.torn.sum() > 10
    assert max(counts[None]) > 10  # measured: 84 at frame 11
    assert counts[SelfCollision()] == [0] * 36


def _shown_triangles(sim, shown):
    """The fan triangles of the shown (split) mesh, as indices into its positions."""
    return shown.corner_vertices[sim.body.mesh.triangles]
