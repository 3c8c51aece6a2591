"""Export formats and fingerprints of the engine (no Blender): PC2, animation JSON, bake keys."""

import dataclasses
import json
import struct
from dataclasses import dataclass

import numpy as np
import pytest

from tetrig_addon.formats import animation_json, pc2
from tetrig_addon.errors import TetRigInputError
from tetrig_addon.fingerprint import OMIT_AT, fingerprint
from tetrig_addon.solver import INTEGRATOR_EULER, SimSettings


def test_pc2_layout_is_the_published_one(tmp_path):
    rng = np.random.default_rng(1)
    positions = rng.normal(size=(5, 7, 3)).astype(np.float32)
    path = tmp_path / "a.pc2"
    pc2.write(path, positions, start_frame=3, sample_rate=1.0)
    raw = path.read_bytes()
    assert len(raw) == 32 + 5 * 7 * 3 * 4
    signature, version, points, start, rate, samples = struct.unpack("<12siiffi", raw[:32])
    assert (signature, version, points, start, rate, samples) == (b"POINTCACHE2\0", 1, 7, 3.0, 1.0, 5)
    assert np.array_equal(np.frombuffer(raw[32:], "<f4").reshape(5, 7, 3), positions)
    back = pc2.read(path)
    assert back.start_frame == 3.0 and back.sample_rate == 1.0 and back.sample_count == 5
    assert back.point_count == 7 and np.array_equal(back.positions, positions)


@pytest.mark.parametrize("positions, match", [
    (np.zeros((0, 4, 3)), "at least one"),
    (np.zeros((2, 4)), "shape"),
    (np.full((1, 2, 3), np.nan), "finite"),
])
def test_pc2_refuses_bad_input(tmp_path, positions, match):
    with pytest.raises(TetRigInputError, match=match):
        pc2.write(tmp_path / "x.pc2", positions, start_frame=1)


def test_pc2_reader_refuses_other_and_truncated_files(tmp_path):
    other = tmp_path / "other.pc2"
    other.write_bytes(b"not a cache at all, really not")
    with pytest.raises(TetRigInputError, match="not a PC2"):
        pc2.read(other)
    cut = tmp_path / "cut.pc2"
    pc2.write(cut, np.zeros((3, 4, 3)), start_frame=1)
    cut.write_bytes(cut.read_bytes()[:-4])
    with pytest.raises(TetRigInputError, match="truncated"):
        pc2.read(cut)


def test_animation_json_schema_and_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    cps = rng.normal(size=(4, 6, 3)).astype(np.float32)
    data = animation_json.AnimationData(frame_start=10, fps=24.0, control_points=cps)
    path = tmp_path / "anim.json"
    animation_json.write(path, data)
    raw = json.loads(path.read_text())
    assert raw["format"] == "tetrig-animation" and raw["version"] == 1
    assert (raw["frame_start"], raw["frame_end"], raw["fps"]) == (10, 13, 24.0)
    assert np.asarray(raw["control_points"]).shape == (4, 6, 3)
    back = animation_json.read(path)
    assert back.frame_start == 10 and back.frame_end == 13 and back.fps == 24.0
    assert np.array_equal(back.control_points, cps.astype(np.float64))  # float32 widens exactly


def test_animation_json_reader_checks_frame_count(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": "tetrig-animation", "version": 1, "frame_start": 1,
                                "frame_end": 5, "fps": 24, "control_points": [[[0, 0, 0]]]}))
    with pytest.raises(TetRigInputError, match="frame_end"):
        animation_json.read(path)


@dataclass(frozen=True)
class _Thing:
    a: float
    b: tuple


def test_fingerprint_is_stable_and_sensitive():
    key = (("bind", b"\x00\x01", 1000.0, "Pin", 1.0, 42), SimSettings(), 1 / 24, 1)
    # a literal: the digest must never change between runs, machines or NumPy versions
    assert fingerprint(key) == fingerprint((("bind", b"\x00\x01", 1000.0, "Pin", 1.0, 42), SimSettings(),
                                            1 / 24, 1))
    assert len(fingerprint(key)) == 64
    assert fingerprint(key) != fingerprint((key[0], SimSettings(damping=2.0), key[2], key[3]))
    assert fingerprint(1) != fingerprint(1.0)
    assert fingerprint(np.float64(0.5)) == fingerprint(0.5) == fingerprint(np.float32(0.5))
    assert fingerprint(np.arange(3)) != fingerprint(np.arange(3).astype(np.int32))
    assert fingerprint(_Thing(1.0, (None, True))) != fingerprint(_Thing(1.0, (None, False)))
    assert fingerprint({"b": 1, "a": 2}) == fingerprint({"a": 2, "b": 1})
    with pytest.raises(TypeError):
        fingerprint(object())


def test_fingerprint_known_value():
    # Pins the encoding: if this changes, every bake in every saved file reads as outdated (then
    # bump ENCODING_VERSION on purpose and update this value).
    assert fingerprint((1, 2.5, "x", None, b"\x00", (True,))) == \
        "278e9ba1a4e96454f2cad11001a96ed77d6007ef64fd29bd4e250c7c9a4e5e50"


def test_settings_added_later_leave_old_fingerprints_alone():
    """``SimSettings.global_iterations`` and ``integrator`` came after bakes were stored: at the
    values that step as before they existed (0 and implicit Euler, no longer the defaults) the
    digest is the one main gave before (values computed at 03f12f0), so old bakes stay current; any
    other value changes it."""
    before = dict(global_iterations=0, integrator=INTEGRATOR_EULER)
    assert fingerprint(SimSettings(**before)) == "1aec4bd9b57b448b2620cd657ba3c09e24348337940e0c651de5d40876cad573"
    assert fingerprint(SimSettings(mode="CONTINUUM", ground_height=0.0, **before)) == \
        "c1602d8cc37c46ffee8c65c340f25fe71584ae60c6b1457225ce9938e542c557"
    assert fingerprint(SimSettings()) != fingerprint(SimSettings(**before))  # today's defaults
    assert fingerprint(SimSettings(global_iterations=1, integrator=INTEGRATOR_EULER)) != \
        fingerprint(SimSettings(**before))
    assert fingerprint(SimSettings(global_iterations=0)) != fingerprint(SimSettings(**before))


def _settings_class(later: bool) -> type:
    """A settings class named "Settings", with the field ``b`` (added later: default 3, and 0
    simulates as before it existed) when ``later``."""
    fields: list = [("a", float)]
    if later:
        fields.append(("b", int, dataclasses.field(default=3, metadata={OMIT_AT: 0})))
    return dataclasses.make_dataclass("Settings", fields, frozen=True)


def test_a_field_added_later_is_left_out_at_its_old_value_not_at_its_default():
    """A bake made before ``b`` existed simulated as b = 0: that value leaves the digest as it was,
    and the default (3) does not, or the old bake would read as current under the new default."""
    before, later = _settings_class(False), _settings_class(True)
    assert fingerprint(later(1.0, 0)) == fingerprint(before(1.0))
    assert fingerprint(later(1.0)) != fingerprint(before(1.0))
    assert fingerprint(later(1.0, 2)) != fingerprint(later(1.0))
