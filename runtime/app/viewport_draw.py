"""A 3D-viewport draw handler (POST_VIEW: world space, after the scene) added when the add-on
registers and removed when it unregisters, shared by the jiggle collision spheres and Show Cage."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import bpy


class DrawHandler:
    """``draw`` runs at every redraw of every 3D viewport's main region, never in background mode:
    there Blender has no GPU and any ``gpu`` call raises ``SystemError``."""

    def __init__(self, draw: Callable[[], None]) -> None:
        self._draw = draw
        self.handle: Any = None

    def draw(self) -> None:
        if not bpy.app.background:
            self._draw()

    def register(self) -> None:
        if self.handle is None:
            self.handle = bpy.types.SpaceView3D.draw_handler_add(self.draw, (), "WINDOW", "POST_VIEW")

    def unregister(self) -> None:
        if self.handle is not None:
            bpy.types.SpaceView3D.draw_handler_remove(self.handle, "WINDOW")
            self.handle = None
