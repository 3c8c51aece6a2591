"""Jiggle bones: the data of a bone-chain simulation (what never changes, what one frame gives,
what changes every step) and the checks on it.

A bone's *pre* frame is where the animation (keyframes, the user's constraints and IK) puts it,
with its parents already jiggled; its tail in that frame is the *target* its simulated tail is
pulled to. Frames are a 3×3 part R (a rotation times a uniform scale: the bone's x, y, z axes as
columns, the y axis along the bone) and a head position t, in world space and metres.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import TetRigInputError

# A bone shorter than this [m] (after the rig's scale) has no direction to simulate.
MIN_BONE_LENGTH = 1e-6
# Relative tolerance of a "uniform" scale: the three axis lengths of a frame within this of each other.
UNIFORM_SCALE_TOLERANCE = 1e-4
# Default steps per second (the same step at any frame rate, as the soft bodies).
DEFAULT_STEPS_PER_SECOND = 240.0
# The seed's dt clamp: no integration step is longer than this [s].
DEFAULT_MAX_STEP = 1.0 / 30.0
# Sphere and capsule collisions are resolved this many times per bone and step (a capsule's
# closest point moves as the tail does).
COLLISION_PASSES = 3


@dataclass(frozen=True, eq=False)
class ChainModel:
    """The bones of one rig and their settings (static).

    Bones are ordered parents first; ``levels`` groups them by depth so a level's bones can be
    stepped together once their parents are done.

    Attributes:
        names: the bones' names (for messages), bone_count of them.
        parent: int64 [bone_count], index of the nearest simulated ancestor, −1 for a chain root.
        length: float64 [bone_count], the bone's length in its own frame (Blender's ``bone.length``);
            the target tail is t + R[:, 1] · length.
        stiffness: float64 [bone_count] [1/s²], k per unit mass: the tail swings at √k/2π Hz.
        damping: float64 [bone_count] [1/s], c on the velocity relative to the target; 2√k is critical.
        gravity_scale: float64 [bone_count], times the scene's gravity.
        max_speed: float64 [bone_count] [m/s], of the tail relative to its target.
        angle_limit: float64 [bone_count] [rad], cone half-angle around the target direction (π: none).
        radius: float64 [bone_count] [m], the tail's collision radius.
        stretch: bool [bone_count], the bone may change length (else its length is kept exactly).
        levels: int64 index arrays, one per depth, roots first.
    """

    names: tuple[str, ...]
    parent: np.ndarray
    length: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray
    gravity_scale: np.ndarray
    max_speed: np.ndarray
    angle_limit: np.ndarray
    radius: np.ndarray
    stretch: np.ndarray
    levels: tuple[np.ndarray, ...] = field(default=())

    @property
    def bone_count(self) -> int:
        return len(self.names)


def build_model(names: list[str] | tuple[str, ...], parent: np.ndarray, length: np.ndarray,
                stiffness: np.ndarray | float, damping: np.ndarray | float,
                gravity_scale: np.ndarray | float = 1.0, max_speed: np.ndarray | float = 100.0,
                angle_limit: np.ndarray | float = math.pi, radius: np.ndarray | float = 0.0,
                stretch: np.ndarray | bool = False) -> ChainModel:
    """Check the bones' settings and make a ``ChainModel`` (scalars apply to every bone).

    Args:
        names: bone names, parents before children.
        parent: int [bone_count], index of the nearest simulated ancestor (smaller than the bone's
            own index) or −1.
        length: float [bone_count], bone lengths in their own frames (> 0).
        stiffness [1/s²] ≥ 0, damping [1/s] ≥ 0, gravity_scale, max_speed [m/s] > 0,
        angle_limit [rad] in (0, π], radius [m] ≥ 0, stretch: per bone or one for all.

    Raises:
        TetRigInputError: a bad value, with the bone's name.
    """
    names = tuple(names)
    count = len(names)
    parent = np.asarray(parent, dtype=np.int64).reshape(-1)
    if parent.shape != (count,) or np.any(parent >= np.arange(count)) or np.any(parent < -1):
        raise TetRigInputError("Jiggle bones must be listed parents first.")

    def per_bone(value: np.ndarray | float | bool, label: str, dtype: type = np.float64) -> np.ndarray:
        arr: np.ndarray = np.broadcast_to(np.asarray(value, dtype=dtype), (count,)).copy()
        if dtype is np.float64 and not np.all(np.isfinite(arr)):
            bad = names[int(np.flatnonzero(~np.isfinite(arr))[0])]
            raise TetRigInputError(f"{bad}: the jiggle {label} is not a finite number.")
        arr.setflags(write=False)
        return arr

    length = per_bone(length, "bone length")
    arrays = {
        "stiffness": per_bone(stiffness, "stiffness"), "damping": per_bone(damping, "damping"),
        "gravity_scale": per_bone(gravity_scale, "gravity scale"),
        "max_speed": per_bone(max_speed, "max speed"), "angle_limit": per_bone(angle_limit, "angle limit"),
        "radius": per_bone(radius, "collision radius"),
    }
    checks = (("length", length <= 0.0, "has zero length"),
              ("stiffness", arrays["stiffness"] < 0.0, "stiffness must be 0 or more"),
              ("damping", arrays["damping"] < 0.0, "damping must be 0 or more"),
              ("max_speed", arrays["max_speed"] <= 0.0, "max speed must be above 0"),
              ("angle_limit", (arrays["angle_limit"] <= 0.0) | (arrays["angle_limit"] > math.pi + 1e-6),
               "angle limit must be above 0° and at most 180°"),
              ("radius", arrays["radius"] < 0.0, "collision radius must be 0 or more"))
    for _, bad, message in checks:
        if np.any(bad):
            raise TetRigInputError(f"{names[int(np.flatnonzero(bad)[0])]}: {message}.")
    depth = np.zeros(count, dtype=np.int64)
    for i in range(count):
        depth[i] = 0 if parent[i] < 0 else depth[parent[i]] + 1
    levels = tuple(np.flatnonzero(depth == d) for d in range(int(depth.max(initial=-1)) + 1))
    parent.setflags(write=False)
    return ChainModel(names=names, parent=parent, length=length, stretch=per_bone(stretch, "stretch", bool),
                      levels=levels, **arrays)


@dataclass(frozen=True, eq=False)
class FramePose:
    """What the simulation reads from the scene at one frame.

    Each bone's animated frame relative to its simulated parent's frame (for a chain root: world
    space in metres), split so that it interpolates well between frames.

    Attributes:
        rotation: float64 [bone_count, 4], unit quaternions (w, x, y, z).
        scale: float64 [bone_count], the uniform scale of the frame.
        translation: float64 [bone_count, 3] (metres for roots; the parent frame's units otherwise).
        world: float64 [4, 4], the rig object's world matrix with lengths in metres (teleports).
        spheres: float64 [sphere_count, 4]: centre [m] and radius [m] of sphere colliders.
        capsules: float64 [capsule_count, 7]: the two end centres [m] and the radius [m].
        meshes: mesh colliders (``tetrig_addon.colliders.Collider``, or a soft body's surface:
            ``colliders.clipped.ClippedSurface``), world space, metres.
        influence: 0..1, the seed's alpha: how much of the jiggle is shown (not simulated).
    """

    rotation: np.ndarray
    scale: np.ndarray
    translation: np.ndarray
    world: np.ndarray = field(default_factory=lambda: np.eye(4))
    spheres: np.ndarray = field(default_factory=lambda: np.zeros((0, 4)))
    capsules: np.ndarray = field(default_factory=lambda: np.zeros((0, 7)))
    meshes: tuple = ()
    influence: float = 1.0


def pose_from_matrices(local: np.ndarray, **extra: object) -> FramePose:
    """A ``FramePose`` from each bone's local 4×4 matrix (see ``FramePose``).

    Args:
        local: float [bone_count, 4, 4]; the 3×3 parts must be rotations times a positive uniform
            scale.
        extra: the other ``FramePose`` fields.

    Raises:
        TetRigInputError: a 3×3 part with a non-uniform or negative scale, or not finite.
    """
    m = np.asarray(local, dtype=np.float64)
    if not np.all(np.isfinite(m)):
        raise TetRigInputError("A bone's animated transform is not finite.")
    r = m[:, :3, :3]
    axes = np.linalg.norm(r, axis=1)  # column lengths: the scale of x, y, z
    scale = axes.mean(axis=1) if len(m) else np.zeros(0)
    det = np.linalg.det(r) if len(m) else np.zeros(0)
    bad = (np.abs(axes - scale[:, None]).max(axis=1, initial=0.0) > UNIFORM_SCALE_TOLERANCE * scale) | (det <= 0.0)
    if np.any(bad):
        raise TetRigInputError("A jiggle bone has a negative or non-uniform scale (from its own pose, a "
                               "parent or the object); jiggle needs a uniform positive scale.")
    return FramePose(rotation=matrix_to_quaternion(r / scale[:, None, None]), scale=scale,
                     translation=m[:, :3, 3].copy(), **extra)  # type: ignore[arg-type]


def matrix_to_quaternion(r: np.ndarray) -> np.ndarray:
    """Unit quaternions (w, x, y, z) of rotation matrices: float64 [n, 4] from [n, 3, 3]
    (Shepperd's method: the largest of w, x, y, z first, for accuracy)."""
    r = np.asarray(r, dtype=np.float64)
    n = r.shape[0]
    q = np.empty((n, 4))
    trace = r[:, 0, 0] + r[:, 1, 1] + r[:, 2, 2]
    diag = np.stack([trace, r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]], axis=1)
    pick = np.argmax(np.stack([trace, 2 * r[:, 0, 0] - trace, 2 * r[:, 1, 1] - trace, 2 * r[:, 2, 2] - trace], 1), 1)
    for i in range(n):
        m = r[i]
        k = pick[i]
        if k == 0:
            s = 2.0 * math.sqrt(max(1.0 + diag[i, 0], 0.0))
            q[i] = (0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s)
        elif k == 1:
            s = 2.0 * math.sqrt(max(1.0 + m[0, 0] - m[1, 1] - m[2, 2], 0.0))
            q[i] = ((m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s)
        elif k == 2:
            s = 2.0 * math.sqrt(max(1.0 + m[1, 1] - m[0, 0] - m[2, 2], 0.0))
            q[i] = ((m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s)
        else:
            s = 2.0 * math.sqrt(max(1.0 + m[2, 2] - m[0, 0] - m[1, 1], 0.0))
            q[i] = ((m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s)
    q *= np.where(q[:, :1] < 0.0, -1.0, 1.0)
    return q / np.linalg.norm(q, axis=1, keepdims=True)


def quaternion_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrices of quaternions (w, x, y, z), normalized first: float64 [n, 3, 3]."""
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
        np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
        np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1)], -2)


@dataclass(frozen=True)
class JiggleSettings:
    """Per-rig settings of one simulation run (SI units).

    Attributes:
        frame_dt: [s] one frame.
        substeps: integration steps per frame (``substeps_for``).
        gravity: float [3] [m/s²], the scene's gravity.
        teleport_distance: [m] a jump of the rig object farther than this in one frame re-rests.
        teleport_angle: [rad] so does a turn of the rig object by more than this.
    """

    frame_dt: float
    substeps: int
    gravity: tuple[float, float, float] = (0.0, 0.0, -9.81)
    teleport_distance: float = math.inf
    teleport_angle: float = math.inf


def substeps_for(steps_per_second: float, frame_dt: float, max_step: float = DEFAULT_MAX_STEP) -> int:
    """Integration steps per frame: the rate's nearest whole number (as the soft bodies' solver),
    and enough that no step is longer than ``max_step`` (the seed's dt clamp) [s].

    Raises:
        TetRigInputError: a rate, frame duration or clamp that is not positive.
    """
    if not (steps_per_second > 0.0 and frame_dt > 0.0 and max_step > 0.0):
        raise TetRigInputError("Steps per second, the frame rate and the dt clamp must be positive.")
    return max(1, int(round(steps_per_second * frame_dt)), int(math.ceil(frame_dt / max_step - 1e-9)))


@dataclass
class ChainState:
    """What changes every step.

    Attributes:
        positions: float64 [bone_count, 3] [m], the simulated tails, world space.
        velocities: float64 [bone_count, 3] [m/s].
    """

    positions: np.ndarray
    velocities: np.ndarray

    def copy(self) -> "ChainState":
        return ChainState(self.positions.copy(), self.velocities.copy())

    def finite(self) -> bool:
        """Whether every position and velocity is finite (``timeline.FrameState``)."""
        return bool(np.all(np.isfinite(self.positions)) and np.all(np.isfinite(self.velocities)))

    def halted(self) -> "ChainState":
        """The tails where they are, at rest (``timeline.FrameState``)."""
        return ChainState(self.positions, np.zeros_like(self.velocities))


def rig_motion(world0: np.ndarray, world1: np.ndarray, count: int) -> np.ndarray:
    """How the rig object carries points over each of ``count`` equal steps between two frames:
    float64 [count, 3, 4], step i's affine map M_i = W(a_i+1) · W(a_i)⁻¹, the world matrix W
    interpolated as the bones' frames are (rotation by normalized quaternion lerp, uniform scale
    and translation lerped; a non-uniform object scale is refused before this). The damping acts
    on velocities relative to (M_i x − x)/h, the velocity the rig itself gives a point x."""
    w0, w1 = np.asarray(world0, dtype=np.float64), np.asarray(world1, dtype=np.float64)
    if np.array_equal(w0, w1):  # the object does not move this frame (most frames)
        still = np.zeros((count, 3, 4))
        still[:, 0, 0] = still[:, 1, 1] = still[:, 2, 2] = 1.0
        return still
    s0, s1 = np.linalg.norm(w0[:3, :3], axis=0).mean(), np.linalg.norm(w1[:3, :3], axis=0).mean()
    q = matrix_to_quaternion(np.stack([w0[:3, :3] / s0, w1[:3, :3] / s1]))
    if np.dot(q[0], q[1]) < 0.0:
        q[1] = -q[1]
    a = np.arange(count + 1) / count
    rot = quaternion_to_matrix((1.0 - a)[:, None] * q[0] + a[:, None] * q[1])
    lin = rot * ((1.0 - a) * s0 + a * s1)[:, None, None]
    trans = (1.0 - a)[:, None] * w0[:3, 3] + a[:, None] * w1[:3, 3]
    inv = np.linalg.inv(lin[:-1])
    step = np.einsum("nij,njk->nik", lin[1:], inv)
    out = np.empty((count, 3, 4))
    out[:, :, :3] = step
    out[:, :, 3] = trans[1:] - np.einsum("nij,nj->ni", step, trans[:-1])
    return out
