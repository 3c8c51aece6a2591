"""The surface-quality pass (seed 003): the seed's four tests, a real impact, and the kernel
against the NumPy reference (no Blender)."""

from dataclasses import dataclass

import numpy as np
import pytest
from conftest import obj_triangles, obj_vertices

from tetrig_addon import quality, solver
from tetrig_addon.quality import backend as quality_backend
from tetrig_addon.cage import bind, blend_matrix, build_cage
from tetrig_addon.errors import TetRigInputError
from tetrig_addon.quality.metrics import edge_length_ratios, flipped_triangles, sliver_triangles

SEED = quality.QualitySettings()  # the seed's numbers: 1.35, 0.70, 4 sweeps, 0.45, 2 iterations
# A clamped edge lands on its limit up to rounding (quality.LIMIT_TOLERANCE).
ON_LIMIT = 1e-9


def grid(cells: int, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """A flat square grid in the xy plane, centred at 0: (vertices [(cells+1)², 3], triangles)."""
    g = np.arange(cells + 1) * spacing - cells * spacing / 2
    x, y = np.meshgrid(g, g, indexing="ij")
    pts = np.stack([x.ravel(), y.ravel(), np.zeros(x.size)], axis=1)
    idx = np.arange(x.size).reshape(cells + 1, cells + 1)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return pts, np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])


def plan_of(pts: np.ndarray, tris: np.ndarray, fixed=None) -> tuple[quality.QualityPlan, np.ndarray]:
    corners, sizes = tris.ravel(), np.full(len(tris), 3)
    edges = quality.unique_edges(corners, sizes)
    return quality.build_plan(pts, edges, quality.boundary_vertices(len(pts), corners, sizes), fixed), edges


def amplitude(d: np.ndarray) -> float:
    return float(np.linalg.norm(d, axis=1).mean())


@pytest.mark.parametrize("use_kernel", [False, True])
def test_seed_1_an_edge_at_200_percent_is_clamped_to_135_percent_in_fewer_than_5_sweeps(use_kernel):
    pts, tris = grid(20, 0.01)
    plan, edges = plan_of(pts, tris)
    a, b = 10 * 21 + 10, 11 * 21 + 10  # an interior edge along x, 1 cm
    stretched = pts.copy()
    stretched[a] -= [0.005, 0.0, 0.0]
    stretched[b] += [0.005, 0.0, 0.0]
    edge = np.flatnonzero((edges == sorted((a, b))).all(1))
    assert edge_length_ratios(pts, stretched, edges)[edge] == pytest.approx(2.0)
    x, sweeps, left = quality.constrain_edge_lengths(plan, stretched, SEED)
    assert sweeps < 5 and left == 0  # a sweep found every edge within its limits
    ratios = edge_length_ratios(pts, x, edges)
    assert ratios[edge] <= 1.35 + ON_LIMIT and ratios[edge] > 1.3
    assert ratios.max() <= 1.35 + ON_LIMIT and ratios.min() >= 0.70 - ON_LIMIT
    result = quality.improve(plan, stretched - pts, SEED, use_kernel=use_kernel)  # the whole pass
    assert result.sweeps[0] < 5 and result.violations_left == 0
    assert edge_length_ratios(pts, pts + result.displacements, edges).max() <= 1.35 + ON_LIMIT


@pytest.mark.parametrize("spacing, reduction", [(0.01, 0.78), (0.05, 0.65)])
def test_seed_2_noise_of_5_cm_is_reduced_by_more_than_60_percent(spacing, reduction):
    """±5 cm of noise on every vertex of a 20×20 grid of 1 cm and of 5 cm cells: the pass leaves
    less than 40 % of its mean amplitude (measured: 21 % and 34 %). The smoothing alone leaves
    45.5 % on any grid: the clamp takes the rest, where the noise is as large as an edge."""
    pts, tris = grid(20, spacing)
    plan, _ = plan_of(pts, tris)
    noise = np.random.default_rng(1).uniform(-0.05, 0.05, size=pts.shape)
    result = quality.improve(plan, noise, SEED, use_kernel=False)
    assert amplitude(result.displacements) < (1.0 - reduction) * amplitude(noise) < 0.4 * amplitude(noise)
    smoothed = quality.smooth_displacements(plan, noise, SEED)
    assert 0.54 < 1.0 - amplitude(smoothed) / amplitude(noise) < 0.55


