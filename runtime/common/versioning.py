"""Settings whose default changed: a soft body saved before the change steps as it did.

Blender saves a property only once it has been set; one never set reads the current default. When
a default changes, a file saved before would silently take the new one and its soft bodies would
move differently (and its bakes read as outdated). So each soft body records the settings version
it was made with (``settings_version``, stamped by Build Cage and Set Up Surface Body), and one
from before a change gets the old default written into each changed property it never set: when a
file is opened and when objects are appended into one, as Blender's own versioning does for its DNA
defaults. (A linked soft body cannot be written: it reads today's defaults.)
"""

from __future__ import annotations

from typing import Iterable

import bpy

from .properties import ROLE_SOURCE, object_settings

# The version new soft bodies are made with, and what each version changed: the properties whose
# default changed, with the value they had before (which a soft body of an older version keeps).
SETTINGS_VERSION = 3
_OLD_DEFAULTS: dict[int, dict[str, object]] = {
    # Global Iterations 3 and BDF2 (issue 24: stiff bodies bend at their true speed), from 0 and
    # implicit Euler
    1: {"global_iterations": 0, "integrator": "IMPLICIT_EULER"},
    # Soft Bodies (issue 21: soft bodies touch each other), new and on: bodies of older files passed
    # through each other, and keep doing so
    2: {"use_soft_bodies": False},
    # Surface bodies join sets of touching bodies (issue 21): one saved before passed through the other
    # soft bodies, whatever its Soft Bodies said (the switch was the cages'), and keeps doing so
    3: {"use_soft_bodies": False},
}
# The versions whose old defaults are only Surface bodies' (a cage of version 2 already touched).
_SURFACE_ONLY = {3}


def stamp(obj: bpy.types.Object) -> None:
    """Record that ``obj``'s settings are of this version (a soft body just set up)."""
    object_settings(obj).settings_version = SETTINGS_VERSION


def upgrade(objects: Iterable[bpy.types.Object]) -> int:
    """Give the soft bodies among ``objects`` saved by an older TetRig the old value of every setting
    whose default changed since and which they never set, and stamp them with this version.

    Returns:
        int: the number of soft bodies upgraded (0 when all are current: cheap to call often).
    """
    upgraded = 0
    for obj in objects:
        settings = getattr(obj, "tetrig", None)
        if settings is None or settings.role != ROLE_SOURCE or settings.settings_version >= SETTINGS_VERSION:
            continue
        if obj.library is not None or obj.override_library is not None:
            continue  # a linked object cannot be written; it reads the current defaults
        for version in range(settings.settings_version + 1, SETTINGS_VERSION + 1):
            if version in _SURFACE_ONLY and not settings.surface_bound:
                continue
            for name, old in _OLD_DEFAULTS[version].items():
                if not settings.is_property_set(name):
                    setattr(settings, name, old)
        settings.settings_version = SETTINGS_VERSION
        upgraded += 1
    return upgraded
