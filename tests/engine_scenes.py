"""Scenes the engine tests and the benchmarks share: cubes, slopes, boxes, balls and a soft U (no
Blender import: the one Blender scene, ``soft_u_object``, is given the ``bpy`` module)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from tetrig_addon import colliders, solver
from tetrig_addon.cage import Binding, bind, blend, build_cage

RATE = solver.DEFAULT_STEPS_PER_SECOND

# The corners of an axis-aligned box as (x, y, z) bits, and its 12 outward triangles.
_BOX_CORNERS = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=np.float64)
_BOX_TRIANGLES = np.array([[0, 3, 2], [0, 1, 3], [4, 7, 5], [4, 6, 7], [0, 5, 1], [0, 4, 5],
                           [2, 7, 6], [2, 3, 7], [0, 6, 4], [0, 2, 6], [1, 7, 3], [1, 5, 7]])


def cube_points(size: float, per_side: int = 9) -> np.ndarray:
    """The surface points of a cube of edge ``size`` [m] centred at the origin, ``per_side`` on
    each edge: float64 [k, 3]."""
    g = np.linspace(-size / 2, size / 2, per_side)
    p = np.stack(np.meshgrid(g, g, g, indexing="ij"), -1).reshape(-1, 3)
    return p[(np.abs(p) > size / 2 - 1e-9).any(1)]


def box_collider(low, high, rotation=np.eye(3), **settings) -> colliders.Collider:
    """A closed box collider from corner ``low`` to ``high`` [m], turned by ``rotation``."""
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    verts = (low + _BOX_CORNERS * (high - low)) @ np.asarray(rotation).T
    return colliders.mesh_collider(verts, _BOX_TRIANGLES, **settings)


def tilt(degrees: float) -> np.ndarray:
    """The rotation [3, 3] that tilts +x down a slope of ``degrees`` (about −y... +x goes down)."""
    a = np.radians(degrees)
    return np.array([[np.cos(a), 0.0, np.sin(a)], [0.0, 1.0, 0.0], [-np.sin(a), 0.0, np.cos(a)]])


def body(points: np.ndarray, resolution: int = 10, **model_args) -> tuple[solver.Model, Binding]:
    """The cage model of ``points`` with every point a contact, and its binding."""
    cage = build_cage(points, resolution=resolution)
    b = bind(points, cage.control_points, cage.tets)
    model = solver.build_model(cage.control_points, cage.tets,
                               contacts=(b.control_point_indices, b.weights), **model_args)
    return model, b


def surface(model: solver.Model, b: Binding, state: solver.State) -> np.ndarray:
    """The mesh points of a state: float64 [k, 3]."""
    return blend(state.positions, b.control_point_indices, b.weights)


def rigid_fit(rest: np.ndarray, current: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rotation [3, 3], translation [3]) of the best rigid fit of ``rest`` onto ``current``
    (Kabsch); the rotation angle is arccos((tr R − 1)/2)."""
    rc, cc = rest.mean(0), current.mean(0)
    u, _, vt = np.linalg.svd((rest - rc).T @ (current - cc))
    r = (u @ np.diag([1.0, 1.0, np.sign(np.linalg.det(u @ vt))]) @ vt).T
    return r, cc - rc @ r.T


def turned_degrees(rotation: np.ndarray) -> float:
    return float(np.degrees(np.arccos(np.clip((np.trace(rotation) - 1.0) / 2.0, -1.0, 1.0))))


def slide_on_slope(mu: float, substeps: int, youngs: float = 1e6, degrees: float = 15.0,
                   seconds: float = 5.0, fps: int = 24, size: float = 0.4,
                   integrator: str = solver.INTEGRATOR_EULER) -> float:
    """How far [m] the bottom face of a cube resting on a ``degrees`` slope (friction ``mu``,
    static = kinetic) moves down it in ``seconds``, from rest on the slope."""
    rotation = tilt(degrees)
    points = (cube_points(size) + [0.0, 0.0, size / 2]) @ rotation.T
    model, b = body(points)
    slope = box_collider([-5.0, -5.0, -1.0], [5.0, 5.0, 0.0], rotation, thickness_outer=0.0,
                         static_friction=mu, kinetic_friction=mu)
    settings = solver.SimSettings(youngs_modulus=youngs, volume_stiffness=10 * youngs,
                                  substeps=substeps, integrator=integrator).validated()
    state = solver.rest_state(model)
    down, normal = rotation @ [1.0, 0.0, 0.0], rotation @ [0.0, 0.0, 1.0]
    start = surface(model, b, state)
    bottom = start @ normal < 1e-6
    for _ in range(int(seconds * fps)):
        state = solver.step(model, state, settings, 1.0 / fps, colliders=[slope])
    return float(((surface(model, b, state) - start)[bottom] @ down).mean())


