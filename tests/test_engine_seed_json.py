"""The seed's JSON format round-trips exactly (no Blender)."""

import json

import numpy as np
import pytest

from tetrig_addon.formats import seed_json
from tetrig_addon.errors import TetRigInputError


def test_round_trip_exact(tmp_path):
    rng = np.random.default_rng(0)
    data = seed_json.SeedData(bones_rest=rng.normal(size=(7, 3)), tets=np.array([[0, 1, 2, 3], [1, 2, 3, 4]]),
                              vertex_bones=rng.integers(0, 7, (5, 4)), weights=rng.random((5, 4)))
    path = tmp_path / "rig.json"
    seed_json.write(path, data)
    raw = json.loads(path.read_text())
    assert sorted(raw) == sorted(seed_json.KEYS)
    back = seed_json.read(path)
    for key in seed_json.KEYS:
        assert np.array_equal(getattr(back, key), getattr(data, key))


def test_missing_key(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"bones_rest": []}')
    with pytest.raises(TetRigInputError, match="missing"):
        seed_json.read(path)