@pytest.mark.parametrize("seed", [0, 1, 2, 5])
def test_seed_3_a_hot_hammer_dent_keeps_its_depth_and_flips_no_triangle(seed):
    """A hammer blow on a 10 cm plate of 2 mm cells: a 4 mm dent (σ = 5 mm) with ±1.5 mm of
    sideways jitter where it hit (a hard impact's spikes): without the pass 2–6 triangles flip and
    edges reach 2×; with it none flips, no edge is over 135 % (measured ≤ 1.26) and the dent stays
    3.6 mm deep (the seed asks for more than 2 mm)."""
    pts, tris = grid(50, 0.002)
    plan, edges = plan_of(pts, tris)
    hit = np.exp(-np.sum(pts[:, :2] ** 2, axis=1) / (2 * 0.005**2))
    d = np.zeros_like(pts)
    d[:, 2] = -0.004 * hit
    d[:, :2] = np.random.default_rng(seed).uniform(-0.0015, 0.0015, size=(len(pts), 2)) * hit[:, None]
    assert flipped_triangles(pts, pts + d, tris).sum() >= 2
    assert edge_length_ratios(pts, pts + d, edges).max() > 1.9
    shown = pts + quality.improve(plan, d, SEED, use_kernel=False).displacements
    assert flipped_triangles(pts, shown, tris).sum() == 0
    ratios = edge_length_ratios(pts, shown, edges)
    assert ratios.max() <= 1.35 + ON_LIMIT and ratios.min() >= 0.70 - ON_LIMIT
    assert -shown[:, 2].min() > 0.002


@dataclass
class Rig:
    """The Stanford bunny (Z up, 35,947 vertices, 69,451 triangles) bound to its default cage."""

    pts: np.ndarray
    tris: np.ndarray
    edges: np.ndarray
    plan: quality.QualityPlan
    cage_points: np.ndarray
    tets: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    blend: object  # scipy.sparse [N, Q]
    laplacian: object  # quality.affine_laplacian_matrix [N, Q]

    def offsets(self, displacements: np.ndarray, settings=SEED, use_kernel=None):
        """(blended offsets, the pass's result) of control-point displacements D [Q, 3]."""
        d = self.blend @ displacements
        return d, quality.improve(self.plan, d, settings, self.laplacian @ displacements, use_kernel)


def bunny_rig(subdivisions: int = 0) -> Rig:
    """The bunny 5 mm above the ground on its default cage; each subdivision splits every
    triangle into four at its edges' midpoints (the cage stays the bunny's)."""
    pts = obj_vertices("stanford-bunny")[:, [0, 2, 1]] * [1, -1, 1]  # Y-up → Z-up (a mirror:
    tris = obj_triangles("stanford-bunny")[:, [0, 2, 1]]  # the triangles turn to face out again)
    pts[:, 2] += 0.005 - pts[:, 2].min()
    cage = build_cage(pts)
    for _ in range(subdivisions):
        pts, tris = subdivide(pts, tris)
    plan, edges = plan_of(pts, tris)
    b = bind(pts, cage.control_points, cage.tets)
    return Rig(pts, tris, edges, plan, cage.control_points, cage.tets, b.control_point_indices, b.weights,
               blend_matrix(b.control_point_indices, b.weights, len(cage.control_points)),
               quality.affine_laplacian_matrix(plan, cage.control_points, b.control_point_indices))


def subdivide(pts: np.ndarray, tris: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every triangle split into four at its edges' midpoints (a vertex per edge added)."""
    pairs = np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), axis=1)
    edges, inverse = np.unique(pairs, axis=0, return_inverse=True)
    mid = len(pts) + inverse.reshape(3, -1).T  # the midpoints of edges 01, 12, 20 of each triangle
    a, b, c = tris.T
    ab, bc, ca = mid.T
    new_tris = np.concatenate([np.stack(t, 1) for t in ((a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca))])
    return np.concatenate([pts, pts[edges].mean(axis=1)]), new_tris