def column_stretch(fps: int, mode: str = solver.MODE_SPRINGS, rate: float = RATE,
                   iterations: int = 1, youngs: float = 1e5, integrator: str = solver.INTEGRATOR_EULER) -> float:
    """Steady stretch [m] of a 0.2 × 0.2 × 1 m column (10 cm tets, two across), top pinned,
    after 5 s at ``fps`` with substeps from ``rate``."""
    grid = np.stack(np.meshgrid(*[np.linspace(0, 1, 5)] * 3, indexing="ij"), -1).reshape(-1, 3)
    cage = build_cage(grid * [0.2, 0.2, 1.0], resolution=10)
    x0 = cage.control_points
    top, bottom = x0[:, 2] > x0[:, 2].max() - 1e-9, x0[:, 2] < x0[:, 2].min() + 1e-9
    model = solver.build_model(x0, cage.tets, density=1000.0, pinned=top)
    settings = solver.SimSettings(mode=mode, youngs_modulus=youngs, volume_stiffness=youngs,
                                  substeps=solver.substeps_for(rate, 1 / fps), iterations=iterations,
                                  damping=5.0, integrator=integrator).validated()
    state = solver.rest_state(model)
    for _ in range(5 * fps):
        state = solver.step(model, state, settings, 1 / fps)
    return float((model.rest_positions[bottom, 2] - state.positions[bottom, 2]).mean())


def ball_points(radius: float = 0.2) -> np.ndarray:
    """A UV sphere's vertices (poles on z), 266 points."""
    theta, phi = np.meshgrid(np.linspace(0, np.pi, 13)[1:-1], np.linspace(0, 2 * np.pi, 24, endpoint=False))
    ring = np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)], -1)
    return np.vstack([[0, 0, 1], ring.reshape(-1, 3), [0, 0, -1]]) * radius


def drop_flat(points: np.ndarray, mode: str, youngs: float = 1e5, model=None, b=None,
              fps: int = 24, **overrides) -> tuple[float, float]:
    """Drop ``points`` 5 cm onto frictionless ground for 4 s: (degrees turned, drift [m]).
    ``overrides``: other ``SimSettings`` fields (e.g. ``global_iterations``)."""
    if model is None:
        model, b = body(points)
    fields = dict(mode=mode, youngs_modulus=youngs, volume_stiffness=10 * youngs, ground_height=0.0,
                  ground_friction=0.0, ground_static_friction=0.0)
    settings = solver.SimSettings(**{**fields, **overrides}).validated()
    state = solver.rest_state(model)
    for _ in range(4 * fps):
        state = solver.step(model, state, settings, 1.0 / fps)
    rotation, shift = rigid_fit(points, surface(model, b, state))
    return turned_degrees(rotation), float(np.linalg.norm(shift[:2]))


def reversed_colours(model: solver.Model) -> solver.Model:
    """``model`` with its colours solved in the reverse order (the sweep order's effect)."""
    topo = model.topology
    colours = [topo.color_points[topo.color_offsets[c]:topo.color_offsets[c + 1]]
               for c in range(topo.color_count)][::-1]
    return replace(model, topology=replace(
        topo, color_points=np.concatenate(colours),
        color_offsets=np.concatenate([[0], np.cumsum([len(c) for c in colours])])))


def standing_on_ground(points: np.ndarray) -> np.ndarray:
    """A shared mesh's vertices turned Y-up → Z-up, centred on the z axis, its lowest point
    0.1 % of its height above z = 0."""
    points = points[:, [0, 2, 1]] * [1, -1, 1]
    return points - [points[:, 0].mean(), points[:, 1].mean(), points[:, 2].min() - 1e-3 * np.ptp(points[:, 2])]


@dataclass(frozen=True)
class Resting:
    """A body after settling on the ground (``settle``)."""

    deformation: float  # mass-weighted RMS distance from its rest shape, rigid motion removed [m]
    deformation_before: float  # the same one second earlier [m]
    turned: float  # rotation of the best rigid fit [degrees]
    max_speed: float  # fastest control point at the end [m/s]
    rms_speed: float  # mass-weighted RMS speed of the control points at the end [m/s]


def deformation(model: solver.Model, positions: np.ndarray) -> tuple[float, float]:
    """(mass-weighted RMS deformation [m] with the best rigid motion taken out, its rotation [°])."""
    rotation, shift = rigid_fit(model.rest_positions, positions)
    moved = positions - (model.rest_positions @ rotation.T + shift)
    return (float(np.sqrt(model.masses @ (moved**2).sum(1) / model.masses.sum())),
            turned_degrees(rotation))


