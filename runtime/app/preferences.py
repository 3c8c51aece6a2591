"""TetRig's entry in Preferences > Add-ons: whether its dependencies work in this Blender.

Registered in every case, also when SciPy is missing and nothing else of the add-on is.
"""

from __future__ import annotations

import bpy
import numpy as np

from . import dependencies

# The add-on's package (``tetrig``, ``bl_ext.user_default.tetrig``): AddonPreferences are found
# by it.
ADDON_PACKAGE = __package__.rsplit(".", 2)[0] if __package__ else "tetrig"  # the package above runtime/


class TETRIG_AP_preferences(bpy.types.AddonPreferences):
    """SciPy (required) and numba (the compiled solver, optional), with the versions in use."""

    bl_idname = ADDON_PACKAGE

    def draw(self, context: bpy.types.Context) -> None:
        col = self.layout.column(align=True)
        scipy = dependencies.scipy()
        message = dependencies.missing_message(scipy)
        if message is None:
            col.label(text=f"SciPy {scipy.version}", icon="CHECKMARK")
        else:
            col.label(text=message, icon="ERROR")
            col.label(text=f"Import error: {scipy.error}", icon="BLANK1")
        numba = dependencies.numba()
        col.label(text=dependencies.compiled_solver_line(numba), icon="CHECKMARK" if numba.available else "INFO")
        if not numba.available:
            col.label(text="The NumPy solver runs instead (slower)", icon="BLANK1")
        col.label(text=f"Python {dependencies.python_version()}, NumPy {np.__version__}, "
                       f"{dependencies.blender_platform()}", icon="BLANK1")


register, unregister = bpy.utils.register_classes_factory((TETRIG_AP_preferences,))
