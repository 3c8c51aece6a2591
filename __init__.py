"""TetRig: soft bodies from tetrahedral cages (register/unregister only).

The preferences entry is always registered. When SciPy does not import (a zip built for another
Python), the sidebar shows one line naming the zip to install instead of the add-on failing with a
traceback; the rest of the add-on, which needs SciPy, is then not imported at all.
"""

from types import ModuleType

from . import panels
from .runtime.app import dependencies, preferences

_registered: list[ModuleType] = []


def register() -> None:
    """Register the add-on: everything when SciPy imports, else the preferences and one panel."""
    modules: list[ModuleType] = [preferences]
    if dependencies.scipy().available:
        # First: the compiled solver starts loading (a thread) while the rest imports and registers.
        from .runtime.common import compiled_solver

        compiled_solver.register()
        _registered.append(compiled_solver)
        from . import operators
        from .runtime import scene
        from .runtime.app import cage_overlay, handlers, jiggle_draw, presets
        from .runtime.common import properties
        from .runtime.jiggle import properties as jiggle_properties

        modules += [properties, jiggle_properties, presets, scene, operators, panels, handlers, jiggle_draw,
                    cage_overlay]
    else:
        modules.append(panels.dependencies)
    for module in modules:
        module.register()
        _registered.append(module)


def unregister() -> None:
    """Unregister what ``register()`` registered, in reverse order."""
    while _registered:
        _registered.pop().unregister()
