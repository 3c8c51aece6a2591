"""TetRig's Blender layer: everything that touches ``bpy``, thin over the engine (``tetrig_addon``).

Imports go one way, down: ``app`` → ``bake``, ``scene`` → the kinds (``cage``, ``surface``,
``jiggle``, which never import one another) → ``common`` → the engine.

- ``scene``: the scene driver. Per frame: every body's inputs, then every body's state, then every
  body's write; the one place where the kinds of simulated thing are chosen.
- ``bake``: baking soft bodies (modal, background, batch), bake status and outdated bakes.
- ``cage/``: cage soft bodies: ``kind`` (their frames in the driver), ``model`` (built from the
  cage and binding, stale checks), ``build`` (Build Cage & Bind), ``cage_object``, ``quality_pass``,
  ``export`` (seed JSON) and ``animation_export`` (PC2, animation JSON).
- ``surface/``: Surface bodies: ``kind``, ``setup`` (Set Up Surface Body), ``tear_display``,
  ``bake_frames`` (a torn body's bake).
- ``jiggle/``: jiggle rigs: ``kind``, ``properties``, ``rig`` (constraints and target empties),
  ``inputs`` (a rig's bones and colliders at a frame), ``bake`` and ``bake_store``.
- ``common/``: what the kinds share: ``properties`` (``Object.tetrig``), ``frames`` (one body's
  slot, frame cache and inputs: the lifecycle every kind follows), ``scene_inputs`` (world matrix,
  colliders, visiting other frames), ``soft_body`` (settings in SI units, pins and goals),
  ``animation``, ``edits`` (rest-shape edits noticed from the depsgraph), ``mesh_io``, ``stack`` (the
  modifier stack), ``offset_modifier``, ``points_object``, ``binding_store``, ``bake_store``, ``rig``
  (removing a rig), ``hooks`` (property updates that act at once), ``compiled_solver``.
- ``app/``: the application's wiring: ``handlers``, ``render_guard``, ``cage_overlay`` and
  ``jiggle_draw`` (viewport drawing), ``viewport_draw``, ``presets``, ``dependencies``,
  ``preferences``.
"""