@pytest.fixture(scope="module")
def bunny() -> Rig:
    return bunny_rig()


def test_seed_4_cold_case_no_deformation_moves_nothing_also_when_the_body_turns(bunny):
    """No deformation: the pass moves no vertex by 0.1 mm, at rest and under a rigid motion (a
    quarter turn and a fall), because the smoothing measures each vertex against its tet's own
    motion. The seed's plain smoothing of the displacement would move the turned bunny by 1 mm."""
    rest = bunny.offsets(np.zeros_like(bunny.cage_points))[1]
    assert np.abs(rest.displacements).max() == 0.0 and rest.sweeps == (1, 1)
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    moved = bunny.cage_points @ turn.T + [0.3, -0.2, -1.5] - bunny.cage_points
    for use_kernel in (False, True):
        d, result = bunny.offsets(moved, use_kernel=use_kernel)
        assert np.abs(result.displacements - d).max() < 1e-4 * 1e-6  # ≪ 0.1 mm
    plain = quality.improve(bunny.plan, d, SEED, None, use_kernel=False).displacements
    assert np.linalg.norm(plain - d, axis=1).max() > 0.9e-3


@dataclass
class Landing:
    """Per frame: (control-point displacements D, blended offsets, the pass's result)."""

    frames: list


# The bunny lands at 5 m/s: TetRig's default material, and the Jelly preset (E 10 kPa, K 167 kPa,
# 1050 kg/m³, damping 0.5 /s) whose bottom spreads by 40 % on the landing frame. Both as stepped
# without the global step (Global Iterations 0, implicit Euler), whose one sweep per step stretches
# the bottom far more on impact (with today's defaults no edge of the default bunny passes 1.35×):
# the hard landings the pass is for.
_HARD = dict(global_iterations=0, integrator=solver.INTEGRATOR_EULER)
MATERIALS = {"default": (_HARD, 1000.0),
             "jelly": (dict(youngs_modulus=1e4, volume_stiffness=166667.0, damping=0.5, **_HARD), 1050.0)}
LANDING_FRAMES = 36


def landing_frames(rig: Rig, material: str, frames: int = LANDING_FRAMES) -> list:
    """The rig landing at 5 m/s: per frame (control-point displacements D, blended offsets, the
    pass's result)."""
    settings, density = MATERIALS[material]
    model = solver.build_model(rig.cage_points, rig.tets, density=density, contacts=(rig.indices, rig.weights))
    sim = solver.SimSettings(ground_height=0.0, **settings).validated()
    state = solver.rest_state(model)
    state.velocities[:] = [0.0, 0.0, -5.0]
    out = []
    for _ in range(frames):
        state = solver.step(model, state, sim, 1 / 24)
        displacements = state.positions - rig.cage_points
        out.append((displacements, *rig.offsets(displacements, use_kernel=True)))
    return out


@pytest.fixture(scope="module", params=list(MATERIALS))
def landing(request, bunny) -> tuple[str, Landing]:
    return request.param, Landing(landing_frames(bunny, request.param))


def measures(bunny: Rig, offsets: np.ndarray) -> dict:
    shown = bunny.pts + offsets
    ratios = edge_length_ratios(bunny.pts, shown, bunny.edges)
    flipped = flipped_triangles(bunny.pts, shown, bunny.tris)
    return dict(beyond=float(np.mean(ratios > 1.35)), max=float(ratios.max()), min=float(ratios.min()),
                flipped=int(flipped.sum()),
                flipped_solid=int((flipped & ~sliver_triangles(bunny.pts, bunny.tris)).sum()))


