"""Fit cages: tets inside the mesh and a thin margin, so parts and limbs get their own tets
(no Blender)."""

import numpy as np
import pytest
from conftest import obj_triangles, obj_vertices
from engine_scenes import box_collider

from tetrig_addon import solver
from tetrig_addon.cage import METHOD_FIT, METHOD_HULL, bind, blend, build_cage, voxelize


def box_surface(low, high, per_edge: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """A closed box surface, ``per_edge`` vertices along each edge: (vertices, outward triangles)."""
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    d = high - low
    x, y, z = np.array([d[0], 0, 0]), np.array([0, d[1], 0]), np.array([0, 0, d[2]])
    verts, tris = [], []
    for origin, u, v in ((low, y, x), (low + z, x, y), (low, x, z), (low + y, z, x), (low, z, y), (low + x, y, z)):
        base = len(verts)
        g = np.linspace(0, 1, per_edge)
        verts += [origin + a * u + b * v for a in g for b in g]
        for i in range(per_edge - 1):
            for j in range(per_edge - 1):
                c = base + i * per_edge + j
                tris += [(c, c + per_edge, c + per_edge + 1), (c, c + per_edge + 1, c + 1)]
    return np.array(verts), np.array(tris)


def arch() -> tuple[np.ndarray, np.ndarray]:
    """Two 0.2 × 0.2 × 0.6 m legs 10 cm apart under a 0.5 m bar (three closed boxes)."""
    parts = [box_surface([-0.25, -0.1, 0.0], [-0.05, 0.1, 0.6]), box_surface([0.05, -0.1, 0.0], [0.25, 0.1, 0.6]),
             box_surface([-0.25, -0.1, 0.6], [0.25, 0.1, 0.75])]
    offsets = np.cumsum([0] + [len(p[0]) for p in parts])
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] + o for p, o in zip(parts, offsets)])


def push_one_foot(points, triangles, method, resolution, pin_above, paddle_box, feet):
    """Pin the control points above ``pin_above`` [m], push with a paddle (a box collider moving
    ``paddle_box``'s low x by up to 6 cm over a second): the mean displacement [m] of each group
    of vertices in ``feet``."""
    cage = build_cage(points, resolution=resolution, triangles=triangles, method=method)
    b = bind(points, cage.control_points, cage.tets)
    model = solver.build_model(cage.control_points, cage.tets, contacts=(b.control_point_indices, b.weights),
                               pinned=cage.control_points[:, 2] > pin_above)
    settings = solver.SimSettings(gravity=(0, 0, 0), damping=3.0).validated()
    state = solver.rest_state(model)
    low, high = (np.asarray(c, dtype=np.float64) for c in paddle_box)
    for frame in range(48):
        push = np.array([min(frame / 24, 1.0) * 0.06, 0.0, 0.0])
        paddle = box_collider(low + push, high + push, thickness_outer=0.0, static_friction=0.0,
                              kinetic_friction=0.0)
        state = solver.step(model, state, settings, 1 / 24, colliders=[paddle])
    moved = blend(state.positions, b.control_point_indices, b.weights) - points
    return [float(np.linalg.norm(moved[f].mean(0))) for f in feet]


@pytest.mark.parametrize("resolution", [10, 20])
def test_arch_legs_have_their_own_tets(resolution):
    """Pushing one leg of an arch (top pinned) drags the other less than 15 % as far with a fit
    cage; the hull cage welds them (over 80 %)."""
    points, triangles = arch()
    feet = [(points[:, 0] < -0.05) & (points[:, 2] < 0.1), (points[:, 0] > 0.05) & (points[:, 2] < 0.1)]
    paddle = ([-0.5, -0.3, -0.05], [-0.25, 0.3, 0.15])
    pushed, other = push_one_foot(points, triangles, METHOD_FIT, resolution, 0.5, paddle, feet)
    hull_pushed, hull_other = push_one_foot(points, triangles, METHOD_HULL, resolution, 0.5, paddle, feet)
    print(f"\narch, resolution {resolution}: the other leg moves {other / pushed:.1%} as far (Fit), "
          f"{hull_other / hull_pushed:.1%} (Hull); pushed {pushed * 100:.1f} / {hull_pushed * 100:.1f} cm")
    assert pushed > 0.04 and other < 0.15 * pushed
    assert hull_other > 0.8 * hull_pushed


