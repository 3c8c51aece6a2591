"""TetRig panels: the 3D viewport sidebar tab "TetRig".

``main`` is the tab of a working add-on; it imports the engine, and so SciPy, when ``register()``
runs. ``dependencies`` is the one panel registered instead when SciPy does not import (the root
``__init__`` chooses).
"""

import bpy

from . import dependencies


def _classes() -> tuple[type, ...]:
    from . import collisions, jiggle, main, menus

    return (menus.TETRIG_MT_presets, menus.TETRIG_MT_jiggle_presets, menus.TETRIG_MT_export,
            main.TETRIG_PT_main, main.TETRIG_PT_simulation, main.TETRIG_PT_goal,
            collisions.TETRIG_PT_collisions, collisions.TETRIG_PT_soft_body_collisions,
            collisions.TETRIG_PT_self_collision, main.TETRIG_PT_plasticity, main.TETRIG_PT_tearing,
            main.TETRIG_PT_quality, main.TETRIG_PT_bake, main.TETRIG_PT_output, jiggle.TETRIG_PT_jiggle)


def register() -> None:
    """Register the menus and panels of ``main``."""
    for cls in _classes():
        bpy.utils.register_class(cls)


def unregister() -> None:
    """Unregister the menus and panels of ``main``."""
    for cls in reversed(_classes()):
        bpy.utils.unregister_class(cls)