def settle(model: solver.Model, youngs: float, rate: float = RATE, iterations: int = 1,
           seconds: float = 5.0, fps: int = 24) -> Resting:
    """Rest ``model`` on the ground at z = 0 for ``seconds`` (E = ``youngs``, K = 10·E,
    damping 3 /s, substeps from ``rate``, ``iterations`` sweeps each) from its rest shape."""
    settings = solver.SimSettings(youngs_modulus=youngs, volume_stiffness=10 * youngs, ground_height=0.0,
                                  substeps=solver.substeps_for(rate, 1 / fps), iterations=iterations,
                                  damping=3.0).validated()
    state = solver.rest_state(model)
    frames = int(round(seconds * fps))
    before = 0.0
    for frame in range(1, frames + 1):
        state = solver.step(model, state, settings, 1 / fps)
        if frame == frames - fps:
            before = deformation(model, state.positions)[0]
    size, turned = deformation(model, state.positions)
    speed2 = (state.velocities**2).sum(1)
    return Resting(size, before, turned, float(np.sqrt(speed2.max())),
                   float(np.sqrt(model.masses @ speed2 / model.masses.sum())))


def roll_off_box_edge(model: solver.Model, b: Binding, seconds: float = 4.0, fps: int = 24) -> np.ndarray:
    """Drop a body onto the edge of a box (x ≤ 0, 0.5 m tall, μ = 1) above the ground (μ = 1) for
    ``seconds``: its mesh points at the end, float64 [k, 3]."""
    box = box_collider([-1.0, -1.0, 0.0], [0.0, 1.0, 0.5], thickness_outer=0.0,
                       static_friction=1.0, kinetic_friction=1.0)
    settings = solver.SimSettings(ground_height=0.0, ground_friction=1.0,
                                  ground_static_friction=1.0).validated()
    state = solver.rest_state(model)
    for _ in range(int(round(seconds * fps))):
        state = solver.step(model, state, settings, 1.0 / fps, colliders=[box])
    return surface(model, b, state)


def quad_grid(nx: int, ny: int, spacing: float, plane: str = "xy") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A grid of nx × ny square quads of side ``spacing`` [m] from the origin in ``plane`` ("xy":
    along +x and +y; "xz": along +x and down −z, a hanging sheet), counter-clockwise seen from +z
    (from −y for "xz"): (vertices float64 [(nx+1)(ny+1), 3], face corners int [4·nx·ny], face sizes)."""
    i, j = np.meshgrid(np.arange(nx + 1), np.arange(ny + 1), indexing="xy")
    u, v = i.ravel() * spacing, j.ravel() * spacing
    zero = np.zeros_like(u)
    verts = np.stack([u, v, zero] if plane == "xy" else [u, zero, -v], axis=1).astype(np.float64)
    index = lambda a, b: b * (nx + 1) + a  # noqa: E731
    faces = [(index(a, b), index(a + 1, b), index(a + 1, b + 1), index(a, b + 1))
             for b in range(ny) for a in range(nx)]
    corners = np.asarray(faces).ravel()
    if plane != "xy":
        corners = np.asarray(faces)[:, ::-1].ravel()
    return verts, corners, np.full(len(faces), 4)


def uv_sphere_polygons(radius: float, segments: int = 32, rings: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A UV sphere as Blender's Add > Mesh > UV Sphere makes it (quads, triangle fans at the poles,
    outward): (vertices float64 [k, 3], face corners int, face sizes int)."""
    theta = np.linspace(0, np.pi, rings + 1)[1:-1]
    phi = np.linspace(0, 2 * np.pi, segments, endpoint=False)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    ring = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    verts = np.vstack([[0, 0, 1], ring, [0, 0, -1]]) * radius
    bottom = len(verts) - 1
    faces: list[tuple[int, ...]] = []
    for j in range(segments):
        k = (j + 1) % segments
        faces.append((0, 1 + j, 1 + k))
        for r in range(rings - 2):
            a, b = 1 + r * segments + j, 1 + r * segments + k
            faces.append((a, a + segments, b + segments, b))
        last = 1 + (rings - 2) * segments
        faces.append((bottom, last + k, last + j))
    return verts, np.concatenate(faces), np.array([len(f) for f in faces])