def test_spot_front_and_hind_legs_have_their_own_tets():
    """The spot cow, body pinned above a third of its height: pushing a front foot drags the hind
    foot on its side less than 15 % as far (the hull cage fills the space between them)."""
    points = obj_vertices("spot")[:, [0, 2, 1]] * [1, -1, 1]  # Y-up → Z-up
    points -= [0.0, 0.0, points[:, 2].min()]
    height = np.ptp(points[:, 2])
    low = points[:, 2] < 0.05 * height
    front, left = points[:, 1] < np.median(points[low, 1]), points[:, 0] < np.median(points[low, 0])
    feet = [low & front & left, low & ~front & left]
    start = points[feet[0], 0].min()
    paddle = ([start - 0.3, points[feet[0], 1].min() - 0.02, -0.05],
              [start, points[feet[0], 1].max() + 0.02, 0.08])
    pushed, hind = push_one_foot(points, obj_triangles("spot"), METHOD_FIT, 10, 0.3 * height, paddle, feet)
    hull_pushed, hull_hind = push_one_foot(points, obj_triangles("spot"), METHOD_HULL, 10, 0.3 * height, paddle, feet)
    print(f"\nspot: the hind foot moves {hind / pushed:.1%} as far as the pushed front foot (Fit), "
          f"{hull_hind / hull_pushed:.1%} (Hull)")
    assert pushed > 0.02 and hind < 0.15 * pushed
    assert hull_hind > 0.15 * hull_pushed


@pytest.mark.parametrize("name", ["stanford-bunny", "spot", "cow", "teapot", "suzanne"])
def test_fit_cage_binds_every_vertex_exactly(name):
    """Every vertex is bound (all but 5 in 1000 inside a tet, the rest to their nearest tet)
    and rebuilt from its control points to
    1e-5 of the diagonal; the fit cage has fewer tets outside the mesh than the hull (the tets'
    centres inside the mesh's voxels)."""
    points, triangles = obj_vertices(name), obj_triangles(name)
    diag = np.linalg.norm(np.ptp(points, axis=0))
    fit = build_cage(points, triangles=triangles, method=METHOD_FIT)
    assert fit.method == METHOD_FIT and fit.note == ""
    b = bind(points, fit.control_points, fit.tets)
    assert np.abs(blend(fit.control_points, b.control_point_indices, b.weights) - points).max() < 1e-5 * diag
    assert b.outside_count < 0.005 * len(points)
    hull = build_cage(points, triangles=triangles, method=METHOD_HULL)
    solid = voxelize(points, triangles, np.ptp(points, axis=0).max() / 30)
    inside_share = [solid.contains(c.control_points[c.tets].mean(1), grow=1).mean() for c in (fit, hull)]
    assert inside_share[0] > inside_share[1]


def test_a_flat_or_open_mesh_falls_back_to_the_hull_and_says_why():
    points, triangles = obj_vertices("woody"), obj_triangles("woody")
    cage = build_cage(points, triangles=triangles, method=METHOD_FIT)
    assert cage.method == METHOD_HULL and "no closed inside" in cage.note
    plane = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0.0]])
    cage = build_cage(plane, triangles=np.array([[0, 1, 2], [0, 2, 3]]), method=METHOD_FIT)
    assert cage.method == METHOD_HULL and cage.note
    b = bind(plane, cage.control_points, cage.tets)
    assert np.abs(blend(cage.control_points, b.control_point_indices, b.weights) - plane).max() < 1e-9


def test_the_inside_test_fills_a_scan_with_a_hole_in_its_base():
    """The bunny's base is open (a scan): the flood fill alone would leak; the six-side test keeps
    its inside inside, and the space between an arch's legs outside."""
    points, triangles = obj_vertices("stanford-bunny"), obj_triangles("stanford-bunny")
    solid = voxelize(points, triangles, np.ptp(points, axis=0).max() / 60)
    assert solid.contains(points.mean(0, keepdims=True))[0] and solid.solid_share > 0.5
    a_points, a_triangles = arch()
    solid = voxelize(a_points, a_triangles, 0.02)
    assert not solid.contains(np.array([[0.0, 0.0, 0.3]]))[0]
    assert solid.contains(np.array([[-0.15, 0.0, 0.3], [0.0, 0.0, 0.7]])).all()
