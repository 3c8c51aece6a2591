"""Blender glue that is neither an operator nor a panel: one module per concern.

- ``properties``: the ``Object.tetrig`` property group (every user setting lives there);
- ``mesh_io``: moving arrays in and out of meshes with ``foreach_get``/``foreach_set``;
- ``binding_store``: the binding as mesh attributes (``tetrig_*``) and back;
- ``cage_object``: the cage as a mesh object (its edges are the springs, its faces the tets);
- ``cage_overlay``: Show Cage, the cage's springs drawn over the viewport (a ``gpu`` draw handler);
- ``viewport_draw``: the 3D-viewport draw handlers' registration (also the jiggle spheres');
- ``offset_modifier``: the Geometry Nodes modifier that adds the simulated displacement;
- ``simulation``: per-object models and frame caches, keyed by session id (never ID references);
- ``surface_sim``: the same for Surface bodies (the mesh's own vertices are the particles);
- ``tear_display``: a torn Surface body's split, as attributes the offset node group reads;
- ``handlers``: the persistent frame-change and file-load handlers;
- ``rig``: building and removing a whole rig (what the operators and the batch script call);
- ``export``: reading a rig back out as the seed's arrays;
- ``bake_store``: a bake (control points per frame) as an ID property of the cage;
- ``bake``: baking jobs (modal, background, batch), bake status and playback for exports;
- ``render_guard``: safe updates during renders (main thread only, subframes, messages);
- ``animation_export``: the PC2 point cache and the animation JSON;
- ``presets``: where the material presets are (shipped and the user's own);
- ``compiled_solver``: the Numba solver's cache folder and its first compile, in the background.
"""
