"""The triangle–triangle intersection test the self-contact tests rely on (``intersections``):
crossings, touchings and neighbours on hand-made cases, and the same pairs as a brute-force loop
over every two triangles on crumpled sheets."""

import itertools

import numpy as np
import pytest
from engine_scenes import fan_triangles, quad_grid
from intersections import _meet, count_intersections, intersecting_pairs

TWO = np.array([[0, 1, 2], [3, 4, 5]])


def two_triangles(second):
    """A triangle in the plane z = 0 and ``second`` (float [3, 3])."""
    return np.vstack([[[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], second])


def test_a_triangle_through_another_meets_it():
    crossing = two_triangles([[0.2, 0.2, -0.5], [0.3, 0.2, 0.5], [0.2, 0.4, 0.5]])
    assert intersecting_pairs(crossing, TWO).tolist() == [[0, 1]]
    lifted = crossing + [0.0, 0.0, 0.5 + 1e-6] * np.array([[0], [0], [0], [1], [1], [1]])
    assert count_intersections(lifted, TWO) == 0


def test_touching_counts_and_a_nanometre_off_does_not():
    on = two_triangles([[0.2, 0.2, 0.0], [0.3, 0.2, 0.5], [0.2, 0.4, 0.5]])  # a corner in the other's face
    assert count_intersections(on, TWO) == 1
    assert count_intersections(on + np.where(np.arange(6)[:, None] >= 3, [0.0, 0.0, 2e-9], 0.0), TWO) == 0


def test_coplanar_triangles_meet_only_where_they_overlap():
    overlapping = two_triangles([[0.2, 0.2, 0.0], [1.2, 0.2, 0.0], [0.2, 1.2, 0.0]])
    assert count_intersections(overlapping, TWO) == 1
    apart = two_triangles([[0.6, 0.6, 0.0], [1.6, 0.6, 0.0], [0.6, 1.6, 0.0]])
    assert count_intersections(apart, TWO) == 0


def test_neighbours_are_left_out():
    """Two triangles sharing a vertex that pass through each other, and two sharing copies of one
    vertex (``sources``), are neighbours: not counted."""
    positions = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, 0.3, -0.5], [0.3, 0.3, 0.5]])
    sharing = np.array([[0, 1, 2], [0, 3, 4]])
    assert count_intersections(positions, sharing) == 0
    copies = np.vstack([positions, positions[:1]])
    split = np.array([[0, 1, 2], [5, 3, 4]])
    assert count_intersections(copies, split) == 1
    assert count_intersections(copies, split, sources=np.array([0, 1, 2, 3, 4, 0])) == 0


def grid(cells=40):
    v, c, s = quad_grid(cells, cells, 1.0 / cells)
    return v, np.asarray(fan_triangles(c, s))


def test_a_flat_sheet_and_a_clean_fold_have_none_and_a_fold_through_has_some():
    v, triangles = grid()
    assert count_intersections(v, triangles) == 0
    folded = v.copy()
    right = v[:, 0] > 0.5
    folded[right, 0] = 1.0 - v[right, 0]  # folded back over the left half, 5 mm above it
    folded[right, 2] = 0.005
    assert count_intersections(folded, triangles) == 0
    through = folded.copy()
    through[right, 2] = 0.02 * (v[right, 1] - 0.5)  # tilted across the left half
    assert count_intersections(through, triangles) > 0


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_same_pairs_as_every_two_triangles(seed):
    """A 1 m sheet of 6 × 6 quads with 15 cm of noise (it crosses itself): the pairs of a loop over every two
    triangles with the same test."""
    v, triangles = grid(6)
    v = v + np.random.default_rng(seed).normal(0.0, 0.15, v.shape)
    expected = []
    for i, j in itertools.combinations(range(len(triangles)), 2):
        if set(triangles[i]) & set(triangles[j]):
            continue
        if _meet(v, triangles[[i]], triangles[[j]])[0]:
            expected.append([i, j])
    assert len(expected) > 0
    assert intersecting_pairs(v, triangles).tolist() == expected
