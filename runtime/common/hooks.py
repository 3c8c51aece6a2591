"""The one way a property group's update callback reaches code above it: a setting changed.

Property groups live low (``common/properties``, ``jiggle/properties``): the frame driver and the
kinds import them, so they cannot import those back. When a setting must act at once (a bone's
Jiggle box sets up its constraint; a bone setting the model is built from rebuilds it), its update
callback calls ``settings_changed``, which the scene driver registers (``runtime/scene``).
"""

from __future__ import annotations

from typing import Any, Callable

import bpy

SettingsHook = Callable[[Any, str, "bpy.types.Context | None"], None]
_hook: SettingsHook | None = None


def register_settings_hook(hook: SettingsHook | None) -> None:
    """Set (or, with ``None``, clear) the function ``settings_changed`` calls."""
    global _hook
    _hook = hook


def settings_changed(owner: Any, what: str, context: bpy.types.Context | None = None) -> None:
    """A setting of ``owner`` (an object) changed; ``what`` names which (see ``runtime/scene``)."""
    if _hook is not None:
        _hook(owner, what, context)