def test_a_bunny_landing_at_5_m_s_shows_no_edge_over_135_percent_and_no_flipped_triangle(bunny, landing):
    """Pass off: edges beyond 135 % and flipped triangles (the worst frame is the impact's); pass
    on: every frame within the limits and nothing flipped. Jelly's landing frame keeps a residue
    the seed's 4 + 4 sweeps cannot clear (its whole bottom is stretched 1.37–1.41×): 1.3516."""
    material, run = landing
    off = [measures(bunny, d) for _, d, _ in run.frames]
    on = [measures(bunny, r.displacements) for _, _, r in run.frames]
    worst = int(np.argmax([m["beyond"] for m in off]))
    print(f"\n{material}: worst impact frame {worst + 1}: pass off {off[worst]}, on {on[worst]}; "
          f"all frames off: max {max(m['max'] for m in off):.3f}, min {min(m['min'] for m in off):.3f}, "
          f"{sum(m['flipped'] for m in off)} flips; on: max {max(m['max'] for m in on):.4f}, "
          f"min {min(m['min'] for m in on):.4f}, {sum(m['flipped'] for m in on)} flips")
    assert all(m["flipped_solid"] == 0 for m in on)  # every frame
    if material == "default":
        assert off[worst]["beyond"] > 1e-5 and off[worst]["max"] > 1.45 and off[worst]["min"] < 0.55
        assert max(m["max"] for m in on) <= 1.35 + ON_LIMIT and min(m["min"] for m in on) >= 0.70 - ON_LIMIT
        assert all(m["flipped"] == 0 for m in on)  # slivers too
    else:
        assert worst == 0 and off[0]["beyond"] > 5e-4 and max(m["max"] for m in off) > 2.5
        assert sum(m["flipped"] for m in off) > 20
        assert on[0]["max"] < 1.352 and on[0]["min"] > 0.688 and on[0]["beyond"] < 0.6 * off[0]["beyond"]
        assert max(m["max"] for m in on[1:]) <= 1.35 + ON_LIMIT
        assert sum(m["flipped"] - m["flipped_solid"] for m in on) <= 1  # the bunny's one sliver, once


def test_more_sweeps_clear_the_jelly_landing_frame(bunny):
    """Clamp Iterations trades time for the residue: 32 sweeps bring jelly's landing frame to 1.35."""
    displacements = landing_frames(bunny, "jelly", frames=1)[0][0]
    _, result = bunny.offsets(displacements, quality.QualitySettings(constraint_iterations=32), use_kernel=True)
    assert measures(bunny, result.displacements)["max"] <= 1.35 + 1e-4


def test_kernel_and_reference_give_the_same_displacements(bunny, landing):
    """The Numba kernel and the NumPy reference, frame by frame through the landing: the same
    sweeps and displacements (measured: identical to the last bit)."""
    _, run = landing
    worst = 0.0
    for displacements, d, kernel in run.frames[:12]:
        reference = quality.improve(bunny.plan, d, SEED, bunny.laplacian @ displacements, use_kernel=False)
        worst = max(worst, float(np.abs(reference.displacements - kernel.displacements).max()))
        assert reference.sweeps == kernel.sweeps and reference.violations_left == kernel.violations_left
    assert worst < 1e-12
    assert quality_backend.kernel_ready() and quality_backend.unavailable_reason() is None


def test_fixed_vertices_never_move_and_their_edges_move_the_other_end():
    pts, tris = grid(4, 0.1)
    fixed = np.zeros(len(pts), dtype=bool)
    fixed[12] = True  # the centre
    plan, edges = plan_of(pts, tris, fixed)
    d = np.zeros_like(pts)
    d[12] = [0.06, 0.0, 0.0]  # a pinned vertex that moved: its edges stretch, its neighbours follow
    for use_kernel in (False, True):
        result = quality.improve(plan, d, SEED, use_kernel=use_kernel)
        assert np.array_equal(result.displacements[12], d[12])
        assert result.violations_left == 0
        assert edge_length_ratios(pts, pts + result.displacements, edges).max() <= 1.35 + ON_LIMIT
        assert result.displacements[7, 0] > 0.005  # the vertex behind it was pulled along
    assert plan.smoothing_scale[12] == 0.0


