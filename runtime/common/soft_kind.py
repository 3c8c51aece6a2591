"""What the two soft-body kinds (cage and Surface bodies) do alike in the scene driver: they read
the same scene inputs (``scene_inputs.read``: world matrix, colliders, a posed mesh's pose), wait
in Edit Mode, and keep a bake whose status and render message depend only on their fingerprint.
``runtime/cage/kind.CageKind`` and ``runtime/surface/kind.SurfaceKind`` add what differs."""

from __future__ import annotations

from typing import Any

import bpy
import numpy as np

from . import bake_store, scene_inputs
from .animation import recorded_rest_matrix
from .soft_body import StaleBindingError, in_edit_mode


class SoftBodyKind:
    """The shared half of a soft-body ``frames.BodyKind``; a subclass gives ``pose_reader`` and
    ``fingerprint`` (and the rest of the protocol)."""

    name = ""
    errors: tuple[type[Exception], ...] = (StaleBindingError, scene_inputs.InputsUnavailable, ValueError)
    keeps_warnings = True  # a warning stays until the body is built again (Build Cage frees it)

    @staticmethod
    def pose_reader(prepared: Any) -> scene_inputs.PoseReader | None:
        """How the body's inputs read its posed input (``None``: not posed)."""
        raise NotImplementedError

    def fingerprint(self, obj: bpy.types.Object, scene: bpy.types.Scene, world: np.ndarray,
                    fresh: bool = False) -> str:
        """The digest a bake made now would store (its motion key's fingerprint).

        Raises:
            TetRigInputError (a ValueError): a setting out of range.
        """
        raise NotImplementedError

    @staticmethod
    def editing(obj: bpy.types.Object) -> bool:
        return in_edit_mode(obj)

    def read(self, obj: bpy.types.Object, prepared: Any, scene: bpy.types.Scene,
             depsgraph: bpy.types.Depsgraph) -> scene_inputs.FrameInputs:
        return scene_inputs.read(obj, scene, depsgraph, self.pose_reader(prepared))

    @staticmethod
    def same(a: scene_inputs.FrameInputs, b: scene_inputs.FrameInputs) -> bool:
        return a.fingerprint == b.fingerprint

    @staticmethod
    def inputs_animated(obj: bpy.types.Object, scene: bpy.types.Scene, prepared: Any) -> bool:
        return prepared.input_animated or scene_inputs.inputs_animated(obj, scene, prepared.follows)

    @staticmethod
    def unstable(obj: bpy.types.Object, frame: int) -> str:
        return (f"{obj.name}: the simulation became unstable at frame {frame} and was frozen there; "
                "raise Steps per Second or lower the stiffness.")

    def bake_status(self, obj: bpy.types.Object, scene: bpy.types.Scene,
                    world: np.ndarray | None = None) -> bake_store.BakeStatus | None:
        """The body's bake and whether it is outdated (``world``: its start-frame world matrix,
        default the one last recorded), or ``None``."""
        try:
            current: str | None = self.fingerprint(obj, scene, recorded_rest_matrix(obj) if world is None else world)
        except ValueError:
            current = None
        return bake_store.status(obj, current)

    def render_message(self, obj: bpy.types.Object, scene: bpy.types.Scene, prefix: str) -> str:
        return bake_store.render_message(obj, scene, self.bake_status(obj, scene), prefix)

    @staticmethod
    def inputs_digest_changed(scene: bpy.types.Scene, frame: int, inputs: scene_inputs.FrameInputs,
                              follows: bool, header: bake_store.BakeInfo | None) -> bool:
        """Whether a baked current frame's scene inputs differ from those it was baked with (never at a
        subframe: the baked frames are interpolated there, the inputs read between them)."""
        if header is None or not header.inputs or frame != scene.frame_current or scene.frame_subframe:
            return False
        at = (frame - header.frame_start) * scene_inputs.DIGEST_HEX
        return scene_inputs.motion_digest(inputs, follows) != header.inputs[at:at + scene_inputs.DIGEST_HEX]
