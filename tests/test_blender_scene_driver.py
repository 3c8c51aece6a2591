"""The scene driver (``runtime/scene``): one pass per frame over every body of a scene, inputs read
before any step, earlier frames visited once for all bodies, and no digest of the rest shape at
every frame (edits are noticed from the depsgraph)."""

from __future__ import annotations

import numpy as np
from blender_helpers import ball, evaluated_positions, rest_positions


def test_playback_digests_no_rest_shape_and_still_notices_an_edit(scene, monkeypatch):
    """The rest fingerprint (every vertex read and hashed: about 2 ms on the bunny) is made when a
    body is built, not at every frame; an edit from Python is still noticed at the next frame."""
    import bpy
    from tetrig.runtime import scene as driver
    from tetrig.runtime.common import binding_store

    obj = ball(bpy)
    for f in range(1, 4):
        scene.frame_set(f)
    digests = []
    original = binding_store.rest_fingerprint
    monkeypatch.setattr(binding_store, "rest_fingerprint", lambda o: digests.append(o.name) or original(o))
    for f in range(4, 30):
        scene.frame_set(f)
    assert digests == []
    assert np.abs(evaluated_positions(obj) - rest_positions(obj)).max() > 0.05  # it fell
    obj.data.vertices[0].co.x += 0.05
    scene.frame_set(30)
    assert digests == [obj.name]  # the edited mesh is digested again, once
    assert "changed since binding; press Rebind" in driver.status(obj)
    np.testing.assert_array_equal(evaluated_positions(obj), rest_positions(obj))


def test_a_jump_visits_each_earlier_frame_once_for_every_body(scene):
    """Two balls under a keyframed collider: jumping from frame 1 to 12 reads frames 2-12 in one
    visit each for both (the frame handler sees each visited frame once), then steps both."""
    import bpy
    from tetrig.runtime.common import scene_inputs

    a, b = ball(bpy, "A", -1.5), ball(bpy, "B", 1.5)
    bpy.ops.mesh.primitive_plane_add(size=8.0, location=(0.0, 0.0, 0.2))
    plane = bpy.context.active_object
    plane.modifiers.new("Collision", "COLLISION")
    plane.keyframe_insert("location", frame=1)
    plane.location.z = 0.0
    plane.keyframe_insert("location", frame=12)
    scene.frame_set(1)
    visits = []

    def count(scene_, _depsgraph=None):
        if scene_inputs.sampling():
            visits.append(scene_.frame_current)

    bpy.app.handlers.frame_change_post.append(count)
    try:
        scene.frame_set(12)
    finally:
        bpy.app.handlers.frame_change_post.remove(count)
    assert sorted(visits) == list(range(2, 12)) + [12]  # 2..11, then back to 12 once
    for obj in (a, b):
        assert np.abs(evaluated_positions(obj) - rest_positions(obj)).max() > 0.01