def test_plan_topology_boundary_half_weight_and_colours_are_matchings(bunny):
    pts, tris = grid(3, 1.0)
    plan, edges = plan_of(pts, tris)
    border = (np.abs(pts[:, :2]) > 1.4).any(1)
    np.testing.assert_array_equal(plan.smoothing_scale, np.where(border, 0.5, 1.0))
    rank = np.argsort(plan.order)
    assert len(edges) == plan.edge_count == 33 and np.diff(plan.neighbour_offsets)[rank[5]] == 6  # interior
    for plan in (plan, bunny.plan):
        for edges in (plan.inner, plan.cross):
            offsets = edges.colour_offsets
            for c in range(offsets.size - 1):
                ends = edges.ends[edges.members[offsets[c]:offsets[c + 1]]].ravel()
                assert np.unique(ends).size == ends.size  # no vertex twice in a colour
        blocks = plan.inner.ends // plan.block_size
        assert np.all(blocks[:, 0] == blocks[:, 1])  # inner edges stay in their block
        blocks = plan.cross.ends // plan.block_size
        assert np.all(blocks[:, 0] != blocks[:, 1])
    # the bunny: 223 vertices on the holes in its base; 18 blocks, 9 % of the edges between them
    assert (bunny.plan.smoothing_scale == 0.5).sum() == 223
    assert bunny.plan.edge_count == 104288 and bunny.plan.inner.colour_offsets.size - 1 <= 16
    print(f"\nbunny: {bunny.plan.inner.block_offsets.shape[0]} blocks, {bunny.plan.cross.ends.shape[0]} edges "
          f"between them, {bunny.plan.inner.colour_offsets.size - 1} + {bunny.plan.cross.colour_offsets.size - 1} colours")
    # a quad and a triangle given as faces: corner lists of any size
    corners, sizes = np.array([0, 1, 2, 3, 1, 4, 2]), np.array([4, 3])
    np.testing.assert_array_equal(quality.unique_edges(corners, sizes),
                                  [[0, 1], [0, 3], [1, 2], [1, 4], [2, 3], [2, 4]])
    np.testing.assert_array_equal(quality.boundary_vertices(5, corners, sizes), [True] * 5)


@pytest.mark.parametrize("bad, message", [
    (dict(max_stretch=0.9), "Max Stretch"), (dict(max_compression=0.0), "Max Compression"),
    (dict(max_compression=1.2), "Max Compression"), (dict(smoothing_weight=1.5), "Smoothing"),
    (dict(constraint_iterations=-1), "Iterations")])
def test_bad_settings_and_inputs_are_refused_with_a_message(bad, message):
    with pytest.raises(TetRigInputError, match=message):
        quality.QualitySettings(**bad).validated()
    pts, tris = grid(2, 1.0)
    plan, _ = plan_of(pts, tris)
    with pytest.raises(TetRigInputError, match="must be 9×3"):
        quality.improve(plan, np.zeros((8, 3)), SEED)
    with pytest.raises(TetRigInputError, match="outside the mesh"):
        quality.build_plan(pts, [[0, 9]])


def test_a_posed_rest_keeps_its_edge_lengths_and_kernel_and_reference_agree(bunny):
    """A pose (here: the bunny stretched 1.6× along z and turned) is the frame's rest: with no
    displacement the pass moves nothing, though most edges are past 1.35× the plan's rest; a
    displacement on top of the pose is clamped against the posed lengths, the same in the kernel
    and the reference."""
    turn = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    posed = (bunny.pts * [1.0, 1.0, 1.6]) @ turn.T
    assert (edge_length_ratios(bunny.pts, posed, bunny.edges) > 1.35).mean() > 0.2
    zero = np.zeros_like(bunny.pts)
    for use_kernel in (False, True):
        result = quality.improve(bunny.plan, zero, SEED, zero, use_kernel, rest_positions=posed)
        assert np.abs(result.displacements).max() == 0.0 and result.sweeps == (1, 1)
    rng = np.random.default_rng(3)
    noise = rng.normal(scale=0.004, size=bunny.pts.shape)  # ~edge length: stretches many edges
    got = [quality.improve(bunny.plan, noise, SEED, None, use_kernel, rest_positions=posed) for use_kernel in (False, True)]
    assert np.abs(got[0].displacements - got[1].displacements).max() < 1e-12
    assert got[0].sweeps == got[1].sweeps and got[0].violations_left == got[1].violations_left
    ratios = edge_length_ratios(posed, posed + got[0].displacements, bunny.edges)
    before = edge_length_ratios(posed, posed + noise, bunny.edges)
    assert before.max() > 2.0 and (ratios > 1.35 + ON_LIMIT).mean() < 0.05 * (before > 1.35).mean()
