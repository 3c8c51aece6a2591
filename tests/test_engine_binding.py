"""Binding: barycentric reconstruction on real meshes (no Blender)."""

import numpy as np
import pytest
from conftest import diagonal, obj_vertices

from tetrig_addon.cage import bind, blend, blend_matrix, build_cage, pinned_control_points


@pytest.mark.parametrize("name", ["stanford-bunny", "spot", "cow", "teapot", "woody"])
def test_every_vertex_bound_and_reconstructed(name):
    pts = obj_vertices(name)
    cage = build_cage(pts)
    b = bind(pts, cage.control_points, cage.tets)
    assert b.vertex_count == pts.shape[0]
    assert np.array_equal(b.control_point_indices, cage.tets[b.tet_index])
    np.testing.assert_allclose(b.weights.sum(1), 1.0, atol=1e-12)
    err = np.abs(blend(cage.control_points, b.control_point_indices, b.weights) - pts).max()
    assert err <= 1e-5 * diagonal(pts)
    # in float32, as stored in Blender attributes, it still reconstructs within the tolerance
    err32 = np.abs(blend(cage.control_points.astype(np.float32), b.control_point_indices,
                         b.weights.astype(np.float32)) - pts).max()
    assert err32 <= 1e-5 * diagonal(pts)
    # only a few vertices (in gaps left by dropped slivers) need the nearest tet
    assert b.outside_count <= 0.02 * pts.shape[0]


def test_inside_weights_are_convex():
    tet_pts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    b = bind(np.array([[0.1, 0.2, 0.3]]), tet_pts, np.array([[0, 1, 2, 3]]))
    np.testing.assert_allclose(b.weights, [[0.4, 0.1, 0.2, 0.3]], atol=1e-15)
    assert b.outside_count == 0


def test_point_outside_is_bound_to_nearest_tet_and_counted():
    tet_pts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    p = np.array([[1.0, 1.0, 1.0]])
    b = bind(p, tet_pts, np.array([[0, 1, 2, 3]]))
    assert b.outside_count == 1
    np.testing.assert_allclose(blend(tet_pts, b.control_point_indices, b.weights), p, atol=1e-14)


def test_pinned_vertices_pin_all_their_control_points():
    idx = np.array([[0, 1, 2, 3], [0, 1, 2, 4], [5, 1, 2, 3]])
    w = np.array([[1.0, 0, 0, 0], [0.5, 0.5, 0, 0], [0.25, 0.25, 0.25, 0.25]])
    pinned = pinned_control_points(idx, w, np.array([True, True, False]), 6)
    assert pinned.tolist() == [True, True, False, False, False, False]


def test_blend_matrix_equals_blend():
    pts = obj_vertices("spot")
    cage = build_cage(pts)
    b = bind(pts, cage.control_points, cage.tets)
    m = blend_matrix(b.control_point_indices, b.weights, cage.control_point_count)
    q = np.random.default_rng(0).normal(size=cage.control_points.shape)
    np.testing.assert_allclose(m @ q, blend(q, b.control_point_indices, b.weights), atol=1e-12)
    assert not np.any(m @ np.zeros_like(q))  # zero displacement → exact zeros


def test_the_compiled_point_location_finds_the_numpy_rounds_tets(monkeypatch):
    """binding.TetSearch runs the kernel's locate_points when the compiled solver is loaded (as in
    these tests), else its NumPy rounds: the bunny's vertices, and points around it, get the same
    tets, weights and scores from both, also when the search is limited to some of the tets."""
    import tetrig_addon.cage.locate as binding_module
    from conftest import obj_triangles
    from tetrig_addon.cage import METHOD_FIT

    points = obj_vertices("stanford-bunny")
    cage = build_cage(points, triangles=obj_triangles("stanford-bunny"), method=METHOD_FIT)
    rng = np.random.default_rng(3)
    queries = np.concatenate([points, points[:5000] + rng.normal(scale=0.01, size=(5000, 3))])
    search = binding_module.TetSearch(cage.control_points, cage.tets)
    among = rng.random(cage.tet_count) < 0.5
    assert binding_module._compiled_kernel() is not None
    compiled = search.locate(queries)
    compiled_among = search.locate(queries, among)
    monkeypatch.setattr(binding_module, "_compiled_kernel", lambda: None)
    for c, r in ((compiled, search.locate(queries)), (compiled_among, search.locate(queries, among))):
        np.testing.assert_array_equal(c[0], r[0])
        np.testing.assert_allclose(c[1], r[1], rtol=0, atol=1e-12)
        np.testing.assert_allclose(c[2], r[2], rtol=0, atol=1e-12)
    assert among[compiled_among[0][compiled_among[2] > -np.inf]].all()  # only the marked tets
    # a search among some tets finds what a search over those tets alone finds
    alone = binding_module.containing_tets(queries, cage.control_points, cage.tets[among])
    np.testing.assert_array_equal(np.where(alone >= 0, np.flatnonzero(among)[alone], -1),
                                  search.containing(queries, among))
    assert 0 < (alone < 0).sum() < len(queries)
    assert (compiled[2] < 0).sum() > 100  # some queries lie outside every tet: the fallback too