def box_polygons(size: float, cuts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A closed cube of edge ``size`` [m] centred at the origin, each side a grid of cuts × cuts
    quads facing out (Blender's cube, subdivided): (vertices float64, face corners int, sizes)."""
    g = np.linspace(-size / 2, size / 2, cuts + 1)
    verts: list[np.ndarray] = []
    faces = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u_axis, v_axis = [(1, 2), (2, 0), (0, 1)][axis]
            if sign < 0:
                u_axis, v_axis = v_axis, u_axis
            base = sum(len(v) for v in verts)
            uu, vv = np.meshgrid(g, g, indexing="ij")
            p = np.zeros((uu.size, 3))
            p[:, axis] = sign * size / 2
            p[:, u_axis], p[:, v_axis] = uu.ravel(), vv.ravel()
            verts.append(p)
            index = lambda a, b: base + a * (cuts + 1) + b  # noqa: E731
            faces += [(index(a, b), index(a + 1, b), index(a + 1, b + 1), index(a, b + 1))
                      for a in range(cuts) for b in range(cuts)]
    points = np.vstack(verts)
    unique, inverse = np.unique(points.round(12), axis=0, return_inverse=True)
    corners = inverse.reshape(-1)[np.asarray(faces).ravel()]
    return unique, corners, np.full(len(faces), 4)


def fan_triangles(corners: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Polygons (flat corner list, sizes) fan-triangulated: int32 [T, 3], the polygons' winding."""
    tris, start = [], 0
    for size in sizes:
        face = corners[start:start + size]
        tris += [(face[0], face[i], face[i + 1]) for i in range(1, size - 1)]
        start += size
    return np.asarray(tris, dtype=np.int32)


def touching_body(vertices: np.ndarray, triangles: np.ndarray, settings: solver.SimSettings,
                  resolution: int = 8, density: float = 1000.0):
    """A cage soft body of a closed mesh that other bodies touch (``CageBody`` with its triangles),
    and its binding."""
    from tetrig_addon.cage import CageBody

    model, b = body(vertices, resolution, density=density)
    return CageBody(model, settings, triangles=triangles), b


# The soft U (issue 21, a cage body that rests on itself): two arms 0.6 m long and 6 cm thick, 6 cm
# apart, joined by a base at x < 8 cm
U_SQUARE, LENGTH, THICK, GAP, DEPTH, BASE = 0.02, 0.6, 0.06, 0.06, 0.1, 0.08


def soft_u() -> tuple[np.ndarray, np.ndarray]:
    """A U lying on its side as a closed surface of 2 cm squares: (vertices float64 [V, 3] [m],
    triangles int64 [T, 3], counterclockwise from outside): the lower arm at z < 6 cm, the upper
    at 12-18 cm."""
    n = (round(LENGTH / U_SQUARE), round(DEPTH / U_SQUARE), round((2 * THICK + GAP) / U_SQUARE))
    solid = np.zeros(n, dtype=bool)
    solid[:, :, :round(THICK / U_SQUARE)] = True
    solid[:, :, round((THICK + GAP) / U_SQUARE):] = True
    solid[:round(BASE / U_SQUARE)] = True
    index: dict[tuple[int, ...], int] = {}
    quads = []
    for cell in zip(*np.nonzero(solid)):
        for axis in range(3):
            for sign in (-1, 1):
                beside = list(cell)
                beside[axis] += sign
                if all(0 <= beside[k] < n[k] for k in range(3)) and solid[tuple(beside)]:
                    continue
                corner = np.array(cell) + np.eye(3, dtype=int)[axis] * (sign > 0)
                u, w = np.eye(3, dtype=int)[(axis + 1) % 3], np.eye(3, dtype=int)[(axis + 2) % 3]
                quad = [tuple(corner), tuple(corner + u), tuple(corner + u + w), tuple(corner + w)]
                quads.append([index.setdefault(p, len(index)) for p in (quad if sign > 0 else quad[::-1])])
    q = np.array(quads)
    points = np.array(sorted(index, key=index.__getitem__), dtype=np.float64) * U_SQUARE
    return points, np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]]).astype(np.int64)


def soft_u_object(bpy, self_collision: bool):
    """``soft_u`` as a Blender object on a Fit cage (resolution 20, 2e4 Pa), its lower arm and base
    pinned (group "Pin"), Self Collision on or off, built with Build Cage: (object, its mesh's
    vertices float64 [V, 3] [m]). ``bpy``: the module (the tests' or a real Blender's)."""
    points, triangles = soft_u()
    mesh = bpy.data.meshes.new("U")
    mesh.from_pydata(points.tolist(), [], triangles.tolist())
    mesh.update()
    obj = bpy.data.objects.new("U", mesh)
    bpy.context.scene.collection.objects.link(obj)
    group = obj.vertex_groups.new(name="Pin")
    group.add(np.flatnonzero((points[:, 2] < THICK + 1e-6) | (points[:, 0] < BASE + 1e-6)).tolist(), 1.0, "REPLACE")
    s = obj.tetrig
    s.pin_group = "Pin"
    s.cage_method = "FIT"
    s.resolution = 20
    s.youngs_modulus = 2e4
    s.use_self_collision = self_collision
    for other in bpy.context.scene.objects:
        other.select_set(False)
    bpy.context.view_layer.objects.active = obj
    obj.select_set(True)
    if bpy.ops.tetrig.build_cage() != {"FINISHED"}:
        raise RuntimeError("Build Cage failed on the soft U")
    return obj, points
