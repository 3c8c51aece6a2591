"""Asking Blender to draw the TetRig tab again when what it shows changed outside a redraw of its
own (a warning from the frame handler, a Build Cage that adds the soft body's subpanels).

Blender lays a panel region out again only when it redraws: a status line that appears between
two redraws is first drawn over the header below it, and the subpanels a Build Cage adds appear
half drawn, until something else redraws the sidebar (seen in the real Blender 4.3). A redraw
asked for at once lays them out right.
"""

from __future__ import annotations

import bpy


def sidebars() -> None:
    """Tag the sidebar (region UI) of every 3D viewport for a redraw; nothing without a window
    manager (background mode)."""
    manager = getattr(bpy.context, "window_manager", None)
    for window in manager.windows if manager is not None else ():
        for area in window.screen.areas:
            if area.type == "VIEW_3D":
                for region in area.regions:
                    if region.type == "UI":
                        region.tag_redraw()
